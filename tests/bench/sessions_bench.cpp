// tmmu-sessions-bench: prints the issue 4 speed figures for the sessions database — recording
// and opening a 100k-tensor session, listing 10,000 sessions — with the phases of each, so a
// regression shows where it happened. Timings are machine-bound: a program, not a test.
#include "replay.h"
#include "session_store.h"

#include "io/checkpoint.h"
#include "plan/planner.h"
#include "plan/random_problem.h"

#include "bench_rows.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <string>

namespace {

using namespace tmmu;
using namespace tmmu::sessions;
using bench::Clock;
using bench::ms_since;
using bench::row;

LoadedModel problem_model(size_t n) {
    OffsetProblem p = realistic_random_problem(42, n);
    LoadedModel m;
    m.kind = ModelKind::DsaCsv;
    m.path = fmt::format("random-{}.csv", n);
    DsaProblem d{p, {}, {}};
    for (size_t i = 0; i < p.buffers.size(); ++i)
        d.ids.push_back(fmt::format("t{}", i));
    d.given_offsets.assign(p.buffers.size(), std::nullopt);
    m.problem = std::move(d);
    return m;
}

void bench_large(const std::string& dir, size_t n) {
    fmt::print("{}-tensor session\n", n);
    LoadedModel m = problem_model(n);
    PlanOptions o;
    o.strategy = "greedy-size";
    auto t0 = Clock::now();
    Plan plan = plan_model(m, Mode::Inference, o, Progress{});
    row("plan (greedy-size, not part of recording)", ms_since(t0));

    SessionStore store(dir + "/large.db");
    t0 = Clock::now();
    SessionInput in = input_from_model(m, ModelRequest{}, o);
    double capture = ms_since(t0);
    auto t1 = Clock::now();
    std::vector<uint8_t> cbor = encode_checkpoint(plan);
    double encode = ms_since(t1);
    t1 = Clock::now();
    int64_t id = store.record({std::move(in), plan, "large", "", {}});
    double insert = ms_since(t1);
    row("  capture inputs (model text)", capture);
    row("  encode checkpoint (phase of record)", encode);
    row("  record (encode + insert + commit)", insert);
    row("record total", capture + insert, 1000);

    t0 = Clock::now();
    Session s = store.load(id);
    double open = ms_since(t0);
    t1 = Clock::now();
    Plan decoded = decode_checkpoint(s.checkpoint.data(), s.checkpoint.size());
    row("  decode checkpoint (phase of open)", ms_since(t1));
    t1 = Clock::now();
    LoadedModel stored = load_input(s.input);
    row("  load stored model (studio open, not CLI show)", ms_since(t1));
    row("open (select + decode + verify)", open, 1000);
    fmt::print("  checkpoint {:.1f} MB, model text {:.1f} MB, altered: {}\n",
               double(s.checkpoint.size()) / 1e6, double(s.input.model_text.size()) / 1e6,
               s.altered ? "yes" : "no");
}

void bench_listing(const std::string& dir, size_t count) {
    fmt::print("{} small sessions\n", count);
    LoadedModel m = problem_model(20);
    PlanOptions o;
    Plan plan = plan_model(m, Mode::Inference, o, Progress{});
    SessionStore store(dir + "/many.db");
    auto t0 = Clock::now();
    for (size_t i = 0; i < count; ++i)
        store.record({input_from_model(m, ModelRequest{}, o),
                      plan,
                      fmt::format("run {}", i),
                      "",
                      {i % 10 == 0 ? "tenth" : "other"}});
    row("record all (one transaction each)", ms_since(t0));
    t0 = Clock::now();
    auto all = store.list();
    row(fmt::format("list {} sessions", all.size()).c_str(), ms_since(t0), 100);
    t0 = Clock::now();
    auto tenth = store.list({"tenth", 0});
    row(fmt::format("search by tag ({} hits)", tenth.size()).c_str(), ms_since(t0), 100);
    t0 = Clock::now();
    auto titled = store.list({"run 99", 0});
    row(fmt::format("search by title ({} hits)", titled.size()).c_str(), ms_since(t0), 100);
}

} // namespace

int main(int argc, char** argv) {
    size_t large = argc > 1 ? std::stoul(argv[1]) : 100'000;
    size_t many = argc > 2 ? std::stoul(argv[2]) : 10'000;
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / fmt::format("tmmu-sessions-bench-{}", ::getpid());
    fs::create_directories(dir);
    try {
        bench_large(dir.string(), large);
        bench_listing(dir.string(), many);
    } catch (const std::exception& e) {
        fmt::print(stderr, "tmmu-sessions-bench: {}\n", e.what());
        fs::remove_all(dir);
        return 1;
    }
    fs::remove_all(dir);
    return 0;
}
