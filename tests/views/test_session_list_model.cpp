// The Sessions panel's item model (under QAbstractItemModelTester, and fast for 10,000 rows) and
// the panel's own behaviour against a real temporary store: search by title or tag, the
// selection-dependent actions, and the requests its dialogs emit.
#include "models/session_list_model.h"
#include "panels/sessions_panel.h"
#include "session_store.h"
#include "source/model_source.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QElapsedTimer>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace tmmu;
using namespace tmmu::views;
using tmmu::sessions::SessionSummary;

namespace {

SessionSummary summary(int64_t id) {
    SessionSummary s;
    s.id = id;
    s.created = "2026-11-23T09:00:00Z";
    s.title = "run " + std::to_string(id);
    s.tags = id % 2 ? std::vector<std::string>{"baseline", "gpt2"} : std::vector<std::string>{};
    s.source_path = "/models/gpt2-small.json";
    s.mode = "training";
    s.strategy = id % 3 ? "auto" : "slots";
    s.plan_hash = "8412c4d7cb6130d48a866705a2b5fa5acb33d6b619600124e2323af8a01fcc15";
    s.peak_bytes = 1000 + uint64_t(id);
    s.lower_bound = 1000;
    return s;
}

std::vector<SessionSummary> summaries(int n) {
    std::vector<SessionSummary> v;
    for (int i = n; i >= 1; --i) // newest first, as SessionStore::list() returns them
        v.push_back(summary(i));
    return v;
}

sessions::NewSession problemSession(const std::string& title, std::vector<std::string> tags) {
    LoadedModel m;
    m.kind = ModelKind::DsaCsv;
    m.path = "t.csv";
    m.problem = parse_dsa_csv("id,lower,upper,size\na,0,2,16\nb,1,3,8\nc,2,4,32\n", "t.csv");
    PlanOptions o;
    Plan p = plan_model(m, Mode::Inference, o, Progress{});
    return {sessions::input_from_model(m, ModelRequest{}, o), p, title, "first notes",
            std::move(tags)};
}

template <class T>
T* waitForDialog(QWidget* parent, const char* name) {
    T* found = nullptr;
    // The caller checks the pointer, which says more than the wait's result.
    (void)QTest::qWaitFor([&] { return (found = parent->findChild<T*>(name)) != nullptr; }, 2000);
    return found;
}

} // namespace

class TestSessionListModel : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void passesTheModelTester() {
        SessionListModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSessions(summaries(40));
        model.setCurrentId(7);
        model.markAltered(5, QStringLiteral("plan hash mismatch"));
        model.setCurrentId(9);
        model.setSessions(summaries(3));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), int(SessionListModel::ColumnCount));
    }

    void formatsCells() {
        SessionListModel model;
        model.setSessions(summaries(3));
        QCOMPARE(model.rowOf(3), 0);
        QCOMPARE(model.rowOf(42), -1);
        QCOMPARE(model.text(0, SessionListModel::IdColumn), QStringLiteral("3"));
        QCOMPARE(model.text(0, SessionListModel::CreatedColumn),
                 QStringLiteral("2026-11-23 09:00:00"));
        QCOMPARE(model.text(0, SessionListModel::TagsColumn), QStringLiteral("baseline, gpt2"));
        QCOMPARE(model.text(0, SessionListModel::SourceColumn), QStringLiteral("gpt2-small.json"));
        QCOMPARE(model.text(0, SessionListModel::OverBoundColumn), QStringLiteral("0.30%"));
        QCOMPARE(model.text(0, SessionListModel::HashColumn), QStringLiteral("8412c4d7cb61"));
        QModelIndex peak = model.index(0, SessionListModel::PeakColumn);
        QCOMPARE(peak.data(SessionListModel::SortRole).toULongLong(), 1003ull);
        QCOMPARE(model.index(2, SessionListModel::TitleColumn)
                     .data(SessionListModel::SessionIdRole)
                     .toLongLong(),
                 1ll);
        QVERIFY(!model.index(1, 0).data(SessionListModel::AlteredRole).toBool());
        QCOMPARE(model.text(0, SessionListModel::ModeColumn), QStringLiteral("training"));
        std::vector<SessionSummary> ranked = summaries(1);
        ranked[0].rank = 3;
        ranked[0].world_size = 8;
        model.setSessions(ranked); // a rank of a distributed run says which
        QCOMPARE(model.text(0, SessionListModel::ModeColumn), QStringLiteral("training, rank 3/8"));
    }

    void marksAlteredAndCurrentSessions() {
        SessionListModel model;
        model.setSessions(summaries(3));
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.markAltered(2, QStringLiteral("checkpoint does not decode"));
        QCOMPARE(changed.count(), 1);
        QModelIndex title = model.index(model.rowOf(2), SessionListModel::TitleColumn);
        QVERIFY(title.data(SessionListModel::AlteredRole).toBool());
        QVERIFY(!title.data(Qt::DecorationRole).isNull());
        QVERIFY(title.data(Qt::ToolTipRole).toString().contains("ALTERED"));
        // The mark survives a refreshed list.
        model.setSessions(summaries(4));
        QVERIFY(model.index(model.rowOf(2), 0).data(SessionListModel::AlteredRole).toBool());
        model.setCurrentId(4);
        QVERIFY(model.index(0, 2).data(Qt::FontRole).value<QFont>().bold());
        QVERIFY(model.index(1, 2).data(Qt::FontRole).isNull());
    }

    void tenThousandRowsStayFast() {
        std::vector<SessionSummary> rows = summaries(10000);
        SessionListModel model;
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(SessionListModel::SortRole);
        QTableView view;
        view.setModel(&proxy);
        view.setSortingEnabled(true);
        view.resize(900, 500);
        QElapsedTimer t;
        t.start();
        model.setSessions(std::move(rows));
        proxy.sort(SessionListModel::IdColumn, Qt::DescendingOrder);
        const qint64 resetMs = t.elapsed();
        t.restart();
        proxy.sort(SessionListModel::PeakColumn, Qt::AscendingOrder);
        const qint64 sortMs = t.elapsed();
        t.restart();
        QImage image = view.grab().toImage();
        const qint64 paintMs = t.elapsed();
        qInfo("10,000 sessions: reset %lld ms, sort by peak %lld ms, first paint %lld ms", resetMs,
              sortMs, paintMs);
        QCOMPARE(proxy.rowCount(), 10000);
        QCOMPARE(proxy.index(0, 0).data(SessionListModel::SessionIdRole).toLongLong(), 1ll);
        QVERIFY(!image.isNull());
    }

    void parsesTags() {
        QCOMPARE(parseTags(QStringLiteral(" a, b ,,c,a ")), (QStringList{"a", "b", "c"}));
        QVERIFY(parseTags(QStringLiteral(" , ")).isEmpty());
    }

    void panelSearchesByTitleOrTag() {
        sessions::SessionStore store((dir_.path() + "/search.db").toStdString());
        store.record(problemSession("Baseline run", {"gpt2"}));
        store.record(problemSession("second", {"llama"}));
        store.record(problemSession("third baseline", {}));
        SessionsPanel panel;
        panel.setStore(&store);
        QCOMPARE(panel.model()->rowCount(), 3);
        panel.setSearch(QStringLiteral("baseline"));
        QCOMPARE(panel.model()->rowCount(), 2);
        panel.setSearch(QStringLiteral("llama"));
        QCOMPARE(panel.model()->rowCount(), 1);
        QCOMPARE(panel.model()->summary(0).title, std::string("second"));
        panel.setSearch(QStringLiteral("nothing like it"));
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY(panel.statusText().contains("No session matches"));
        // Typing applies after a pause, without an explicit refresh.
        panel.searchField()->setText(QStringLiteral("gpt2"));
        QTRY_COMPARE(panel.model()->rowCount(), 1);
        qInfo("panel list: %.2f ms", panel.lastListMs());
    }

    void panelListsTenThousandStoredSessionsQuickly() {
        const std::string path = (dir_.path() + "/bulk.db").toStdString();
        {
            sessions::SessionStore store(path);
            sessions::NewSession n = problemSession("bulk", {"many"});
            QElapsedTimer t;
            t.start();
            for (int i = 0; i < 10000; ++i)
                store.record(n);
            qInfo("recorded 10,000 sessions in %lld ms", t.elapsed());
        }
        sessions::SessionStore store(path);
        SessionsPanel panel;
        panel.resize(900, 500);
        QElapsedTimer t;
        t.start();
        panel.setStore(&store);
        const qint64 refreshMs = t.elapsed();
        qInfo("Sessions panel: listing 10,000 sessions %.1f ms (store list + model reset + sort "
              "%lld ms)",
              panel.lastListMs(), refreshMs);
        QCOMPARE(panel.model()->rowCount(), 10000);
    }

    void panelWithoutStoreSaysWhy() {
        SessionsPanel panel;
        panel.setStore(nullptr, QStringLiteral("IO_ERROR at x.db: not a TMMU sessions database"));
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY(panel.statusText().contains("not a TMMU sessions database"));
        QVERIFY(!panel.searchField()->isEnabled());
    }

    void panelEmitsRequestsForTheSelection() {
        sessions::SessionStore store((dir_.path() + "/actions.db").toStdString());
        const int64_t a = store.record(problemSession("a", {}));
        const int64_t b = store.record(problemSession("b", {"x"}));
        SessionsPanel panel;
        panel.setStore(&store);
        QSignalSpy open(&panel, &SessionsPanel::openRequested);
        QSignalSpy compare(&panel, &SessionsPanel::compareRequested);
        QSignalSpy rename(&panel, &SessionsPanel::renameRequested);
        QSignalSpy edit(&panel, &SessionsPanel::editRequested);
        QSignalSpy remove(&panel, &SessionsPanel::deleteRequested);

        panel.openSelected(); // nothing selected: nothing asked
        QCOMPARE(open.count(), 0);
        panel.selectSession(b);
        QCOMPARE(panel.selectedIds(), std::vector<int64_t>{b});
        panel.openSelected();
        QCOMPARE(open.count(), 1);
        QCOMPARE(open.at(0).at(0).toLongLong(), b);

        panel.table()->selectAll();
        panel.compareSelected();
        QCOMPARE(compare.count(), 1);
        QCOMPARE(compare.at(0).at(0).toLongLong(), a); // older first
        QCOMPARE(compare.at(0).at(1).toLongLong(), b);

        panel.selectSession(a);
        panel.renameSelected();
        auto* dialog = waitForDialog<QInputDialog>(&panel, "renameDialog");
        QVERIFY(dialog);
        QCOMPARE(dialog->textValue(), QStringLiteral("a"));
        dialog->setTextValue(QStringLiteral("  renamed "));
        dialog->accept();
        QCOMPARE(rename.count(), 1);
        QCOMPARE(rename.at(0).at(1).toString(), QStringLiteral("renamed"));

        panel.editSelected();
        auto* editor = waitForDialog<QDialog>(&panel, "editSessionDialog");
        QVERIFY(editor);
        auto* notes = editor->findChild<QPlainTextEdit*>("notesEdit");
        QCOMPARE(notes->toPlainText(), QStringLiteral("first notes"));
        notes->setPlainText(QStringLiteral("new notes"));
        editor->findChild<QLineEdit*>("tagsEdit")->setText(QStringLiteral("p, q"));
        editor->accept();
        QCOMPARE(edit.count(), 1);
        QCOMPARE(edit.at(0).at(1).toString(), QStringLiteral("new notes"));
        QCOMPARE(edit.at(0).at(2).toStringList(), (QStringList{"p", "q"}));

        panel.deleteSelected();
        auto* box = waitForDialog<QMessageBox>(&panel, "confirmDeleteBox");
        QVERIFY(box);
        box->button(QMessageBox::Cancel)->click();
        QCOMPARE(remove.count(), 0); // cancelled: nothing asked
        panel.deleteSelected();
        QTRY_VERIFY(panel.findChild<QMessageBox*>("confirmDeleteBox") &&
                    panel.findChild<QMessageBox*>("confirmDeleteBox")->isVisible());
        panel.findChild<QMessageBox*>("confirmDeleteBox")->button(QMessageBox::Yes)->click();
        QCOMPARE(remove.count(), 1);
        QCOMPARE(remove.at(0).at(0).value<QList<qint64>>(), QList<qint64>{a});
    }
};

QTEST_MAIN(TestSessionListModel)
#include "test_session_list_model.moc"
