// The token graph view and the engine-state panel over a real trace: a layered DAG whose edges
// all run left to right, a cursor that follows the shared context, search, clicks, and the
// state at an event rebuilt from the trace (versions, buffers).
#include "context/plan_context.h"
#include "lazy/engine.h"
#include "lazy/trace_state.h"
#include "token_graph/event_memory_chart.h"
#include "token_graph/lazy_state_panel.h"
#include "token_graph/token_graph_layout.h"
#include "token_graph/token_graph_panel.h"
#include "token_graph/token_graph_view.h"

#include <QLabel>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>
#include <QTreeWidget>

#include <memory>

using namespace tmmu;
using namespace tmmu::views;

namespace {

// Two training steps of a tiny model with SGD: loads, stores, commits, saved slots, backward.
std::shared_ptr<const lazy::Trace> training_trace() {
    lazy::Engine e;
    lazy::Tensor w = e.parameter({3, 2}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, "w");
    lazy::Tensor x = e.constant({2, 3}, {1, 2, 3, 4, 5, 6}, "x");
    lazy::Sgd sgd({w}, 0.1f);
    for (int step = 0; step < 2; ++step) {
        lazy::Tensor y = e.matmul(x, w);
        lazy::Tensor loss = e.mean(e.mul(y, y));
        e.set_name(loss, "loss");
        e.read(loss);
        e.backward(loss);
        sgd.step(e);
        const lazy::Tensor params[] = {w};
        e.zero_grad(params, true);
        e.mark_step();
    }
    return std::make_shared<const lazy::Trace>(e.trace());
}

// A compiled step called twice: relu(x @ w + 1) * 2 and its mean, read each time.
std::shared_ptr<const lazy::Trace> compiled_trace() {
    lazy::Engine e;
    const lazy::Tensor w = e.parameter({3, 4}, std::vector<float>(12, 0.25f), "w");
    const lazy::Tensor x = e.constant({2, 3}, {1, 2, 3, 4, 5, 6}, "x");
    const lazy::CompiledFn f = e.compile(
        [&](std::span<const lazy::Tensor>) {
            return std::vector{e.mean(e.mul(e.relu(e.add(e.matmul(x, w), 1.0f)), 2.0f))};
        },
        "step");
    for (int i = 0; i < 2; ++i)
        e.read(e.call(f)[0]);
    return std::make_shared<const lazy::Trace>(e.trace());
}

std::vector<uint64_t> call_events(const lazy::Trace& t) {
    std::vector<uint64_t> out;
    for (const lazy::TraceEvent& e : t.events)
        if (e.kind == lazy::EventKind::CompiledCall) out.push_back(e.index);
    return out;
}

} // namespace

class TestTokenGraph : public QObject {
    Q_OBJECT
    std::shared_ptr<const lazy::Trace> trace_;

  private slots:
    void initTestCase() {
        trace_ = training_trace();
        QVERIFY(trace_->events.size() > 50);
    }

    void layoutIsALayeredDag() {
        const TokenGraphLayout g = layout_token_graph(*trace_);
        QVERIFY(!g.nodes.empty());
        QVERIFY(!g.edges.empty());
        bool token = false, data = false;
        for (const GraphEdge& e : g.edges) {
            QVERIFY2(g.nodes[e.from].layer < g.nodes[e.to].layer,
                     qPrintable(QString::fromStdString(trace_->events[g.nodes[e.to].event].key)));
            (e.token ? token : data) = true;
        }
        QVERIFY(token && data);
        for (size_t i = 1; i < g.nodes.size(); ++i)
            QVERIFY(std::pair(g.nodes[i - 1].layer, g.nodes[i - 1].row) <
                    std::pair(g.nodes[i].layer, g.nodes[i].row));
        // Pool and mark_step events are not nodes; they map to the node before them.
        for (const GraphNode& n : g.nodes) {
            const auto k = trace_->events[n.event].kind;
            QVERIFY(k != lazy::EventKind::PoolAcquire && k != lazy::EventKind::MarkStep);
        }
        QCOMPARE(g.plans.size(), trace_->plans.size());
        const auto [first, last] = g.nodes_in_layers(0, 1);
        QVERIFY(first == 0 && last > 0);
    }

    void cursorFollowsTheContextAndClicksMoveIt() {
        PlanContext ctx;
        TokenGraphView view(&ctx);
        view.resize(900, 400);
        view.setTrace(trace_);
        ctx.setEventAxis(EventAxis(QStringLiteral("event"), trace_->events.size()));
        const TokenGraphLayout& g = view.layout();
        // The last node: the view scrolls to it.
        ctx.setCurrentEvent(g.nodes.back().event);
        QVERIFY(view.rect().intersects(view.nodeRect(g.nodes.size() - 1).toRect()));
        // A click on another visible node makes its event current.
        const int64_t at = view.nodeAt(view.nodeRect(g.nodes.size() - 1).center());
        QCOMPARE(at, int64_t(g.nodes.size() - 1));
        size_t other = g.nodes.size();
        for (size_t i = 0; i < g.nodes.size(); ++i)
            if (i + 1 != g.nodes.size() &&
                view.rect().contains(view.nodeRect(i).center().toPoint()))
                other = i;
        QVERIFY(other < g.nodes.size());
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.nodeRect(other).center().toPoint());
        QCOMPARE(ctx.currentEvent(), g.nodes[other].event);
        // Left/Right step the shared cursor.
        QTest::keyClick(&view, Qt::Key_Right);
        QCOMPARE(ctx.currentEvent(), g.nodes[other].event + 1);
        QTest::keyClick(&view, Qt::Key_Left);
        QCOMPARE(ctx.currentEvent(), g.nodes[other].event);
    }

    // The legend wraps between entries, never inside one ("saved" and "slot" on two lines).
    void legendEntriesStayWhole() {
        PlanContext ctx;
        TokenGraphPanel panel(&ctx);
        auto* legend = panel.findChild<QLabel*>(QStringLiteral("tokenGraphLegend"));
        QVERIFY(legend && legend->wordWrap());
        for (const char* entry : {"saved&nbsp;slot", "token&nbsp;join", "compiled&nbsp;call"})
            QVERIFY2(legend->text().contains(QLatin1String(entry)), entry);
        QVERIFY(!legend->text().contains(QStringLiteral("saved slot")));
        QVERIFY(legend->text().contains(QStringLiteral("&nbsp; <span"))); // a break between
    }

    void searchFindsEventsAndSteps() {
        PlanContext ctx;
        TokenGraphView view(&ctx);
        view.setTrace(trace_);
        ctx.setEventAxis(EventAxis(QStringLiteral("event"), trace_->events.size()));
        view.setSearch(QStringLiteral("BASE_COMMIT"));
        QCOMPARE(view.matches().size(), size_t(2)); // one SGD update per step
        QVERIFY(view.findNext());
        QCOMPARE(trace_->events[ctx.currentEvent()].op, std::string("base_commit"));
        const uint64_t first = ctx.currentEvent();
        QVERIFY(view.findNext());
        QVERIFY(ctx.currentEvent() > first);
        QVERIFY(view.findNext()); // wraps
        QCOMPARE(ctx.currentEvent(), first);
        view.setSearch(QStringLiteral("no such event"));
        QVERIFY(!view.findNext());
    }

    // Issue 18, item 7: a compiled call is one node whose edges are its body's edges to the
    // outside; expanded (double-click) its body's events are nodes, and the DAG stays layered.
    void compiledCallsCollapseAndExpand() {
        const auto trace = compiled_trace();
        const std::vector<uint64_t> calls = call_events(*trace);
        QCOMPARE(calls.size(), size_t(2));
        const TokenGraphLayout collapsed = layout_token_graph(*trace);
        const TokenGraphLayout expanded = layout_token_graph(*trace, {calls[0], calls[1]});
        const uint32_t body = collapsed.call_subevents.at(calls[0]);
        QVERIFY(body >= 4); // the loads, the matmul, the fused kernel, the mean
        QCOMPARE(expanded.nodes.size(),
                 collapsed.nodes.size() + body + collapsed.call_subevents.at(calls[1]));
        for (const TokenGraphLayout* g : {&collapsed, &expanded})
            for (const GraphEdge& e : g->edges)
                QVERIFY(g->nodes[e.from].layer < g->nodes[e.to].layer);
        for (const GraphNode& n : collapsed.nodes)
            QCOMPARE(collapsed.call_of[n.event], int64_t(-1));
        // Inside a collapsed call the cursor is on the call's node; the read after the call
        // hangs off it.
        const int64_t node = collapsed.node_at_event[calls[0] + 2];
        QCOMPARE(collapsed.nodes[size_t(node)].event, calls[0]);
        bool fused = false;
        for (const GraphNode& n : expanded.nodes)
            fused = fused || trace->events[n.event].op == "fused";
        QVERIFY(fused);

        PlanContext ctx;
        TokenGraphView view(&ctx);
        view.resize(1400, 400);
        view.setTrace(trace);
        ctx.setEventAxis(EventAxis(QStringLiteral("event"), trace->events.size()));
        size_t callNode = 0;
        while (view.layout().nodes[callNode].event != calls[0])
            ++callNode;
        view.setSearch(QStringLiteral("/fused/")); // fused kernels are inside the bodies
        QVERIFY(view.matches().empty());
        QTest::mouseDClick(&view, Qt::LeftButton, {}, view.nodeRect(callNode).center().toPoint());
        QVERIFY(view.isExpanded(calls[0]));
        QCOMPARE(view.matches().size(), size_t(1)); // the search follows the new nodes
        QCOMPARE(view.layout().nodes.size(), collapsed.nodes.size() + body);
        ctx.setCurrentEvent(calls[0] + 2); // inside the body: Enter collapses it again
        QTest::keyClick(&view, Qt::Key_Return);
        QVERIFY(!view.isExpanded(calls[0]));
        QCOMPARE(view.layout().nodes.size(), collapsed.nodes.size());
    }

    void statePanelShowsVersionsAndBuffersAtTheEvent() {
        PlanContext ctx;
        LazyStatePanel panel(&ctx);
        panel.setTrace(trace_);
        ctx.setEventAxis(EventAxis(QStringLiteral("event"), trace_->events.size()));
        // At the second SGD commit the parameter's base has commit version 2.
        uint64_t second = 0;
        int seen = 0;
        for (const lazy::TraceEvent& e : trace_->events)
            if (e.kind == lazy::EventKind::BaseCommit && ++seen == 2) second = e.index;
        ctx.setCurrentEvent(second);
        QVERIFY(panel.eventLabel()->text().contains(QStringLiteral("base_commit")));
        QVERIFY(panel.eventLabel()->text().contains(QStringLiteral("exactly one per in-place")));
        const auto commit = panel.bases()->findItems(
            QStringLiteral("B%1").arg(trace_->events[second].base), Qt::MatchExactly);
        QCOMPARE(commit.size(), 1);
        QCOMPARE(commit.front()->text(1), QStringLiteral("2"));
        QVERIFY(panel.locs()->topLevelItemCount() >= 2); // the parameter's and the grad's
        QVERIFY(panel.buffers()->topLevelItemCount() > 0);
        // The snapshot agrees with the memory series at the same event.
        const lazy::TraceSnapshot s = lazy::snapshot_at(*trace_, second);
        const lazy::MemorySeries& m = panel.memoryChart()->series();
        QCOMPARE(m.live[second], s.live_bytes);
        QCOMPARE(m.pending[second], s.pending_bytes);
        uint64_t pending = 0;
        for (const auto& [id, b] : s.buffers)
            if (b.state == lazy::BufferState::Pending) pending += b.bytes;
        QCOMPARE(pending, s.pending_bytes);
    }
};

QTEST_MAIN(TestTokenGraph)
#include "test_token_graph.moc"
