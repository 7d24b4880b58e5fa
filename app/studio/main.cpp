// tmmu-studio: everything lives in tmmu_studio_lib (studio_app.h) so tests run the same code.
#include "studio_app.h"
#include "studio_options.h"

#include <QApplication>

int main(int argc, char** argv) {
    QStringList args;
    for (int i = 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    // --help, --version and usage errors need no display: answer them before connecting to one.
    tmmu::studio::StudioOptions options;
    if (auto code = tmmu::studio::answer_command_line(args, options, true)) return *code;
    QApplication app(argc, argv);
    return tmmu::studio::run_studio(QApplication::arguments().mid(1));
}
