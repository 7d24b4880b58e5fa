// Item models of the tensor table and slot tree, under QAbstractItemModelTester, against a
// GPT-2 small training plan and an offset-assignment CSV plan; the lazy run comparison against a
// bundled program. Expected rows and counts are
// computed here straight from the Plan and Graph, never through the models.
#include "context/plan_context.h"
#include "core/units.h"
#include "lazy/run_comparison.h"
#include "models/instruction_model.h"
#include "models/run_comparison_model.h"
#include "models/slot_model.h"
#include "models/tensor_filter_model.h"
#include "models/tensor_table_model.h"
#include "models/transformer_config.h"
#include "runtime/plan_compiler.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include <algorithm>
#include <functional>
#include <set>

using namespace tmmu;
using namespace tmmu::views;
using TM = TensorTableModel;

namespace {

struct Loaded {
    std::shared_ptr<const Plan> plan;
    std::shared_ptr<const LoadedModel> model;
};

Loaded loadAndPlan(const std::string& path, ModelRequest request) {
    auto model = std::make_shared<LoadedModel>(load_model(path, request));
    auto plan = std::make_shared<Plan>(plan_model(*model, request.mode, PlanOptions{}, Progress{}));
    return {plan, model};
}

bool containsCi(const std::string& hay, const std::string& needle) {
    return QString::fromStdString(hay).contains(QString::fromStdString(needle),
                                                Qt::CaseInsensitive);
}

std::string shapeOf(const Tensor& t) {
    if (t.shape.empty()) return "scalar";
    std::string s;
    for (size_t i = 0; i < t.shape.size(); ++i)
        s += (i ? "\u00d7" : "") + std::to_string(t.shape[i]);
    return s;
}

// A plan's tensor table behind the filter proxy, as the tensor panel stacks them.
struct FilteredTable {
    PlanContext ctx;
    TensorTableModel model{&ctx};
    TensorFilterModel proxy;
    explicit FilteredTable(const Loaded& loaded) {
        ctx.setPlan(loaded.plan, loaded.model);
        proxy.setSourceModel(&model);
    }
};

} // namespace

class TestModels : public QObject {
    Q_OBJECT
    Loaded gpt2_, csv_;
    PlanContext ctx_; // a context holding gpt2_, for expectations that need graph lookups

    // Opcode of the planned tensor's producer, or its role name when nothing produces it.
    std::string opOf(const PlanContext& ctx, int i) const {
        const Graph& g = *ctx.model()->graph;
        const Tensor& t = g.tensors[ctx.graphTensor(i)];
        return t.producer == kNone ? std::string(role_name(t.role)) : g.nodes[t.producer].opcode;
    }

    int countGpt2(const std::function<bool(int)>& pred) const {
        int n = 0;
        for (size_t i = 0; i < gpt2_.plan->tensors.size(); ++i)
            n += pred(int(i));
        return n;
    }

  private slots:
    void initTestCase() {
        gpt2_ = loadAndPlan(TMMU_SOURCE_DIR "/resources/models/gpt2-small.json",
                            ModelRequest{Mode::Training, 1, 64});
        TMMU_REQUIRE_DATA(QFile::exists(TMMU_DSA_DIR "/minimalloc/A.1048576.csv"),
                          TMMU_DSA_DIR "/minimalloc/A.1048576.csv");
        csv_ = loadAndPlan(TMMU_DSA_DIR "/minimalloc/A.1048576.csv", ModelRequest{});
        QVERIFY(gpt2_.plan->tensors.size() > 500);
        QVERIFY(!csv_.plan->tensors.empty());
        QVERIFY(!csv_.plan->mode.has_value());
        ctx_.setPlan(gpt2_.plan, gpt2_.model);
    }

    // Issue 18, item 7: the bundled compiled MLP with and without compile and fusion, one row
    // each, the plain run first; percentages against it, the reads compared by their bits.
    void runComparisonModelShowsEachRun() {
        RunComparisonModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setRuns(lazy::compare_runs(
            lazy::load_lazy_program(TMMU_SOURCE_DIR "/resources/programs/compiled-mlp.json")));
        QCOMPARE(model.columnCount(), 3); // plain, compiled unfused, compiled
        QCOMPARE(model.rowCount(), int(RunComparisonModel::MeasureCount));
        const auto header = [&](int column) {
            return model.headerData(column, Qt::Horizontal).toString();
        };
        QCOMPARE(header(0), QStringLiteral("plain"));
        QCOMPARE(header(1), QStringLiteral("compiled,\nunfused")); // two lines: a narrow column
        QCOMPARE(header(2), QStringLiteral("compiled"));
        // Measures name the rows in the vertical header, which stays in sight as columns scroll.
        QCOMPARE(model.headerData(RunComparisonModel::KernelsRow, Qt::Vertical).toString(),
                 QStringLiteral("Kernels"));
        const auto text = [&](int row, int column) {
            return model.data(model.index(row, column)).toString();
        };
        QCOMPARE(text(RunComparisonModel::ReadsRow, 0), QStringLiteral("reference"));
        QCOMPARE(text(RunComparisonModel::ReadsRow, 2), QStringLiteral("same bits"));
        QCOMPARE(text(RunComparisonModel::CacheRow, 2), QStringLiteral("hits 1, misses 2"));
        const auto kernels = [&](int column) {
            return model
                .data(model.index(RunComparisonModel::KernelsRow, column),
                      RunComparisonModel::SortRole)
                .toULongLong();
        };
        QVERIFY(kernels(2) < kernels(1) && kernels(1) == kernels(0));
        QCOMPARE(text(RunComparisonModel::KernelsRow, 2),
                 QStringLiteral("%1 (%2%)")
                     .arg(kernels(2))
                     .arg(qRound(100.0 * double(kernels(2)) / double(kernels(0)))));
        QVERIFY(text(RunComparisonModel::FusedRow, 2).contains(QStringLiteral("ops)")));
        QCOMPARE(text(RunComparisonModel::FusedRow, 0), QStringLiteral("—"));
    }

    void tableModelPassesTesterAcrossPlanSwitches() {
        PlanContext ctx;
        TensorTableModel model(&ctx);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        ctx.setPlan(gpt2_.plan, gpt2_.model);
        QCOMPARE(model.rowCount(), int(gpt2_.plan->tensors.size()));
        QCOMPARE(model.columnCount(), int(TM::ColumnCount));
        ctx.setColorMode(ColorMode::Slot);
        ctx.setPlan(csv_.plan, csv_.model);
        QCOMPARE(model.rowCount(), int(csv_.plan->tensors.size()));
        // CSV problems have no graph: op, shape and dtype are empty, placement is there.
        QCOMPARE(model.index(0, TM::OpColumn).data().toString(), QString());
        QCOMPARE(model.index(0, TM::ShapeColumn).data().toString(), QString());
        QCOMPARE(model.index(0, TM::SizeColumn).data(TM::SortRole).toULongLong(),
                 csv_.plan->tensors[0].size);
        ctx.setPlan(gpt2_.plan, gpt2_.model);
        ctx.setPlan(nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void tableCellsShowThePlan() {
        TensorTableModel model(&ctx_);
        const Graph& g = *gpt2_.model->graph;
        int checked = 0;
        for (int i = 0; i < model.rowCount(); ++i) {
            const PlannedTensor& p = gpt2_.plan->tensors[size_t(i)];
            const Tensor& t = g.tensors[ctx_.graphTensor(i)];
            QCOMPARE(model.index(i, TM::IdColumn).data().toString().toStdString(), p.id);
            QCOMPARE(model.index(i, TM::OpColumn).data().toString().toStdString(), opOf(ctx_, i));
            QCOMPARE(model.index(i, TM::ShapeColumn).data().toString().toStdString(), shapeOf(t));
            QCOMPARE(model.index(i, TM::RoleColumn).data().toString().toStdString(),
                     std::string(role_name(p.role)));
            QCOMPARE(model.index(i, TM::BeginColumn).data(TM::SortRole).toULongLong(),
                     quint64(p.life.begin));
            QCOMPARE(model.index(i, TM::SlotColumn).data(TM::PlannedIndexRole).toInt(), i);
            if (t.producer != kNone) ++checked;
        }
        QVERIFY(checked > 100);
        QCOMPARE(model.index(0, TM::SizeColumn).data().toString().toStdString(),
                 format_bytes(gpt2_.plan->tensors[0].size));
        QVERIFY(model.index(0, TM::NameColumn).data(Qt::DecorationRole).value<QColor>().isValid());
        QVERIFY(model.index(0, TM::NameColumn).data(Qt::ToolTipRole).toString().contains("live ["));
    }

    void colourModeChangeRepaintsSwatches() {
        PlanContext ctx;
        ctx.setPlan(gpt2_.plan, gpt2_.model);
        TensorTableModel model(&ctx);
        QSignalSpy spy(&model, &QAbstractItemModel::dataChanged);
        QColor before = model.index(3, TM::NameColumn).data(Qt::DecorationRole).value<QColor>();
        ctx.setColorMode(ColorMode::Slot);
        QCOMPARE(spy.count(), 1);
        QCOMPARE(spy[0][0].toModelIndex().row(), 0);
        QCOMPARE(spy[0][1].toModelIndex().row(), model.rowCount() - 1);
        QVERIFY(spy[0][2].value<QList<int>>().contains(Qt::DecorationRole));
        QColor after = model.index(3, TM::NameColumn).data(Qt::DecorationRole).value<QColor>();
        QCOMPARE(after, ViewPalette::fromApplication().slot(gpt2_.plan->tensors[3].slot));
        QCOMPARE(before, ViewPalette::fromApplication().role(gpt2_.plan->tensors[3].role));
    }

    void proxyPassesTesterWhileFilteringSortingAndSwitching() {
        PlanContext ctx;
        TensorTableModel model(&ctx);
        TensorFilterModel proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester tester(&proxy,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ctx.setPlan(gpt2_.plan, gpt2_.model);
        proxy.sort(TM::SizeColumn, Qt::DescendingOrder);
        proxy.setFilterText("role:gradient");
        QVERIFY(proxy.rowCount() > 0);
        ctx.setPlan(csv_.plan, csv_.model);
        QCOMPARE(proxy.rowCount(), 0); // CSV rows have role activation
        proxy.setFilterText("size>4KiB");
        ctx.setPlan(gpt2_.plan, gpt2_.model);
        proxy.setFilterText("");
        QCOMPARE(proxy.rowCount(), model.rowCount());
    }

    void sortIsNumeric_data() {
        QTest::addColumn<int>("column");
        QTest::addColumn<bool>("ascending");
        for (int c : {int(TM::SizeColumn), int(TM::OffsetColumn), int(TM::SlotColumn),
                      int(TM::BeginColumn), int(TM::EndColumn)})
            for (bool asc : {true, false})
                QTest::addRow("column %d %s", c, asc ? "asc" : "desc") << c << asc;
    }
    void sortIsNumeric() {
        QFETCH(int, column);
        QFETCH(bool, ascending);
        TensorTableModel model(&ctx_);
        TensorFilterModel proxy;
        proxy.setSourceModel(&model);
        proxy.sort(column, ascending ? Qt::AscendingOrder : Qt::DescendingOrder);
        std::vector<quint64> expected;
        for (int i = 0; i < model.rowCount(); ++i)
            expected.push_back(model.number(i, column));
        std::sort(expected.begin(), expected.end());
        if (!ascending) std::reverse(expected.begin(), expected.end());
        std::vector<quint64> got;
        for (int r = 0; r < proxy.rowCount(); ++r)
            got.push_back(proxy.index(r, column).data(TM::SortRole).toULongLong());
        QCOMPARE(got, expected);
        // A text sort of the display strings would differ (e.g. "10" < "9"): make sure the
        // column is one where that matters.
        QVERIFY(expected.front() != expected.back());
    }

    // Text columns sort in natural order: an offset CSV's numeric ids as numbers (9, 10, 109,
    // 110; a plain string sort gives 10, 109, 11), names with numbers by their numbers.
    void textSortsNumbersAsNumbers() {
        FilteredTable table(csv_);
        TensorFilterModel& proxy = table.proxy;
        for (int column : {int(TM::IdColumn), int(TM::NameColumn)}) {
            proxy.sort(column, Qt::AscendingOrder);
            QVERIFY(proxy.rowCount() > 100);
            for (int r = 0; r < proxy.rowCount(); ++r) {
                bool ok = false;
                QCOMPARE(proxy.index(r, column).data().toString().toInt(&ok), r);
                QVERIFY(ok);
            }
        }
        // Words with numbers in them, and case.
        QStringList names{"h10.out", "H9.out", "h100.out", "h9.attn", "x", "h009.b"};
        QStringList sorted = names;
        std::sort(sorted.begin(), sorted.end(), [](const QString& a, const QString& b) {
            return TensorFilterModel::naturalLess(a, b);
        });
        QCOMPARE(sorted, (QStringList{"h9.attn", "H9.out", "h009.b", "h10.out", "h100.out", "x"}));
    }

    void filterTerms_data() {
        QTest::addColumn<QString>("filter");
        QTest::addColumn<int>("expected");
        const auto& ts = gpt2_.plan->tensors;
        const Graph& g = *gpt2_.model->graph;
        auto graphT = [&](int i) -> const Tensor& { return g.tensors[ctx_.graphTensor(i)]; };
        auto arenaName = [&](int i) { return gpt2_.plan->arenas[ts[size_t(i)].arena].config.name; };
        auto word = [&](int i, const std::string& w) {
            const PlannedTensor& p = ts[size_t(i)];
            return containsCi(p.name, w) || containsCi(p.id, w) || containsCi(opOf(ctx_, i), w) ||
                   containsCi(std::string(role_name(p.role)), w) ||
                   containsCi(shapeOf(graphT(i)), w);
        };
        auto add = [&](const char* text, const std::function<bool(int)>& pred) {
            QTest::addRow("%s", text) << QString(text) << countGpt2(pred);
        };
        add("", [](int) { return true; });
        add("role:gradient", [&](int i) { return ts[size_t(i)].role == Role::Gradient; });
        add("ROLE=Activation", [&](int i) { return ts[size_t(i)].role == Role::Activation; });
        add("op:matmul", [&](int i) { return containsCi(opOf(ctx_, i), "matmul"); });
        add("arena:activations", [&](int i) { return containsCi(arenaName(i), "activations"); });
        add("name:h3.", [&](int i) { return containsCi(ts[size_t(i)].name, "h3."); });
        add("size>1MiB", [&](int i) { return ts[size_t(i)].size > (1u << 20); });
        add("size>=1mib", [&](int i) { return ts[size_t(i)].size >= (1u << 20); });
        add("size<4KiB", [&](int i) { return ts[size_t(i)].size < 4096; });
        add("size:3KiB", [&](int i) { return ts[size_t(i)].size == 3072; });
        add("offset>=0x100000", [&](int i) { return ts[size_t(i)].offset >= 0x100000; });
        add("slot:12", [&](int i) { return ts[size_t(i)].slot == 12; });
        add("begin<5", [&](int i) { return ts[size_t(i)].life.begin < 5; });
        add("end>100", [&](int i) { return ts[size_t(i)].life.end > 100; });
        add("live:120",
            [&](int i) { return ts[size_t(i)].life.begin <= 120 && 120 < ts[size_t(i)].life.end; });
        add("dtype:f32", [&](int i) { return dtype_name(graphT(i).dtype) == "f32"; });
        add("attn", [&](int i) { return word(i, "attn"); });
        add("attn grad", [&](int i) { return word(i, "attn") && word(i, "grad"); });
        add("64x768", [&](int i) { return word(i, "64\u00d7768"); });
        add("role:gradient size>1MiB", [&](int i) {
            return ts[size_t(i)].role == Role::Gradient && ts[size_t(i)].size > (1u << 20);
        });
        add("-role:parameter live:0", [&](int i) {
            return ts[size_t(i)].role != Role::Parameter && ts[size_t(i)].life.begin == 0;
        });
        add("no-such-tensor-anywhere", [](int) { return false; });
    }
    void filterTerms() {
        QFETCH(QString, filter);
        QFETCH(int, expected);
        TensorTableModel model(&ctx_);
        TensorFilterModel proxy;
        proxy.setSourceModel(&model);
        proxy.setFilterText(filter);
        QCOMPARE(proxy.filterError(), QString());
        QCOMPARE(proxy.filterText(), filter);
        QCOMPARE(proxy.rowCount(), expected);
    }

    void filterTermsOnCsvPlan() {
        FilteredTable table(csv_);
        TensorFilterModel& proxy = table.proxy;
        const auto& ts = csv_.plan->tensors;
        proxy.setFilterText("size>4KiB live:100");
        int expected = int(std::count_if(ts.begin(), ts.end(), [](const PlannedTensor& t) {
            return t.size > 4096 && t.life.begin <= 100 && 100 < t.life.end;
        }));
        QCOMPARE(proxy.rowCount(), expected);
        proxy.setFilterText("id=" + QString::fromStdString(ts[7].id));
        QCOMPARE(proxy.rowCount(), 1);
        QCOMPARE(proxy.mapToSource(proxy.index(0, 0)).row(), 7);
        proxy.setFilterText("op:matmul");
        QCOMPARE(proxy.rowCount(), 0); // no graph, no opcodes
    }

    void badTermsKeepThePreviousFilter_data() {
        QTest::addColumn<QString>("filter");
        QTest::addColumn<QString>("error");
        QTest::newRow("unknown field") << "sise>1MiB"
                                       << "unknown field 'sise'";
        QTest::newRow("bad size") << "size>1XB"
                                  << "'1XB' is not a size";
        QTest::newRow("bad number") << "slot:abc"
                                    << "'abc' is not a number for 'slot'";
        QTest::newRow("empty value") << "role:"
                                     << "missing value after 'role:'";
        QTest::newRow("text compared") << "role>gradient"
                                       << "field 'role' compares text";
        QTest::newRow("live range") << "live>3"
                                    << "'live' takes a step";
        QTest::newRow("bad among good") << "attn nmae:x"
                                        << "unknown field 'nmae'";
    }
    void badTermsKeepThePreviousFilter() {
        QFETCH(QString, filter);
        QFETCH(QString, error);
        TensorTableModel model(&ctx_);
        TensorFilterModel proxy;
        proxy.setSourceModel(&model);
        QSignalSpy errors(&proxy, &TensorFilterModel::filterErrorChanged);
        proxy.setFilterText("role:gradient");
        const int before = proxy.rowCount();
        QVERIFY(before > 0 && before < model.rowCount());
        proxy.setFilterText(filter);
        QVERIFY2(proxy.filterError().contains(error), qPrintable(proxy.filterError()));
        QCOMPARE(proxy.rowCount(), before);
        QCOMPARE(proxy.filterText(), QString("role:gradient"));
        QCOMPARE(errors.count(), 1);
        proxy.setFilterText("");
        QCOMPARE(proxy.filterError(), QString());
        QCOMPARE(errors.count(), 2);
        QCOMPARE(proxy.rowCount(), model.rowCount());
    }

    // A runtime plan's instructions: rows in execution order, registers by name, and the
    // LivenessMap's kill sets as "Frees after".
    void instructionModelPassesTesterAndShowsThePlan() {
        views::InstructionModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        const TransformerConfig c = parse_transformer_config(
            R"({"model_type":"gpt2","n_embd":32,"n_layer":1,"n_head":2,"vocab_size":40,
                "n_positions":16})",
            "tiny");
        auto plan = std::make_shared<const runtime::CompiledPlan>(
            runtime::compile_transformer(c, {runtime::PlanMode::Decode, 1, 8}));
        model.setPlan(plan);
        QCOMPARE(model.rowCount(), int(plan->plan.instructions.size()));
        using M = views::InstructionModel;
        QCOMPARE(model.index(0, M::OpcodeColumn).data().toString(), QString("embedding"));
        QCOMPARE(model.index(2, M::OpcodeColumn).data().toString(), QString("multihead_attention"));
        QCOMPARE(model.index(2, M::ReadsColumn).data().toString(), QString("h0.norm_1"));
        QCOMPARE(model.index(2, M::WritesColumn).data().toString(), QString("h0.attn"));
        QVERIFY(model.index(2, M::WeightsColumn).data().toString().contains("state h0.kv_cache"));
        // The attention reads the first norm's output last: it is free after instruction 2.
        QCOMPARE(model.index(2, M::FreesColumn).data().toString(), QString("h0.norm_1"));
        QVERIFY(model.index(2, M::WritesColumn).data(Qt::ToolTipRole).toString().contains("B"));
        // Device time: the mean per step, only for times one per instruction.
        QVERIFY(!model.index(2, M::DeviceTimeColumn).data().isValid());
        std::vector<double> seconds(plan->plan.instructions.size(), 4e-3);
        seconds[2] = 4.8e-6;
        model.setDeviceTime(seconds, 4);
        QCOMPARE(model.index(0, M::DeviceTimeColumn).data().toString(), QString("1.000 ms"));
        QCOMPARE(model.index(2, M::DeviceTimeColumn).data().toString(), QString("1.2 µs"));
        QCOMPARE(model.index(2, M::DeviceTimeColumn).data(M::SortRole).toDouble(), 1.2e-6);
        model.setDeviceTime(std::vector<double>(3, 1.0), 1); // another program's
        QVERIFY(!model.index(0, M::DeviceTimeColumn).data().isValid());
        model.setPlan(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void slotModelPassesTesterAcrossPlanSwitches() {
        PlanContext ctx;
        SlotModel model(&ctx);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ctx.setPlan(csv_.plan, csv_.model);
        QCOMPARE(model.rowCount(), 1);
        ctx.setPlan(gpt2_.plan, gpt2_.model);
        QCOMPARE(model.rowCount(), int(gpt2_.plan->arenas.size()));
        ctx.setColorMode(ColorMode::Slot);
        ctx.setPlan(nullptr, nullptr);
        QCOMPARE(model.rowCount(), 0);
        ctx.setPlan(csv_.plan, csv_.model);
    }

    void slotChildrenAreTheTensorsSharingTheSlot_data() {
        QTest::addColumn<bool>("useCsv");
        QTest::newRow("gpt2") << false;
        QTest::newRow("csv") << true;
    }
    void slotChildrenAreTheTensorsSharingTheSlot() {
        QFETCH(bool, useCsv);
        const Loaded& l = useCsv ? csv_ : gpt2_;
        PlanContext ctx;
        ctx.setPlan(l.plan, l.model);
        SlotModel model(&ctx);
        const Plan& plan = *l.plan;
        size_t seen = 0;
        for (int a = 0; a < model.rowCount(); ++a) {
            QModelIndex arena = model.index(a, 0);
            QCOMPARE(arena.data().toString().toStdString(), plan.arenas[size_t(a)].config.name);
            QCOMPARE(model.plannedIndex(arena), -1);
            std::set<uint32_t> slotsInPlan;
            for (const PlannedTensor& t : plan.tensors)
                if (t.arena == uint32_t(a)) slotsInPlan.insert(t.slot);
            QCOMPARE(model.rowCount(arena), int(slotsInPlan.size()));
            QCOMPARE(model.index(a, SlotModel::CountColumn).data(SlotModel::SortRole).toInt(),
                     int(slotsInPlan.size()));
            for (int s = 0; s < model.rowCount(arena); ++s) {
                QModelIndex slot = model.index(s, 0, arena);
                QCOMPARE(model.plannedIndex(slot), -1);
                uint32_t slotId = uint32_t(slot.data(SlotModel::SortRole).toULongLong());
                std::set<int> expected, got;
                uint64_t maxSize = 0;
                for (size_t i = 0; i < plan.tensors.size(); ++i)
                    if (plan.tensors[i].arena == uint32_t(a) && plan.tensors[i].slot == slotId) {
                        expected.insert(int(i));
                        maxSize = std::max(maxSize, plan.tensors[i].size);
                    }
                uint32_t lastBegin = 0;
                for (int r = 0; r < model.rowCount(slot); ++r) {
                    QModelIndex t = model.index(r, 0, slot);
                    int planned = model.plannedIndex(t);
                    got.insert(planned);
                    QCOMPARE(model.indexOfTensor(planned), t);
                    QVERIFY(plan.tensors[size_t(planned)].life.begin >= lastBegin);
                    lastBegin = plan.tensors[size_t(planned)].life.begin;
                }
                QCOMPARE(got, expected);
                QCOMPARE(model.index(s, SlotModel::SizeColumn, arena)
                             .data(SlotModel::SortRole)
                             .toULongLong(),
                         quint64(maxSize));
                seen += got.size();
            }
        }
        QCOMPARE(seen, plan.tensors.size());
        QVERIFY(!model.indexOfTensor(-1).isValid());
        QVERIFY(!model.indexOfTensor(int(plan.tensors.size())).isValid());
    }
};

QTEST_MAIN(TestModels)
#include "test_models.moc"
