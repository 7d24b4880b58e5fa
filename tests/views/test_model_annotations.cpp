// What a source knows beyond the graph (ModelAnnotations, ONNX models in practice), as the tensor
// table and the details panel show it: shapes with the symbolic names their dims were bound from
// ("N=1×...") and the producing node's attributes. The annotations are written here onto a small
// IR model, so these checks run in every build; test_onnx_views.cpp does the same on a real
// ONNX file where the loader is built. Expectations are computed from the Graph, not the views.
#include "context/plan_context.h"
#include "models/tensor_table_model.h"
#include "panels/tensor_details_panel.h"
#include "source/model_source.h"

#include <QAbstractItemModelTester>
#include <QtTest>

using namespace tmmu;
using namespace tmmu::views;
using TM = TensorTableModel;

namespace {

QString product(const std::vector<int64_t>& dims, const std::vector<std::string>& names) {
    QStringList parts;
    for (size_t i = 0; i < dims.size(); ++i)
        parts << (names[i].empty() ? QString() : QString::fromStdString(names[i]) + '=') +
                     QString::number(dims[i]);
    return parts.join(QChar(0x00D7));
}

} // namespace

class TestModelAnnotations : public QObject {
    Q_OBJECT
    std::shared_ptr<const Plan> plan_;
    std::shared_ptr<const LoadedModel> model_;
    TensorIndex named_ = kNone; // a produced tensor with at least two dims, annotated
    std::vector<std::string> names_;

  private slots:
    void initTestCase() {
        auto model = std::make_shared<LoadedModel>(
            load_model(TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json",
                       ModelRequest{Mode::Inference, 0, 0}));
        const Graph& g = *model->graph;
        for (TensorIndex t = 0; t < g.tensors.size() && named_ == kNone; ++t)
            if (g.tensors[t].producer != kNone && g.tensors[t].shape.size() >= 2) named_ = t;
        QVERIFY2(named_ != kNone, "residual_blocks.json has no produced tensor of rank >= 2");
        // The first dim symbolic, the rest fixed: what the ONNX loader writes for "N x 64".
        names_.assign(g.tensors[named_].shape.size() - 1, "");
        names_.insert(names_.begin(), "N");
        model->annotations.dim_names.assign(g.tensors.size(), {});
        model->annotations.dim_names[named_] = names_;
        model->annotations.node_attributes.assign(g.nodes.size(), {});
        model->annotations.node_attributes[g.tensors[named_].producer] = {{"axis", "1"},
                                                                          {"pads", "[1, 1, 1, 1]"}};
        plan_ =
            std::make_shared<Plan>(plan_model(*model, Mode::Inference, PlanOptions{}, Progress{}));
        model_ = model;
    }

    void tableShowsSymbolicNamesInShapes() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        TensorTableModel model(&ctx);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Graph& g = *model_->graph;
        const int row = ctx.findTensor(g.tensors[named_].id);
        QVERIFY(row >= 0);
        const QString shape = model.index(row, TM::ShapeColumn).data().toString();
        QCOMPARE(shape, product(g.tensors[named_].shape, names_));
        QVERIFY2(shape.startsWith(QStringLiteral("N=")), qPrintable(shape));
        QCOMPARE(model.index(row, TM::ShapeColumn).data(TM::SortRole).toString(), shape);
        QVERIFY(model.index(row, TM::NameColumn).data(Qt::ToolTipRole).toString().contains(shape));
        // Tensors without names keep the plain shape: no "=" anywhere else.
        for (int r = 0; r < model.rowCount(); ++r)
            if (r != row)
                QVERIFY2(!model.index(r, TM::ShapeColumn).data().toString().contains('='),
                         qPrintable(model.index(r, TM::ShapeColumn).data().toString()));
        // Annotations that do not fit the shape (another rank) are ignored, not misread.
        auto misfit = std::make_shared<LoadedModel>(*model_);
        misfit->annotations.dim_names[named_] = {"N"};
        ctx.setPlan(plan_, misfit);
        QVERIFY(!model.index(row, TM::ShapeColumn).data().toString().contains('='));
    }

    void detailsShowProducerAttributes() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        TensorDetailsPanel panel(&ctx);
        const Graph& g = *model_->graph;
        ctx.selectTensor(ctx.findTensor(g.tensors[named_].id));
        const QString text = panel.plainText();
        QVERIFY2(text.contains(QStringLiteral("Attributes")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("axis = 1")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("pads = [1, 1, 1, 1]")), qPrintable(text));
        QVERIFY2(text.contains(product(g.tensors[named_].shape, names_)), qPrintable(text));
        // A tensor whose producer has no attributes shows no Attributes row.
        for (TensorIndex t = 0; t < g.tensors.size(); ++t) {
            const Tensor& other = g.tensors[t];
            if (other.producer == kNone || other.producer == g.tensors[named_].producer) continue;
            const int planned = ctx.findTensor(other.id);
            if (planned < 0) continue;
            ctx.selectTensor(planned);
            QVERIFY2(!panel.plainText().contains(QStringLiteral("Attributes")),
                     qPrintable(panel.plainText()));
            return;
        }
        QFAIL("no tensor with another producer to compare with");
    }
};

QTEST_MAIN(TestModelAnnotations)
#include "test_model_annotations.moc"
