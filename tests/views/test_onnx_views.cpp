// Real ONNX models of Debian's libonnx-testdata in the tensor table and details panel (issue 15):
// shapes name the symbolic dims they were bound from, the details show the producing node's
// attributes as the loader wrote them. Expectations come from the loaded model's annotations,
// never through the views. Built only with the ONNX loader.
#include "context/plan_context.h"
#include "models/tensor_table_model.h"
#include "panels/tensor_details_panel.h"
#include "panels/tensor_table_panel.h"
#include "source/model_source.h"

#include <QAbstractItemModelTester>
#include <QFileInfo>
#include <QtTest>

using namespace tmmu;
using namespace tmmu::views;
using TM = TensorTableModel;

namespace {

const QString kNode = QStringLiteral("/usr/share/libonnx-testdata/data/node/");

struct Shown {
    std::shared_ptr<const Plan> plan;
    std::shared_ptr<const LoadedModel> model;
};

Shown loadAndPlan(const QString& name, const ModelRequest& request) {
    auto model = std::make_shared<LoadedModel>(
        load_model((kNode + name + "/model.onnx").toStdString(), request));
    auto plan = std::make_shared<Plan>(plan_model(*model, request.mode, PlanOptions{}, {}));
    return {plan, model};
}

} // namespace

class TestOnnxViews : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        if (!QFileInfo::exists(kNode))
            QSKIP("libonnx-testdata is not installed (/usr/share/libonnx-testdata): the README's "
                  "test command installs it");
    }

    void shapesNameTheirSymbolicDims() {
        ModelRequest request;
        request.mode = Mode::Inference;
        request.dims = {{"unk__0", 16}};
        const Shown shown = loadAndPlan(QStringLiteral("test_blackmanwindow_expanded"), request);
        PlanContext ctx;
        ctx.setPlan(shown.plan, shown.model);
        TensorTableModel model(&ctx);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        int named = 0;
        const auto& dimNames = shown.model->annotations.dim_names;
        for (int row = 0; row < model.rowCount(); ++row) {
            const TensorIndex t = ctx.graphTensor(row);
            const bool bound =
                t < dimNames.size() &&
                std::find(dimNames[t].begin(), dimNames[t].end(), "unk__0") != dimNames[t].end();
            const QString shape = model.index(row, TM::ShapeColumn).data().toString();
            QCOMPARE(shape.contains(QStringLiteral("unk__0=16")), bound);
            named += bound;
            QVERIFY(!model.index(row, TM::OpColumn).data().toString().isEmpty());
        }
        QVERIFY2(named > 0, "no planned tensor has a dim bound from unk__0");
        if (qEnvironmentVariableIsSet("TMMU_SCREENSHOT_DIR")) { // the table, wide, for a look
            TensorTablePanel panel(&ctx);
            panel.resize(1100, 560);
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            QVERIFY(panel.grab().save(qEnvironmentVariable("TMMU_SCREENSHOT_DIR") +
                                      "/ui-shot-onnx-table.png"));
        }
    }

    void detailsShowTheProducersAttributes() {
        const Shown shown =
            loadAndPlan(QStringLiteral("test_layer_normalization_4d_axis1_expanded"),
                        ModelRequest{Mode::Inference});
        PlanContext ctx;
        ctx.setPlan(shown.plan, shown.model);
        TensorDetailsPanel panel(&ctx);
        const Graph& g = *shown.model->graph;
        const auto& attributes = shown.model->annotations.node_attributes;
        int checked = 0;
        for (int planned = 0; planned < int(shown.plan->tensors.size()); ++planned) {
            const Tensor& t = g.tensors[ctx.graphTensor(planned)];
            if (t.producer == kNone || t.producer >= attributes.size()) continue;
            ctx.selectTensor(planned);
            const QString text = panel.plainText();
            const auto& own = attributes[t.producer];
            QCOMPARE(text.contains(QStringLiteral("Attributes")), !own.empty());
            for (const auto& [name, value] : own)
                QVERIFY2(text.contains(QString::fromStdString(name + " = " + value)),
                         qPrintable(text));
            checked += !own.empty();
        }
        QVERIFY2(checked > 0, "no planned tensor's producer has attributes");
    }
};

QTEST_MAIN(TestOnnxViews)
#include "test_onnx_views.moc"
