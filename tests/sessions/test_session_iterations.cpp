// A planning run over iterations (seed 000 II.H) recorded as a session: the history round trips
// and is sealed, a history that does not end on the session's plan is refused, replay runs the
// iterations again and checks every decision, and show and export carry them.
#include "replay.h"
#include "report/formats.h"
#include "report/report_data.h"
#include "report/session_json_read.h"
#include "session_iterations.h"
#include "session_store.h"
#include "sql_test_util.h"
#include "test_support.h"

#include "core/failure.h"
#include "ir/dynamic_dims.h"
#include "source/model_source.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

using namespace tmmu;
using namespace tmmu::sessions;

namespace {

using tmmu::test::sql;

const char* kModel = TMMU_SOURCE_DIR "/resources/models/examples/dynamic_seq.json";

// seq=128, then 1024 (a replan), then 512 (fits), from a first plan at seq=128.
NewSession iterations_session() {
    ModelRequest req;
    req.mode = Mode::Inference;
    req.dims = {{"seq", 128}};
    LoadedModel m = load_model(kModel, req);
    const PlanOptions o;
    Plan first = plan_model(m, req.mode, o, Progress{});
    const DimBinding start = binding_of(*m.graph);
    ShapeScheduleRun run =
        run_shape_schedule(*m.graph, std::move(first), req.mode, o,
                           {{{"seq", 128}}, {{"seq", 1024}}, {{"seq", 512}}}, {}, Progress{});
    m.graph = std::move(run.graph);
    NewSession n{input_from_model(m, req, o), run.plan, "iterations", "", {}};
    n.input.iterations = IterationHistory{start, run.iterations};
    return n;
}

} // namespace

class TestSessionIterations : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string db(const char* name) { return (dir_.path() + "/" + name).toStdString(); }

  private slots:
    void historyRoundTrips() {
        SessionStore store(db("round.db"));
        const NewSession n = iterations_session();
        const std::vector<IterationOutcome>& ran = n.input.iterations->decided;
        QCOMPARE(ran.size(), size_t(3));
        QVERIFY(!ran[0].replanned && ran[1].replanned && !ran[2].replanned);
        const Session s = store.load(store.record(n));
        QVERIFY2(!s.altered, s.altered_reason.c_str());
        QVERIFY(s.input.iterations.has_value());
        QVERIFY(*s.input.iterations == *n.input.iterations);
        QCOMPARE(s.input.iterations->start, (DimBinding{{"batch", 1}, {"seq", 128}}));
        const std::vector<std::string> lines = iterations_lines(s.input);
        QCOMPARE(lines.size(), size_t(4));
        QCOMPARE(lines[0], std::string("3 iterations from batch=1, seq=128, 1 replan"));
        QVERIFY2(lines[2].find("replanned") != std::string::npos, lines[2].c_str());
        // A session of one plan has none.
        NewSession single = n;
        single.input.iterations.reset();
        QVERIFY(!store.load(store.record(single)).input.iterations);
        // The list counts them beside the mode.
        const std::vector<SessionSummary> listed = store.list();
        QCOMPARE(listed.size(), size_t(2));
        QCOMPARE(listed_mode(listed[1]), std::string("inference, 3 iterations"));
        QCOMPARE(listed_mode(listed[0]), std::string("inference"));
        QCOMPARE(listed_mode(s.summary), std::string("inference, 3 iterations"));
    }

    // The content seal covers the history as stored: changing a decision, dropping the history
    // or rewriting its text into the same values is seen.
    void historyIsSealed() {
        SessionStore store(db("sealed.db"));
        const int64_t a = store.record(iterations_session());
        const int64_t b = store.record(iterations_session());
        const int64_t c = store.record(iterations_session());
        QVERIFY(!store.load(a).altered);
        sql(store, "UPDATE sessions SET iterations_json = replace(iterations_json, "
                   "'\"replanned\":true', '\"replanned\":false') WHERE id = " +
                       std::to_string(a));
        sql(store, "UPDATE sessions SET iterations_json = '' WHERE id = " + std::to_string(b));
        sql(store, "UPDATE sessions SET iterations_json = replace(iterations_json, "
                   "'\"peak_bytes\":', '\"peak_bytes\": ') WHERE id = " +
                       std::to_string(c));
        QCOMPARE(store.load(c).input.iterations->decided.size(), size_t(3)); // still parses
        for (const int64_t id : {a, b, c})
            QVERIFY2(store.load(id).altered, std::to_string(id).c_str());
        sql(store, "UPDATE sessions SET iterations_json = '{\"start\": 1}' WHERE id = " +
                       std::to_string(a));
        // The list still lists them all, without a count where it reads none (a and b).
        const std::vector<SessionSummary> listed = store.list(); // newest first: c, b, a
        QCOMPARE(listed.size(), size_t(3));
        QCOMPARE(listed_mode(listed[0]), std::string("inference, 3 iterations"));
        QCOMPARE(listed_mode(listed[1]), std::string("inference"));
        QCOMPARE(listed_mode(listed[2]), std::string("inference"));
        auto f = test::capture_failure([&] { (void)store.load(a); });
        QVERIFY(f);
        QCOMPARE(f->code(), FailureCode::CorruptCheckpoint);
        QVERIFY2(std::string(f->where()).find("iterations_json") != std::string::npos,
                 f->where().c_str());
        // A digest that is not hex is corrupt data too, not a usage error.
        sql(store, "UPDATE sessions SET iterations_json = (SELECT iterations_json FROM sessions "
                   "WHERE id = " +
                       std::to_string(c) + ") WHERE id = " + std::to_string(a));
        sql(store, "UPDATE sessions SET iterations_json = replace(iterations_json, "
                   "'\"plan_hash\":\"', '\"plan_hash\":\"g') WHERE id = " +
                       std::to_string(a));
        f = test::capture_failure([&] { (void)store.load(a); });
        QVERIFY(f);
        QCOMPARE(f->code(), FailureCode::CorruptCheckpoint);
    }

    // The history must end on the plan recorded with it, numbered from 0 without gaps.
    void aHistoryOfAnotherPlanIsRefused() {
        SessionStore store(db("refused.db"));
        NewSession n = iterations_session();
        n.input.iterations->decided.pop_back();
        n.input.iterations->decided.back().plan_hash[0] ^= 1;
        auto f = test::capture_failure([&] { store.record(n); });
        QVERIFY(f);
        QCOMPARE(f->code(), FailureCode::InvalidArgument);
        QVERIFY2(std::string(f->what()).find("the last iteration ran on plan") != std::string::npos,
                 f->what());
        n = iterations_session();
        n.input.iterations->decided[1].iteration = 5;
        f = test::capture_failure([&] { store.record(n); });
        QVERIFY(f && std::string(f->what()).find("iteration 1 of the run is numbered 5") !=
                         std::string::npos);
        n.input.iterations->decided.clear();
        f = test::capture_failure([&] { store.record(n); });
        QVERIFY(f && std::string(f->what()).find("without an iteration") != std::string::npos);
        QCOMPARE(store.count(), size_t(0));
    }

    // Replay runs the iterations from their start: the same decisions, and the plan in force
    // after the last is the session's.
    void replayRunsTheIterationsAgain() {
        SessionStore store(db("replay.db"));
        const Session s = store.load(store.record(iterations_session()));
        std::vector<std::pair<double, std::string>> reported;
        const Progress progress{[&](double f, std::string_view stage) {
            reported.emplace_back(f, std::string(stage));
        }};
        const ReplayResult r = replay_session(s, progress);
        // One bar for the first plan and then the iterations, a quarter each: it never runs
        // back, the replan of iteration 1 starts at half and its planning moves the bar on to
        // the end of that iteration's quarter.
        QVERIFY(!reported.empty());
        for (size_t i = 1; i < reported.size(); ++i)
            QVERIFY2(reported[i - 1].first <= reported[i].first && reported[i].first <= 1,
                     qPrintable(QString("%1 (%2) then %3 (%4)")
                                    .arg(reported[i - 1].first)
                                    .arg(reported[i - 1].second.c_str())
                                    .arg(reported[i].first)
                                    .arg(reported[i].second.c_str())));
        QVERIFY(std::any_of(reported.begin(), reported.end(), [](const auto& p) {
            return p.second == "replan" && std::abs(p.first - 0.5) < 1e-9;
        }));
        QVERIFY(std::abs(reported.back().first - 0.75) < 1e-9);
        QVERIFY(r.comparison.identical);
        QVERIFY(r.iterations.has_value());
        QVERIFY(r.iterations->same);
        QVERIFY(r.identical());
        QCOMPARE(r.iterations->verdict, std::string("3 iterations decided as recorded (1 replan)"));
        QVERIFY(r.iterations->replayed == s.input.iterations->decided);
    }

    // A decision that comes out otherwise is named, with both plans.
    void aDifferentDecisionIsNamed() {
        const NewSession n = iterations_session();
        const IterationHistory& h = *n.input.iterations;
        std::vector<IterationOutcome> other = h.decided;
        other[1].replanned = false;
        other[1].plan_hash = other[0].plan_hash;
        IterationsReplay r = compare_iterations(h, other);
        QVERIFY(!r.same);
        QVERIFY2(r.verdict.find("iteration 1 (seq=1024) differs: recorded replanned onto plan ") ==
                     0,
                 r.verdict.c_str());
        QVERIFY2(r.verdict.find("replayed fits plan " +
                                to_hex(h.decided[0].plan_hash).substr(0, 16)) != std::string::npos,
                 r.verdict.c_str());
        other = h.decided;
        other[2].peak_bytes += 1;
        r = compare_iterations(h, other);
        QVERIFY(!r.same);
        QVERIFY2(r.verdict.find("iteration 2 (seq=512) differs: recorded fits plan ") == 0 &&
                     r.verdict.find("; replayed at batch=1, seq=1024, ") != std::string::npos,
                 r.verdict.c_str());
        other = h.decided;
        other.pop_back();
        r = compare_iterations(h, other);
        QVERIFY(!r.same);
        QCOMPARE(r.verdict, std::string("3 iterations recorded, 2 iterations replayed"));
    }

    // Reports and the JSON export carry the history.
    void exportsCarryTheHistory() {
        const Session s = session_from_run(iterations_session());
        const report::ReportData d = report::report_data(s, 10);
        const auto fact = [&](const std::string& key) {
            const auto it = std::find_if(d.facts.begin(), d.facts.end(),
                                         [&](const report::Fact& f) { return f.key == key; });
            return it == d.facts.end() ? std::string() : it->value;
        };
        QCOMPARE(fact("iterations"), std::string("3 iterations from batch=1, seq=128, 1 replan"));
        // The plan's shapes are the replan's, not the first plan's.
        QCOMPARE(fact("plan shapes"), std::string("batch=1, seq=1024"));
        QVERIFY2(fact("iteration 1").find("seq=1024: replanned onto plan ") == 0,
                 fact("iteration 1").c_str());
        const auto j = nlohmann::json::parse(report::json_document(s));
        const nlohmann::json& history = j.at("inputs").at("iterations");
        QVERIFY(history.at("start") == nlohmann::json({{"batch", 1}, {"seq", 128}}));
        QCOMPARE(history.at("iterations").size(), size_t(3));
        QVERIFY(history.at("iterations").at(1).at("replanned") == true);
        // Read back: the same history; one that does not end on the plan, or is not a history,
        // is refused naming the field.
        const report::ExportedSession read = report::read_session_json(j.dump(), "s.json");
        QVERIFY(read.iterations.has_value() && *read.iterations == *s.input.iterations);
        const auto refused = [](const nlohmann::json& bad, const std::string& says) {
            const auto f = tmmu::test::capture_failure(
                [&] { (void)report::read_session_json(bad.dump(), "s.json"); });
            return f && f->code() == FailureCode::IoError && f->where() == "s.json" &&
                   f->message().starts_with("inputs.iterations: " + says);
        };
        nlohmann::json other = j;
        other["inputs"]["iterations"]["iterations"].erase(2); // the first ran on another plan
        other["inputs"]["iterations"]["iterations"].erase(1);
        QVERIFY(refused(other, "the last iteration ran on plan "));
        other = j;
        other["inputs"]["iterations"]["iterations"][0]["plan_hash"] = "not hex";
        QVERIFY(refused(other, "the iterations are not valid"));
        other = j;
        other["inputs"]["iterations"].erase("start");
        QVERIFY(refused(other, "the iterations are not valid: start is missing"));
        // Each field of the wrong type or sign is named with its row.
        const nlohmann::json& rows = j["inputs"]["iterations"]["iterations"];
        const auto with = [&](const std::string& field, const nlohmann::json& value) {
            nlohmann::json changed = j;
            changed["inputs"]["iterations"]["iterations"][1][field] = value;
            return changed;
        };
        QVERIFY(refused(with("peak_bytes", -1),
                        "the iterations are not valid: iterations[1].peak_bytes is -1, not a "
                        "count"));
        QVERIFY(refused(with("iteration", "1"), "the iterations are not valid: "
                                                "iterations[1].iteration is \"1\", not a count"));
        QVERIFY(refused(with("dims", nlohmann::json{{"seq", 0}}),
                        "the iterations are not valid: iterations[1].dims.seq is 0, not a "
                        "dimension"));
        QVERIFY(refused(with("replanned", 1), "the iterations are not valid: "
                                              "iterations[1].replanned is not true or false"));
        QVERIFY(refused(with("old_plan_hash", "xyz"),
                        "the iterations are not valid: iterations[1].old_plan_hash "));
        other = j;
        other["inputs"]["iterations"]["iterations"] = "three";
        QVERIFY(refused(other, "the iterations are not valid: iterations is not a list"));
        other = j;
        other["inputs"]["iterations"] = nlohmann::json::array();
        QVERIFY(refused(other, "the iterations are not valid: the history is not an object"));
        // A history that parses but could not have been run: each iteration runs on the plan
        // before it or on the one its replan made, inside that plan, and the last is the plan's.
        other = j;
        other["inputs"]["iterations"]["start"] = nlohmann::json::object();
        QVERIFY(refused(other, "a run over iterations from no binding"));
        QVERIFY(
            refused(with("old_plan_hash", rows[2]["replan_key"]), "iteration 1 replaced plan "));
        QVERIFY(refused(with("replanned", false), "iteration 1 was not replanned, but runs on "));
        QVERIFY(refused(with("dims", nlohmann::json{{"seq", 4096}}),
                        "iteration 1 at seq=4096 ran on a plan made for batch=1, seq=1024"));
        other = j;
        other["inputs"]["iterations"]["iterations"][2]["peak_bytes"] = 1;
        QVERIFY(refused(other, "the last iteration's plan peaks at 1 bytes"));
        other = j;
        other["inputs"].erase("iterations");
        QVERIFY(!report::read_session_json(other.dump(), "s.json").iterations);
    }
};

QTEST_MAIN(TestSessionIterations)
#include "test_session_iterations.moc"
