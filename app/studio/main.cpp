// tmmu-studio: everything lives in tmmu_studio_lib (studio_app.h) so tests run the same code.
#include "studio_app.h"

#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    return tmmu::studio::run_studio(QApplication::arguments().mid(1));
}
