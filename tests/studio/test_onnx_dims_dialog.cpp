// The dims dialog (issue 15) driven headless on models of Debian's libonnx-testdata: a model with
// an unbound dimension opens it instead of a failure box, a bad entry keeps it open with the
// message, OK plans with the bindings (and the toolbar keeps them for a re-plan), Plan > ONNX
// dimensions re-binds the model on screen, a recorded run's replay says whether the model file
// changed, and the command line takes the same bindings.
// TMMU_SCREENSHOT_DIR keeps a picture of the dialog for a look. Built only with the ONNX loader.
#include "context/plan_context.h"
#include "core/failure.h"
#include "dims_dialog.h"
#include "iterations_dialog.h"
#include "main_window.h"
#include "onnx_models.h"
#include "planning_controls.h"
#include "session_actions.h"
#include "session_store.h"
#include "studio_options.h"
#include "studio_test_util.h"
#include "test_support.h"

#include <QAction>
#include <QCheckBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>

using namespace tmmu;
using namespace tmmu::studio;
using namespace tmmu::studio::testing;

namespace {

const QString kNode = QStringLiteral("/usr/share/libonnx-testdata/data/node/");
// Its window length is data-dependent: shape inference leaves the symbolic dim unk__0.
const QString kUnbound = kNode + "test_blackmanwindow_expanded/model.onnx";
// Loads without bindings; its nodes have attributes.
const QString kBound = kNode + "test_layer_normalization_4d_axis1_expanded/model.onnx";

bool failureBoxShown(MainWindow& w) {
    auto* box = w.findChild<QMessageBox*>(QStringLiteral("failureBox"));
    return box && box->isVisible();
}

// Every tensor dim the loader bound from `name`, as (tensor, value) pairs.
std::vector<int64_t> valuesBoundFrom(const LoadedModel& m, const std::string& name) {
    std::vector<int64_t> values;
    const auto& names = m.annotations.dim_names;
    for (size_t t = 0; t < names.size(); ++t)
        for (size_t d = 0; d < names[t].size(); ++d)
            if (names[t][d] == name) values.push_back(m.graph->tensors[t].shape[d]);
    return values;
}

void saveForALook(QWidget* widget, const QString& name) {
    if (!qEnvironmentVariableIsSet("TMMU_SCREENSHOT_DIR")) return;
    QVERIFY(widget->grab().save(qEnvironmentVariable("TMMU_SCREENSHOT_DIR") + '/' + name));
}

} // namespace

class TestOnnxDimsDialog : public QObject {
    Q_OBJECT
    QTemporaryDir settingsDir_;

  private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kUnbound) || !QFileInfo::exists(kBound))
            QSKIP("libonnx-testdata is not installed (/usr/share/libonnx-testdata): the README's "
                  "test command installs it");
        isolateSettings(settingsDir_.path());
    }

    void unboundDimensionAsksAndPlansWithTheAnswer() {
        MainWindow w;
        w.setPersistSettings(false);
        w.resize(1200, 800);
        w.show();
        QVERIFY(!w.openModelSync(kUnbound, smallSettings()));
        QVERIFY2(w.lastFailure().startsWith(QStringLiteral("UNBOUND_DIMENSION")),
                 qPrintable(w.lastFailure()));
        QVERIFY(waitIdle(w)); // the dialog reads the model's inputs on the worker
        DimsDialog* dialog = w.dimsDialog();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(!failureBoxShown(w)); // the dialog answers the failure, not a box
        auto* problem = dialog->findChild<QPlainTextEdit*>(QStringLiteral("dimsProblem"));
        QVERIFY(problem && problem->toPlainText().contains(QStringLiteral("unk__0")));
        QLineEdit* dim = dialog->dimField(QStringLiteral("unk__0"));
        QVERIFY(dim);

        // A bad entry keeps the dialog open, says which field and why, and plans nothing.
        dim->setText(QStringLiteral("0"));
        dialog->accept();
        QVERIFY(dialog->isVisible());
        QVERIFY(dialog->errorLabel()->isVisibleTo(dialog));
        QVERIFY2(dialog->errorLabel()->text().contains(QStringLiteral("'unk__0'")) &&
                     dialog->errorLabel()->text().contains(QStringLiteral("positive integer")),
                 qPrintable(dialog->errorLabel()->text()));
        QVERIFY(!w.jobs()->busy());
        QCOMPARE(w.context()->plan(), nullptr);
        saveForALook(dialog, QStringLiteral("ui-shot-dims-dialog-error.png"));

        dim->setText(QStringLiteral("12"));
        QVERIFY(!dialog->errorLabel()->isVisibleTo(dialog)); // editing clears the message
        dialog->aliasingBox()->setChecked(false);
        saveForALook(dialog, QStringLiteral("ui-shot-dims-dialog.png"));
        QVERIFY(waitForPlan(w, [&] { dialog->accept(); }));
        QVERIFY(waitIdle(w));
        const LoadedModel* model = w.context()->model();
        QVERIFY(model && model->kind == ModelKind::Onnx);
        const std::vector<int64_t> bound = valuesBoundFrom(*model, "unk__0");
        QVERIFY(!bound.empty());
        for (int64_t v : bound)
            QCOMPARE(v, int64_t(12));
        QVERIFY(std::any_of(model->annotations.notes.begin(), model->annotations.notes.end(),
                            [](const std::string& n) { return n.starts_with("aliasing is off"); }));
        // The toolbar keeps the bindings: a re-plan neither asks again nor loses them.
        const DimBindings kept = w.controls()->settings().bindings;
        QCOMPARE(kept.dims.at("unk__0"), int64_t(12));
        QVERIFY(!kept.aliasing);
        QVERIFY(w.controls()->dimsButton()->isEnabled());
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QVERIFY(waitIdle(w));
        QTRY_COMPARE(w.dimsDialog(), nullptr); // closed on OK, and not asked again
        QCOMPARE(valuesBoundFrom(*w.context()->model(), "unk__0").front(), int64_t(12));
    }

    void badInputShapeIsRefusedWithItsField() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(!w.openModelSync(kUnbound, smallSettings()));
        QVERIFY(waitIdle(w));
        DimsDialog* dialog = w.dimsDialog();
        QVERIFY(dialog);
        QVERIFY(!dialog->findChildren<QLineEdit*>().isEmpty());
        // Every declared input has a whole-shape field; a shape with a zero dim is refused.
        QLineEdit* shape = nullptr;
        for (QLineEdit* field : dialog->findChildren<QLineEdit*>())
            if (field->placeholderText().contains(QStringLiteral("whole shape"))) shape = field;
        QVERIFY(shape);
        shape->setText(QStringLiteral("4x0"));
        dialog->accept();
        QVERIFY(dialog->isVisible());
        QVERIFY2(dialog->errorLabel()->text().startsWith(QStringLiteral("shape of input")),
                 qPrintable(dialog->errorLabel()->text()));
        dialog->reject();
        QCOMPARE(w.context()->plan(), nullptr);
    }

    void menuRebindsTheModelOnScreen() {
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY2(w.openModelSync(kBound, smallSettings()), qPrintable(w.lastFailure()));
        QVERIFY(waitIdle(w));
        // No dimension bound by name: nothing to run over iterations.
        QVERIFY(!findAction(w, "Run &iterations…")->isEnabled());
        const std::shared_ptr<const Plan> first = w.context()->planPtr();
        w.editBindings();
        QVERIFY(waitIdle(w));
        DimsDialog* dialog = w.dimsDialog();
        QVERIFY(dialog);
        QVERIFY(dialog->findChild<QPlainTextEdit*>(QStringLiteral("dimsProblem")) == nullptr);
        QVERIFY(dialog->aliasingBox()->isChecked());
        dialog->aliasingBox()->setChecked(false);
        QVERIFY(waitForPlan(w, [&] { dialog->accept(); }));
        QVERIFY(waitIdle(w));
        // Loaded again (the bindings shape the graph), not just re-planned.
        QVERIFY(w.context()->planPtr() != first);
        const auto& notes = w.context()->model()->annotations.notes;
        QVERIFY(std::any_of(notes.begin(), notes.end(),
                            [](const std::string& n) { return n.starts_with("aliasing is off"); }));
    }

    // Plan > Run iterations on an ONNX model: the dimensions bound by name become dynamic for
    // the run (as tmmu plan --dim --iteration); the toolbar then holds the last binding.
    void boundDimensionsRunOverIterations() {
        const QString model = settingsDir_.filePath("relu.onnx");
        test::write_symbolic_relu(model.toStdString());
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(w.sessions()->openStore(settingsDir_.filePath("iterations.db")));
        PlanSettings settings = smallSettings();
        settings.mode = Mode::Inference;
        settings.bindings.dims = {{"N", 2}};
        QVERIFY2(w.openModelSync(model, settings), qPrintable(w.lastFailure()));
        QAction* action = findAction(w, "Run &iterations…");
        QVERIFY(action && action->isEnabled());
        w.runIterations();
        IterationsDialog* d = w.iterationsDialog();
        QVERIFY(d && d->isVisible());
        d->linesEdit()->setPlainText("M=3");
        d->accept();
        QVERIFY2(d->errorLabel()->text().contains("iteration 0: "),
                 qPrintable(d->errorLabel()->text()));
        d->linesEdit()->setPlainText("N=1\nN=8");
        QVERIFY(waitForPlan(w, [&] { d->accept(); }));
        QVERIFY(waitIdle(w));
        QCOMPARE(w.context()->plan()->dims, (DimBinding{{"N", 8}}));
        QCOMPARE(w.context()->model()->kind, ModelKind::Onnx);
        QVERIFY(w.controls()->settings().bindings.dims == (DimBinding{{"N", 8}}));
        // Again, past the first run's envelope: the model is loaded again for the run.
        w.resultBox()->close();
        w.runIterations();
        w.iterationsDialog()->linesEdit()->setPlainText("N=16");
        QVERIFY(waitForPlan(w, [&] { w.iterationsDialog()->accept(); }));
        QVERIFY(waitIdle(w));
        QVERIFY2(w.lastFailure().isEmpty(), qPrintable(w.lastFailure()));
        QCOMPARE(w.context()->plan()->dims, (DimBinding{{"N", 16}}));
        // Recorded as tmmu plan --dim N=8 --iteration N=16 records it: asked for at the first
        // plan's binding. Opened again, the toolbar holds the plan's (N=16), so a re-plan plans
        // what is shown.
        const qint64 id = w.sessions()->currentSession();
        const sessions::Session stored = w.sessions()->store()->load(id);
        QVERIFY(stored.input.iterations.has_value());
        QCOMPARE(stored.input.request.dims, (std::map<std::string, int64_t>{{"N", 8}}));
        const std::string shownHash = to_hex(w.context()->plan()->plan_hash);
        QVERIFY(waitForPlan(w, [&] { w.sessions()->openSession(id); }));
        QVERIFY(waitIdle(w));
        QVERIFY(w.controls()->settings().bindings.dims == (DimBinding{{"N", 16}}));
        QVERIFY(waitForPlan(w, [&] { w.replan(); }));
        QVERIFY(waitIdle(w));
        QCOMPARE(to_hex(w.context()->plan()->plan_hash), shownHash);
    }

    // With an IR graph of dynamic dimensions on screen, an ONNX model that fails unbound asks
    // for its own bindings; asked again from the menu, the ONNX dialog comes back, not the IR
    // graph's dimensions.
    void dimensionsFollowTheModelAskedAbout() {
        MainWindow w;
        w.setPersistSettings(false);
        PlanSettings settings = smallSettings();
        settings.mode = Mode::Inference;
        QVERIFY2(w.openModelSync(QStringLiteral(TMMU_SOURCE_DIR) +
                                     "/resources/models/examples/dynamic_seq.json",
                                 settings),
                 qPrintable(w.lastFailure()));
        QVERIFY(waitIdle(w));
        QVERIFY(!w.openModelSync(kUnbound, smallSettings()));
        QVERIFY(waitIdle(w));
        QVERIFY(w.dimsDialog());
        w.dimsDialog()->reject();
        QTRY_COMPARE(w.dimsDialog(), nullptr);
        w.editBindings();
        QVERIFY(waitIdle(w));
        QVERIFY(w.dimsDialog() && w.dimsDialog()->isVisible());
        QCOMPARE(w.envelopeDialog(), nullptr);
        QVERIFY(w.dimsDialog()->dimField(QStringLiteral("unk__0")));
    }

    // A run of a bound model is recorded with its bindings; the studio's replay says whether the
    // model file is still what was recorded.
    void replaySaysWhetherTheFileChanged() {
        QTemporaryDir dir;
        const QString model = dir.filePath(QStringLiteral("model.onnx"));
        QVERIFY(QFile::copy(kUnbound, model));
        MainWindow w;
        w.setPersistSettings(false);
        QVERIFY(w.sessions()->openStore(dir.filePath(QStringLiteral("sessions.db"))));
        PlanSettings settings = smallSettings();
        settings.bindings.dims = {{"unk__0", 12}};
        QVERIFY2(w.openModelSync(model, settings), qPrintable(w.lastFailure()));
        QVERIFY(waitIdle(w));
        const qint64 id = w.sessions()->currentSession();
        QVERIFY(id > 0);
        const sessions::Session stored = w.sessions()->store()->load(id);
        QVERIFY(stored.input.onnx);
        QCOMPARE(stored.input.request.dims, settings.bindings.dims);

        auto replay = [&] {
            QSignalSpy done(w.sessions(), &SessionActions::replayFinished);
            w.sessions()->replaySession(id);
            return done.wait(30000) && done.at(0).at(1).toBool(); // identical
        };
        QVERIFY(replay());
        QVERIFY2(w.sessions()->lastMessage().contains(QStringLiteral("unchanged since recording")),
                 qPrintable(w.sessions()->lastMessage()));
        QVERIFY(QFile::remove(model));
        QVERIFY(replay()); // the stored graph still replays
        QVERIFY2(w.sessions()->lastMessage().contains(QStringLiteral("is MISSING")),
                 qPrintable(w.sessions()->lastMessage()));
    }

    void commandLineTakesTheSameBindings() {
        StudioOptions o = parse_studio_options(
            {"m.onnx", "--dim", "N=2", "--input-shape", "x=1x3x8", "--no-aliasing"});
        QCOMPARE(o.settings.bindings.dims.at("N"), int64_t(2));
        QCOMPARE(o.settings.bindings.input_shapes.at("x"), (std::vector<int64_t>{1, 3, 8}));
        QVERIFY(!o.settings.bindings.aliasing);
        QVERIFY(o.settings.request().dims == o.settings.bindings.dims);
        QVERIFY(!o.settings.request().aliasing);
        QVERIFY(parse_studio_options({"m.onnx"}).settings.bindings.aliasing);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--dim", "N=0"}), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(parse_studio_options({"--input-shape", "x=1xx2"}),
                            FailureCode::InvalidArgument);
    }
};

QTEST_MAIN(TestOnnxDimsDialog)
#include "test_onnx_dims_dialog.moc"
