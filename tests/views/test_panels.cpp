// The tensor table and details panels driven headless: selection follows the context both
// ways without echoes, the details name the producer and lifetime, Ctrl+F reaches the filter
// field, and a 100k-tensor plan resets quickly. Renders both panels to PNG for a look.
#include "context/plan_context.h"
#include "core/units.h"
#include "models/slot_model.h"
#include "models/tensor_filter_model.h"
#include "models/tensor_table_model.h"
#include "panels/tensor_details_panel.h"
#include "panels/tensor_table_panel.h"
#include "plan/plan_summary.h"
#include "plan/random_problem.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QAction>
#include <QDir>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtTest>

using namespace tmmu;
using namespace tmmu::views;
using TM = TensorTableModel;

class TestPanels : public QObject {
    Q_OBJECT
    std::shared_ptr<const Plan> plan_;
    std::shared_ptr<const LoadedModel> model_;

    // A planned tensor with a producer and at least one consumer that runs in this plan.
    int producedAndConsumed(const PlanContext& ctx) const {
        const Graph& g = *model_->graph;
        for (size_t i = 0; i < plan_->tensors.size(); ++i) {
            const Tensor& t = g.tensors[ctx.graphTensor(int(i))];
            if (t.producer != kNone && !t.consumers.empty() && plan_->tensors[i].life.begin > 3)
                return int(i);
        }
        return -1;
    }

    static QString screenshotPath(const QString& name) {
        QString dir = qEnvironmentVariable("TMMU_SCREENSHOT_DIR", QDir::tempPath());
        return QDir(dir).filePath(name);
    }

  private slots:
    void initTestCase() {
        auto model = std::make_shared<LoadedModel>(load_model(TMMU_SOURCE_DIR
                                                              "/resources/models/gpt2-small.json",
                                                              ModelRequest{Mode::Training, 1, 64}));
        plan_ =
            std::make_shared<Plan>(plan_model(*model, Mode::Training, PlanOptions{}, Progress{}));
        model_ = model;
    }

    void selectionRoundTrip() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        TensorTablePanel panel(&ctx);
        panel.resize(900, 500);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QTableView* table = panel.tableView();
        TensorFilterModel* proxy = panel.filterModel();
        // Sort so proxy rows differ from planned indices and the mapping is exercised.
        table->sortByColumn(TM::SizeColumn, Qt::DescendingOrder);
        QSignalSpy selections(&ctx, &PlanContext::selectionChanged);

        QModelIndex third = proxy->index(2, TM::NameColumn);
        const int plannedThird = proxy->mapToSource(third).row();
        QVERIFY(plannedThird != 2);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(third).center());
        QCOMPARE(ctx.selectedTensor(), plannedThird);
        QCOMPARE(selections.count(), 1);

        QTest::keyClick(table, Qt::Key_Down);
        QCOMPARE(ctx.selectedTensor(), proxy->mapToSource(proxy->index(3, 0)).row());
        QCOMPARE(selections.count(), 2);

        // Context -> table: the row becomes current, selected and visible.
        const int target = int(plan_->tensors.size()) - 5;
        ctx.selectTensor(target);
        QCOMPARE(selections.count(), 3);
        QModelIndex current = table->selectionModel()->currentIndex();
        QCOMPARE(proxy->mapToSource(current).row(), target);
        QVERIFY(table->selectionModel()->isRowSelected(current.row()));
        QVERIFY(table->viewport()->rect().intersects(table->visualRect(current)));

        // Filtering away the selected row neither moves nor clears the context's selection,
        // and clearing the filter brings the row back as current.
        QString targetId = QString::fromStdString(plan_->tensors[size_t(target)].id);
        panel.searchField()->setText("id=no-such-tensor");
        QCOMPARE(proxy->rowCount(), 0);
        QCOMPARE(ctx.selectedTensor(), target);
        panel.searchField()->setText("id=" + targetId);
        QCOMPARE(proxy->rowCount(), 1);
        QCOMPARE(proxy->mapToSource(table->selectionModel()->currentIndex()).row(), target);
        panel.searchField()->clear();
        QCOMPARE(proxy->rowCount(), int(plan_->tensors.size()));
        QCOMPARE(ctx.selectedTensor(), target);
        QCOMPARE(selections.count(), 3);

        ctx.selectTensor(-1);
        QVERIFY(!table->selectionModel()->hasSelection());
    }

    void countAndErrorLabels() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        TensorTablePanel panel(&ctx);
        panel.show();
        QLabel* error = nullptr;
        QLabel* count = nullptr;
        for (QLabel* l : panel.findChildren<QLabel*>()) {
            if (l->text().contains("tensors"))
                count = l;
            else
                error = l;
        }
        QVERIFY(count && error);
        const QString total = QLocale().toString(qulonglong(plan_->tensors.size()));
        QCOMPARE(count->text(), QString("%1 of %1 tensors").arg(total));
        panel.searchField()->setText("role:gradient");
        QCOMPARE(count->text(),
                 QString("%1 of %2 tensors")
                     .arg(QLocale().toString(panel.filterModel()->rowCount()), total));
        QVERIFY(error->isHidden());
        panel.searchField()->setText("sise>1MiB");
        QVERIFY(!error->isHidden());
        QVERIFY(error->text().contains("unknown field 'sise'"));
        panel.searchField()->setText("size>1MiB");
        QVERIFY(error->isHidden());
    }

    void detailsShowProducerLifetimeAndFollowLinks() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        TensorDetailsPanel details(&ctx);
        QVERIFY(details.plainText().contains("No tensor selected"));

        const int i = producedAndConsumed(ctx);
        QVERIFY(i >= 0);
        const Graph& g = *model_->graph;
        const Tensor& t = g.tensors[ctx.graphTensor(i)];
        const PlannedTensor& p = plan_->tensors[size_t(i)];
        ctx.selectTensor(i);
        const QString text = details.plainText();
        QVERIFY2(text.contains(QString::fromStdString(g.nodes[t.producer].opcode)),
                 qPrintable(text));
        QVERIFY(text.contains(QString::fromStdString(g.nodes[t.producer].id)));
        QVERIFY(text.contains(QString("[%1, %2)").arg(p.life.begin).arg(p.life.end)));
        QVERIFY(text.contains(QString::fromStdString(p.id)));
        QVERIFY(text.contains(QString("0x%1").arg(QString::number(p.offset, 16))));
        QVERIFY(text.contains(QString::fromStdString(format_bytes(p.size))));
        QVERIFY(text.contains("not live at step 0"));

        // The first consumer links to its step; following it moves the context there.
        const std::string& consumer = g.nodes[t.consumers.front()].id;
        auto at = std::find(plan_->execution_order.begin(), plan_->execution_order.end(), consumer);
        QVERIFY(at != plan_->execution_order.end());
        const int step = int(at - plan_->execution_order.begin());
        QVERIFY(details.browser()->toHtml().contains(QString("href=\"step:%1\"").arg(step)));
        emit details.browser()->anchorClicked(QUrl(QString("step:%1").arg(step)));
        QCOMPARE(ctx.currentEvent(), uint64_t(step));
        QVERIFY(details.plainText().contains(QString("live at step %1").arg(step)));
        QVERIFY(!details.plainText().contains("not live"));

        emit details.browser()->anchorClicked(QUrl("tensor:0"));
        QCOMPARE(ctx.selectedTensor(), 0);

        // The buffers sharing a tensor's bytes at other times, each a link that selects it.
        int shared = -1;
        std::vector<uint32_t> others;
        for (size_t k = 0; k < plan_->tensors.size() && shared < 0; ++k) {
            const PlannedTensor& q = plan_->tensors[k];
            others = buffers_sharing_bytes(plan_->arenas[q.arena], q.buffer, q.offset,
                                           q.offset + q.size);
            if (!others.empty()) shared = int(k);
        }
        QVERIFY(shared >= 0);
        ctx.selectTensor(shared);
        QVERIFY2(details.plainText().contains(QString("Shares bytes with (%1)").arg(others.size())),
                 qPrintable(details.plainText()));
        const ArenaPlan& arena = plan_->arenas[plan_->tensors[size_t(shared)].arena];
        const int other = ctx.findTensor(arena.buffer_names[others.front()]);
        QVERIFY(other >= 0);
        QVERIFY(details.browser()->toHtml().contains(QString("href=\"tensor:%1\"").arg(other)));
        emit details.browser()->anchorClicked(QUrl(QString("tensor:%1").arg(other)));
        QCOMPARE(ctx.selectedTensor(), other);
        ctx.selectTensor(-1);
        QVERIFY(details.plainText().contains("No tensor selected"));
    }

    void detailsShowAliasViewAndInPlace_data() {
        QTest::addColumn<QString>("tensor");
        QTest::addColumn<QStringList>("expected");
        QTest::newRow("view") << "a_head"
                              << QStringList{"View of", "a_flat, bytes [0, 512)",
                                             "Saved for backward", "yes", "slice"};
        QTest::newRow("alias group")
            << "g_a" << QStringList{"Alias group", "grad_a: shared with g_head", "slice_backward"};
        QTest::newRow("in place") << "a" << QStringList{"In place of", "h", "relu"};
        // w_next is written over w in place: w's bytes are not its own (they read so).
        QTest::newRow("parameter")
            << "w"
            << QStringList{"none (parameter)", "Alignment", "256 B", "Consumers (2)",
                           "its own buffer also holds w_next"};
    }
    void detailsShowAliasViewAndInPlace() {
        QFETCH(QString, tensor);
        QFETCH(QStringList, expected);
        auto model = std::make_shared<LoadedModel>(
            load_model(TMMU_SOURCE_DIR "/resources/models/examples/views_and_inplace.json",
                       ModelRequest{Mode::Training, 1, 1}));
        auto plan =
            std::make_shared<Plan>(plan_model(*model, Mode::Training, PlanOptions{}, Progress{}));
        PlanContext ctx;
        ctx.setPlan(plan, model);
        TensorDetailsPanel details(&ctx);
        const int i = ctx.findTensor(tensor.toStdString());
        QVERIFY(i >= 0);
        ctx.selectTensor(i);
        const QString text = details.plainText();
        for (const QString& e : expected)
            QVERIFY2(text.contains(e), qPrintable(e + " in\n" + text));
        if (tensor == "a") {
            details.resize(520, 420);
            const QString path = screenshotPath("tmmu_tensor_details_inplace.png");
            QVERIFY(details.grab().save(path));
            qInfo("screenshot: %s", qPrintable(path));
        }
    }

    void ctrlFFocusesTheSearchField() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        TensorTablePanel panel(&ctx);
        panel.show();
        panel.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&panel));
        panel.tableView()->setFocus();
        QVERIFY(!panel.searchField()->hasFocus());
        QTest::keyClick(panel.tableView(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(panel.searchField()->hasFocus());
        // Escape on an empty field hands focus back to the table.
        QTest::keyClick(panel.searchField(), Qt::Key_Escape);
        QVERIFY(panel.tableView()->hasFocus());
    }

    void ctrlFAlongsideAWindowWideFindAction() {
        // A main window binding Ctrl+F too must not make the panel's shortcut ambiguous (Qt
        // would then trigger neither): inside and outside the panel, one of them fires.
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        QWidget window;
        auto* panel = new TensorTablePanel(&ctx, &window);
        auto* other = new QLineEdit(&window);
        auto* layout = new QVBoxLayout(&window);
        layout->addWidget(other);
        layout->addWidget(panel);
        int fired = 0;
        auto* action = new QAction(&window);
        action->setShortcut(QKeySequence::Find);
        window.addAction(action);
        connect(action, &QAction::triggered, panel, [&] {
            ++fired;
            panel->focusSearch();
        });
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        panel->tableView()->setFocus();
        QTest::keyClick(panel->tableView(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(panel->searchField()->hasFocus());
        QCOMPARE(fired, 1);
        other->setFocus();
        QTest::keyClick(other, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(panel->searchField()->hasFocus());
        QCOMPARE(fired, 2);
        // Without the window action the panel's own shortcut takes over again.
        action->setEnabled(false);
        panel->tableView()->setFocus();
        QTest::keyClick(panel->tableView(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(panel->searchField()->hasFocus());
        QCOMPARE(fired, 2);
    }

    void hundredThousandTensorsResetQuickly() {
        OffsetProblem problem = realistic_random_problem(7, 100000);
        std::vector<std::string> ids;
        for (size_t i = 0; i < problem.buffers.size(); ++i)
            ids.push_back("b" + std::to_string(i));
        PlanOptions options;
        options.strategy = "greedy-size";
        auto big = std::make_shared<Plan>(plan_problem(problem, ids, options, Progress{}, "big"));

        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        TensorTablePanel table(&ctx);
        TensorDetailsPanel details(&ctx);
        table.resize(900, 500);
        table.show();
        details.show();
        QVERIFY(QTest::qWaitForWindowExposed(&table));
        table.tableView()->sortByColumn(TM::SizeColumn, Qt::DescendingOrder);
        ctx.selectTensor(10);

        QElapsedTimer timer;
        timer.start();
        ctx.setPlan(big, nullptr);
        QCoreApplication::processEvents();
        const qint64 resetMs = timer.elapsed();
        PlanContext slotCtx;
        SlotModel slotModel(&slotCtx);
        timer.restart();
        slotCtx.setPlan(big, nullptr);
        const qint64 slotMs = timer.elapsed();
        QCOMPARE(slotModel.rowCount(), 1);
        QVERIFY(slotModel.indexOfTensor(99999).isValid());
        QCOMPARE(table.tableModel()->rowCount(), 100000);
        QCOMPARE(table.filterModel()->rowCount(), 100000);

        timer.restart();
        table.filterModel()->setFilterText("size>1MiB live:5000");
        const qint64 filterMs = timer.elapsed();
        QVERIFY(table.filterModel()->rowCount() < 100000);
        timer.restart();
        table.filterModel()->setFilterText("b99");
        const qint64 wordMs = timer.elapsed();
        // b99, b990..b999, b9900..b9999, b99000..b99999
        QCOMPARE(table.filterModel()->rowCount(), 1111);
        qInfo("100k tensors: table + details reset (sorted by size) %lld ms, slot model reset "
              "%lld ms, numeric filter %lld ms, word filter %lld ms",
              resetMs, slotMs, filterMs, wordMs);
    }

    void renderPanels() {
        PlanContext ctx;
        ctx.setPlan(plan_, model_);
        QSplitter window(Qt::Horizontal);
        auto* table = new TensorTablePanel(&ctx, &window);
        new TensorDetailsPanel(&ctx, &window); // owned by the splitter
        window.resize(1400, 600);
        window.setSizes({900, 500});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        table->searchField()->setText("h3. size>64KiB");
        ctx.selectTensor(
            table->filterModel()->mapToSource(table->filterModel()->index(2, 0)).row());
        ctx.setCurrentEvent(uint64_t(plan_->tensors[size_t(ctx.selectedTensor())].life.begin) + 1);
        QCoreApplication::processEvents();
        const QString path = screenshotPath("tmmu_tensor_panels.png");
        QVERIFY(window.grab().save(path));
        qInfo("screenshot: %s", qPrintable(path));

        table->searchField()->setText("size>1XB");
        ctx.selectTensor(-1);
        QCoreApplication::processEvents();
        const QString errorPath = screenshotPath("tmmu_tensor_panels_error.png");
        QVERIFY(window.grab().save(errorPath));
        qInfo("screenshot: %s", qPrintable(errorPath));
    }

    void renderCsvPlanInDarkPalette() {
        const QPalette light = QApplication::palette();
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::WindowText, QColor(0xdd, 0xdd, 0xdd));
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x26, 0x26));
        dark.setColor(QPalette::Text, QColor(0xdd, 0xdd, 0xdd));
        dark.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
        dark.setColor(QPalette::ButtonText, QColor(0xdd, 0xdd, 0xdd));
        dark.setColor(QPalette::Highlight, QColor(0x2a, 0x82, 0xda));
        dark.setColor(QPalette::HighlightedText, Qt::white);
        dark.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
        dark.setColor(QPalette::PlaceholderText, QColor(0x88, 0x88, 0x88));
        QApplication::setPalette(dark);
        TMMU_REQUIRE_DATA(QFile::exists(TMMU_DSA_DIR "/minimalloc/A.1048576.csv"),
                          TMMU_DSA_DIR "/minimalloc/A.1048576.csv");
        auto model = std::make_shared<LoadedModel>(
            load_model(TMMU_DSA_DIR "/minimalloc/A.1048576.csv", ModelRequest{}));
        auto plan =
            std::make_shared<Plan>(plan_model(*model, Mode::Training, PlanOptions{}, Progress{}));
        PlanContext ctx;
        ctx.setPlan(plan, model);
        ctx.setColorMode(ColorMode::Slot);
        QSplitter window(Qt::Horizontal);
        auto* table = new TensorTablePanel(&ctx, &window);
        auto* details = new TensorDetailsPanel(&ctx, &window);
        window.resize(1300, 420);
        window.setSizes({850, 450});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        table->tableView()->sortByColumn(TM::SizeColumn, Qt::DescendingOrder);
        ctx.selectTensor(
            table->filterModel()->mapToSource(table->filterModel()->index(1, 0)).row());
        QVERIFY(details->plainText().contains("offset-assignment problem"));
        QVERIFY(details->plainText().contains("not live at time 0"));
        // Nothing to show in op, shape and dtype; ids are the names.
        for (int c : {TM::IdColumn, TM::OpColumn, TM::ShapeColumn, TM::DTypeColumn})
            QVERIFY(table->tableView()->isColumnHidden(c));
        QVERIFY(!table->tableView()->isColumnHidden(TM::SizeColumn));
        QCoreApplication::processEvents();
        const QString path = screenshotPath("tmmu_tensor_panels_csv_dark.png");
        QVERIFY(window.grab().save(path));
        qInfo("screenshot: %s", qPrintable(path));
        QApplication::setPalette(light);
    }
};

QTEST_MAIN(TestPanels)
#include "test_panels.moc"
