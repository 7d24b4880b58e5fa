#include "studio_options.h"

#include "core/failure.h"
#include "plan/strategy.h"

#include <QDir>
#include <QFileInfo>

#include <cstdlib>
#include <fmt/format.h>

namespace tmmu::studio {
namespace {

uint64_t parse_count(const QString& text, const char* what) {
    bool ok = false;
    qulonglong v = text.toULongLong(&ok);
    if (!ok || v == 0)
        fail(FailureCode::InvalidArgument, what,
             fmt::format("'{}' is not a positive integer", text.toStdString()));
    return v;
}

} // namespace

QString studio_usage() {
    QStringList strategies;
    for (const OffsetStrategy* s : all_strategies())
        strategies << QString::fromUtf8(s->name().data(), qsizetype(s->name().size()));
    return QStringLiteral(
               "usage: tmmu-studio [MODEL] [--mode inference|forward|training] [--batch N] "
               "[--seq N]\n"
               "                   [--strategy %1] [--screenshot FILE] [--sessions PATH]\n"
               "                   [--open-session ID]\n"
               "MODEL: native IR JSON, a GPT-2/Llama config.json or an offset-assignment CSV\n"
               "       (default: the bundled GPT-2 small config, training, batch 8, seq 1024).\n"
               "--screenshot FILE renders the main window to a PNG and exits (it records\n"
               "                  nothing; with --sessions it lists that database).\n"
               "--sessions PATH   the sessions database planning runs are recorded in\n"
               "                  (default $XDG_DATA_HOME/tmmu/sessions.db, else\n"
               "                  ~/.local/share/tmmu/sessions.db).\n"
               "--open-session ID shows recorded session ID (tmmu session list) as it was\n"
               "                  stored, without planning again (not --session: Qt takes\n"
               "                  that one for desktop session management).\n")
        .arg(strategies.join('|'));
}

StudioOptions parse_studio_options(const QStringList& args) {
    StudioOptions o;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString& arg = args[i];
        auto value = [&]() -> QString {
            if (i + 1 >= args.size())
                fail(FailureCode::InvalidArgument, arg.toStdString(), "expects a value");
            return args[++i];
        };
        if (arg == "--help" || arg == "-h") {
            o.help = true;
        } else if (arg == "--mode") {
            QString m = value();
            auto mode = parse_mode(m.toStdString());
            if (!mode)
                fail(FailureCode::InvalidArgument, "--mode",
                     fmt::format("unknown mode '{}'; expected inference, forward or training",
                                 m.toStdString()));
            o.settings.mode = *mode;
        } else if (arg == "--batch") {
            o.settings.batch = parse_count(value(), "--batch");
        } else if (arg == "--seq") {
            o.settings.seq = parse_count(value(), "--seq");
        } else if (arg == "--strategy") {
            std::string s = value().toStdString();
            if (!find_strategy(s))
                fail(FailureCode::InvalidArgument, "--strategy",
                     fmt::format("unknown strategy '{}'; see tmmu strategies", s));
            o.settings.strategy = s;
        } else if (arg == "--screenshot") {
            o.screenshot = value();
        } else if (arg == "--sessions") {
            o.sessions = value();
        } else if (arg == "--open-session") {
            o.session = qint64(parse_count(value(), "--open-session"));
        } else if (arg.startsWith('-') && arg.size() > 1) {
            fail(FailureCode::InvalidArgument, arg.toStdString(), "unknown option");
        } else if (o.model.isEmpty()) {
            o.model = arg;
        } else {
            fail(FailureCode::InvalidArgument, arg.toStdString(),
                 "more than one model given; tmmu-studio opens one model");
        }
    }
    if (o.session && !o.model.isEmpty())
        fail(FailureCode::InvalidArgument, "--open-session",
             "give a model or a recorded session, not both");
    return o;
}

QString resource_dir() {
    if (const char* env = std::getenv("TMMU_RESOURCES")) return QString::fromLocal8Bit(env);
    if (QFileInfo::exists(QStringLiteral(TMMU_SOURCE_RESOURCES)))
        return QStringLiteral(TMMU_SOURCE_RESOURCES);
    return QStringLiteral(TMMU_INSTALL_RESOURCES);
}

QString default_model_path() {
    return resource_dir() + QStringLiteral("/models/gpt2-small.json");
}

} // namespace tmmu::studio
