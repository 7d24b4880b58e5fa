#include "studio_options.h"

#include "core/failure.h"
#include "plan/strategy.h"
#include "planning_controls.h"

#include <QCommandLineParser>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace tmmu::studio {
namespace {

// QCommandLineParser wants the program name first.
const QString kProgram = QStringLiteral("tmmu-studio");

struct Parser {
    QCommandLineParser parser;
    QCommandLineOption mode{QStringLiteral("mode"),
                            QStringLiteral("Planning mode: inference, forward or training."),
                            QStringLiteral("M")};
    QCommandLineOption batch{QStringLiteral("batch"),
                             QStringLiteral("Batch size of a transformer config (default 8)."),
                             QStringLiteral("N")};
    QCommandLineOption seq{
        QStringLiteral("seq"),
        QStringLiteral("Sequence length of a transformer config (default 1024)."),
        QStringLiteral("N")};
    QCommandLineOption strategy{QStringLiteral("strategy"), QString(), QStringLiteral("S")};
    QCommandLineOption align{
        QStringLiteral("align"),
        QStringLiteral("Alignment of every arena in bytes, unless --arena gives its own (default "
                       "128; 1 for offset-assignment CSVs)."),
        QStringLiteral("N")};
    QCommandLineOption arena{
        QStringLiteral("arena"),
        QStringLiteral("An arena's capacity, alignment and/or page size, e.g. activations=8GiB, "
                       "activations=8GiB:256, parameters=:4KiB or activations=8GiB::2MiB "
                       "(repeatable, once per arena)."),
        QStringLiteral("NAME=CAPACITY[:ALIGN[:PAGE]]")};
    QCommandLineOption route{
        QStringLiteral("route"),
        QStringLiteral("Send a role's tensors to an arena, e.g. workspace=scratch; a new name "
                       "makes a new arena (repeatable, once per role)."),
        QStringLiteral("ROLE=ARENA")};
    QCommandLineOption memoryBudget{
        QStringLiteral("memory-budget"),
        QStringLiteral("The most bytes all arenas may commit together (each its peak, in whole "
                       "pages where it is paged), e.g. 12GiB: a plan over it "
                       "fails with MEMORY_BUDGET_EXCEEDED."),
        QStringLiteral("SIZE")};
    QCommandLineOption worldSize{
        QStringLiteral("world-size"),
        QStringLiteral("Ranks of a distributed run (default 1): the plan is for one of them."),
        QStringLiteral("N")};
    QCommandLineOption rank{QStringLiteral("rank"),
                            QStringLiteral("The rank to plan, 0 to N-1 (default 0)."),
                            QStringLiteral("R")};
    QCommandLineOption shard{
        QStringLiteral("shard"),
        QStringLiteral(
            "Roles split across the ranks (parameter, activation, gradient, optimizer_state; "
            "comma-separated), as tmmu plan --shard."),
        QStringLiteral("ROLES")};
    QCommandLineOption dim{
        QStringLiteral("dim"),
        QStringLiteral("ONNX models: a symbolic dimension's value; IR graphs: a dynamic "
                       "dimension's value inside its shape envelope (repeatable)."),
        QStringLiteral("NAME=VALUE")};
    QCommandLineOption inputShape{
        QStringLiteral("input-shape"),
        QStringLiteral("ONNX models: an input's whole shape, e.g. x=1x3x640x640 (repeatable)."),
        QStringLiteral("INPUT=AxB")};
    QCommandLineOption noAliasing{
        QStringLiteral("no-aliasing"),
        QStringLiteral("ONNX models: give views and elementwise results bytes of their own "
                       "instead of aliasing them as ONNX runtimes do.")};
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QStringLiteral("Render the main window to a PNG and exit (records nothing; with "
                       "--sessions it lists that database)."),
        QStringLiteral("FILE")};
    QCommandLineOption screenshotSize{
        QStringLiteral("screenshot-size"),
        QStringLiteral("The window's size for --screenshot (default 1600x1000)."),
        QStringLiteral("WxH")};
    QCommandLineOption screenshotPanel{QStringLiteral("screenshot-panel"),
                                       QString(), // panel_names(), set in the constructor
                                       QStringLiteral("NAME")};
    QCommandLineOption step{
        QStringLiteral("step"),
        QStringLiteral("The step shown first (default: the middle of the plan)."),
        QStringLiteral("N")};
    QCommandLineOption theme{
        QStringLiteral("theme"),
        QStringLiteral("Colours for this run: system, light or dark (default: the one chosen "
                       "in View > Theme)."),
        QStringLiteral("T")};
    QCommandLineOption sessions{
        QStringLiteral("sessions"),
        QStringLiteral("The sessions database planning runs are recorded in (default "
                       "$XDG_DATA_HOME/tmmu/sessions.db, else ~/.local/share/tmmu/sessions.db)."),
        QStringLiteral("PATH")};
    QCommandLineOption openSession{
        QStringLiteral("open-session"),
        QStringLiteral("Show recorded session ID (tmmu session list) as it was stored, without "
                       "planning again (not --session: Qt takes that one for desktop session "
                       "management)."),
        QStringLiteral("ID")};
    QCommandLineOption help{{QStringLiteral("h"), QStringLiteral("help")},
                            QStringLiteral("Show this help and exit.")};
    QCommandLineOption version{QStringLiteral("version"),
                               QStringLiteral("Show the version and exit.")};

    Parser() {
        QStringList names;
        for (const OffsetStrategy* s : all_strategies())
            names << QString::fromUtf8(s->name().data(), qsizetype(s->name().size()));
        strategy.setDescription(QStringLiteral("Offset strategy: %1 (default auto).")
                                    .arg(names.join(QStringLiteral(", "))));
        parser.setApplicationDescription(
            QStringLiteral("TMMU Studio: see how a model uses memory."));
        screenshotPanel.setDescription(
            QStringLiteral("Render only this panel for --screenshot: %1 (default window).")
                .arg(panel_names().join(QStringLiteral(", "))));
        parser.addOptions({mode,
                           batch,
                           seq,
                           strategy,
                           align,
                           arena,
                           route,
                           memoryBudget,
                           worldSize,
                           rank,
                           shard,
                           dim,
                           inputShape,
                           noAliasing,
                           step,
                           theme,
                           screenshot,
                           screenshotSize,
                           screenshotPanel,
                           sessions,
                           openSession,
                           help,
                           version});
        parser.addPositionalArgument(
            QStringLiteral("MODEL"),
            QStringLiteral(
                "Native IR JSON, an ONNX model, a GPT-2, Llama, Mistral or Qwen2 config.json or an "
                "offset-assignment CSV "
                "(default: the bundled GPT-2 small config, training, batch 8, seq "
                "1024)."),
            QStringLiteral("[MODEL]"));
    }
};

// Options QGuiApplication and QApplication take out of the arguments (one or two dashes).
bool isQtOption(const QString& arg) {
    static const QStringList kQtOptions{
        QStringLiteral("platform"),        QStringLiteral("platformpluginpath"),
        QStringLiteral("platformtheme"),   QStringLiteral("plugin"),
        QStringLiteral("qwindowgeometry"), QStringLiteral("qwindowicon"),
        QStringLiteral("qwindowtitle"),    QStringLiteral("reverse"),
        QStringLiteral("session"),         QStringLiteral("style"),
        QStringLiteral("stylesheet"),      QStringLiteral("widgetcount"),
        QStringLiteral("display"),         QStringLiteral("geometry"),
        QStringLiteral("qmljsdebugger")};
    if (!arg.startsWith('-')) return false;
    QString name = arg.mid(arg.startsWith(QStringLiteral("--")) ? 2 : 1).section('=', 0, 0);
    return kQtOptions.contains(name);
}

std::string text(const QString& s) {
    return s.toStdString();
}

// A batch or seq the toolbar holds: one it clamped would re-plan other shapes than those shown.
uint64_t toolbarShape(const std::string& value, const char* option) {
    const uint64_t v = app::parse_positive(value, option);
    if (v > uint64_t(PlanningControls::kMaxShape))
        fail(FailureCode::InvalidArgument, option,
             fmt::format("{} is more than the studio's toolbar holds ({}); tmmu plan takes it", v,
                         PlanningControls::kMaxShape));
    return v;
}

void readSettings(const Parser& p, PlanSettings& s) {
    const QCommandLineParser& q = p.parser;
    if (q.isSet(p.mode)) s.mode = app::parse_mode_choice(text(q.value(p.mode)), "--mode");
    if (q.isSet(p.batch)) s.batch = toolbarShape(text(q.value(p.batch)), "--batch");
    if (q.isSet(p.seq)) s.seq = toolbarShape(text(q.value(p.seq)), "--seq");
    if (q.isSet(p.strategy))
        s.strategy = app::parse_strategy(text(q.value(p.strategy)), "--strategy");
    if (q.isSet(p.align)) s.alignment = app::parse_alignment(text(q.value(p.align)), "--align");
    for (const QString& v : q.values(p.arena))
        s.arenas.push_back(app::parse_arena_setting(text(v), "--arena"));
    if (q.isSet(p.memoryBudget))
        s.memory_budget =
            app::parse_memory_budget(text(q.value(p.memoryBudget)), "--memory-budget");
    for (const QString& v : q.values(p.route))
        s.routes.push_back(app::parse_route(text(v), "--route"));
    if (q.isSet(p.worldSize))
        s.shard.world_size = app::parse_world_size(text(q.value(p.worldSize)), "--world-size");
    if (q.isSet(p.rank)) s.shard.rank = app::parse_rank(text(q.value(p.rank)), "--rank");
    if (q.isSet(p.shard)) s.shard.roles = app::parse_shard_roles(text(q.value(p.shard)), "--shard");
    for (const QString& v : q.values(p.dim))
        s.bindings.dims.insert(app::parse_dim_binding(text(v), "--dim"));
    for (const QString& v : q.values(p.inputShape))
        s.bindings.input_shapes.insert(app::parse_input_shape(text(v), "--input-shape"));
    s.bindings.aliasing = !q.isSet(p.noAliasing);
}

} // namespace

QString studio_usage() {
    Parser p;
    // Qt names the program after argv[0] (or "<executable_name>" before QCoreApplication
    // exists): name it the same way in both cases.
    QString help = p.parser.helpText();
    return QStringLiteral("usage: %1 [options] [MODEL]").arg(kProgram) +
           help.mid(help.indexOf('\n'));
}

StudioOptions parse_studio_options(const QStringList& args) {
    Parser p;
    if (!p.parser.parse(QStringList{kProgram} + args))
        fail(FailureCode::InvalidArgument, "command line", text(p.parser.errorText()));
    const QCommandLineParser& q = p.parser;
    StudioOptions o;
    o.help = q.isSet(p.help);
    o.version = q.isSet(p.version);
    readSettings(p, o.settings);
    o.screenshot = q.value(p.screenshot);
    if (q.isSet(p.screenshotSize)) {
        if (o.screenshot.isEmpty())
            fail(FailureCode::InvalidArgument, "--screenshot-size", "applies to --screenshot");
        const QStringList wh = q.value(p.screenshotSize).split(QLatin1Char('x'));
        bool okW = false, okH = false;
        const int w = wh.size() == 2 ? wh[0].toInt(&okW) : 0;
        const int h = wh.size() == 2 ? wh[1].toInt(&okH) : 0;
        if (!okW || !okH || w < 320 || h < 240 || w > 7680 || h > 4320)
            fail(FailureCode::InvalidArgument, "--screenshot-size",
                 "expects WIDTHxHEIGHT from 320x240 to 7680x4320, got '" +
                     text(q.value(p.screenshotSize)) + "'");
        o.screenshotSize = QSize(w, h);
    }
    if (q.isSet(p.screenshotPanel)) {
        if (o.screenshot.isEmpty())
            fail(FailureCode::InvalidArgument, "--screenshot-panel", "applies to --screenshot");
        o.screenshotPanel = q.value(p.screenshotPanel);
        if (!panel_names().contains(o.screenshotPanel))
            fail(FailureCode::InvalidArgument, "--screenshot-panel",
                 "expects one of " + text(panel_names().join(QStringLiteral(", "))) + ", got '" +
                     text(o.screenshotPanel) + "'");
    }
    if (q.isSet(p.step)) {
        bool ok = false;
        o.step = q.value(p.step).toULongLong(&ok);
        if (!ok)
            fail(FailureCode::InvalidArgument, "--step",
                 "'" + text(q.value(p.step)) + "' is not a step number (0, 1, ...)");
    }
    if (q.isSet(p.theme)) {
        o.theme = theme_from_name(q.value(p.theme));
        if (!o.theme)
            fail(FailureCode::InvalidArgument, "--theme",
                 "expects system, light or dark, got '" + text(q.value(p.theme)) + "'");
    }
    o.sessions = q.value(p.sessions);
    if (q.isSet(p.openSession))
        o.session = qint64(app::parse_positive(text(q.value(p.openSession)), "--open-session"));
    const QStringList models = q.positionalArguments();
    if (models.size() > 1)
        fail(FailureCode::InvalidArgument, text(models[1]),
             "more than one model given; tmmu-studio opens one model");
    if (!models.isEmpty()) o.model = models.front();
    if (o.session && !o.model.isEmpty())
        fail(FailureCode::InvalidArgument, "--open-session",
             "give a model or a recorded session, not both");
    return o;
}

std::optional<int> answer_command_line(const QStringList& args, StudioOptions& o, bool beforeQt) {
    try {
        o = parse_studio_options(args);
    } catch (const Failure& f) {
        // Qt's own options are only known to QApplication: let it take them, then run_studio
        // parses what is left and reports errors.
        if (beforeQt && std::any_of(args.begin(), args.end(), isQtOption)) return std::nullopt;
        std::fprintf(stderr, "tmmu-studio: %s\n%s", f.what(), qPrintable(studio_usage()));
        return 2;
    }
    if (o.help) {
        std::fputs(qPrintable(studio_usage()), stdout);
        return 0;
    }
    if (o.version) {
        std::printf("tmmu-studio %s\n", TMMU_VERSION);
        return 0;
    }
    return std::nullopt;
}

QStringList panel_names() {
    return QStringLiteral("window arena-layout tensor-table tensor-details memory strategy slots "
                          "live-ranges sessions session-compare run dispatch parity instructions "
                          "token-graph lazy-state run-comparison lazy-traces")
        .split(QLatin1Char(' '));
}

QString resource_dir() {
    return QString::fromStdString(app::resource_dir());
}

QString default_model_path() {
    return QString::fromStdString(app::default_model_path());
}

} // namespace tmmu::studio
