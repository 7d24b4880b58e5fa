#include "commands.h"
#include "interrupt.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "io/dsa_csv.h"
#include "io/file_io.h"
#include "models/transformer_config.h"
#include "models/transformer_graph.h"
#include "plan/plan_summary.h"
#include "plan/random_problem.h"
#include "plan/strategies/optimal.h"
#include "plan/strategy.h"
#include "plan/validator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <nlohmann/json.hpp>

namespace tmmu::cli {
namespace {

constexpr const char* kHelp =
    R"(usage: tmmu bench [--data DIR] [--max-buffers N] [--budget N] [--json OUT|-]

Runs every offset strategy on
  1. each offset-assignment CSV under DIR (default: $TMMU_DSA_DIR or ../shared/data/dsa),
  2. the bundled transformer graphs (GPT-2 small training b8 s1024 and inference, TinyLlama-1.1B
     training b1 s2048), per arena, summed,
  3. random problems shaped like real graphs, from 500 up to --max-buffers (default 1000000),
     and each strategy's planning time per buffer at each size (how its cost grows),
  4. dense random problems of 20000 and 100000 buffers (about 852 live at once, large ones
     among them at every step), up to --max-buffers,
then 5. measures how closely optimal keeps time budgets of 10, 100 and 1000 ms (wall time,
     seeding included, against the budget) on minimalloc's J and 20,000 random buffers.
It prints each strategy's height, % over the lower bound (LB) and planning time; "P" marks a
height that optimal proved minimal, and the instance table ends with each strategy's total time.
On the instances, optimal searches --budget N nodes (default 400000, which brings the minimalloc
suite to its targets); elsewhere it keeps its default budget. Every solution, the time-budget
ones included, is checked by the independent validator (outside the timed region). Times are
one run each on this machine: compare strategies within one run, not across machines.

--json OUT writes every figure as JSON; with --json - the JSON goes to standard output and the
tables to standard error.
)";

using Clock = std::chrono::steady_clock;

struct Run {
    std::string strategy;
    uint64_t height = 0;
    double ms = 0;
    bool proven = false; // "optimal" proved the height minimal
};

// Where the human-readable tables go: standard output, or standard error when `--json -`
// takes standard output for the machine-readable report.
std::FILE* tables = stdout;

double over_percent(uint64_t height, uint64_t bound) {
    return bound ? (double(height) / double(bound) - 1.0) * 100.0 : 0.0;
}

Run run_strategy(const OffsetStrategy& s, const OffsetProblem& p, std::string_view what) {
    auto start = Clock::now();
    OffsetSolution sol = s.solve(p, interruptible_progress());
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    validate_solution(p, sol.offsets, fmt::format("{} ({})", what, s.name()));
    return {std::string(s.name()), sol.height, ms, sol.producer == "optimal (proven)"};
}

void print_header(std::string_view first) {
    fmt::print(tables, "{:<22} {:>8} {:>14}", first, "buffers", "LB");
    for (const OffsetStrategy* s : all_strategies())
        fmt::print(tables, " {:>20}", s->name());
    fmt::print(tables, "\n");
}

void print_row(std::string_view name, size_t n, uint64_t bound, const std::vector<Run>& runs) {
    fmt::print(tables, "{:<22} {:>8} {:>14}", name, n, bound);
    for (const Run& r : runs)
        fmt::print(tables, " {:>20}",
                   fmt::format("{}{:+.3f}% {:.1f}ms", r.proven ? "P " : "",
                               over_percent(r.height, bound), r.ms));
    fmt::print(tables, "\n");
}

nlohmann::json row_json(std::string_view name, size_t n, uint64_t bound,
                        const std::vector<Run>& runs) {
    nlohmann::json row{{"name", name}, {"buffers", n}, {"lower_bound", bound}};
    for (const Run& r : runs)
        row["strategies"][r.strategy] = {{"height", r.height},
                                         {"over_lb_pct", over_percent(r.height, bound)},
                                         {"ms", r.ms},
                                         {"proven", r.proven}};
    return row;
}

// optimal_budget: the node budget of "optimal" (0: its default).
std::vector<Run> run_all(const OffsetProblem& p, std::string_view what, uint64_t optimal_budget) {
    const OptimalStrategy optimal(
        OptimalOptions{optimal_budget ? optimal_budget : kDefaultOptimalBudget});
    std::vector<Run> runs;
    for (const OffsetStrategy* s : all_strategies())
        runs.push_back(run_strategy(s->name() == "optimal" ? optimal : *s, p, what));
    return runs;
}

nlohmann::json bench_instances(const std::string& dir, uint64_t optimal_budget) {
    namespace fs = std::filesystem;
    nlohmann::json rows = nlohmann::json::array();
    if (!fs::is_directory(dir)) {
        fmt::print(tables, "(no instance directory at {}: skipped; pass --data DIR)\n\n", dir);
        return rows;
    }
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".csv") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    fmt::print(tables, "== offset-assignment instances ({}) ==  cells: % over LB, planning time\n",
               dir);
    print_header("instance");
    std::vector<double> total_ms(all_strategies().size(), 0.0);
    for (const auto& f : files) {
        DsaProblem d = load_dsa_csv(f.string());
        uint64_t bound = lower_bound_bytes(d.problem);
        std::string name = f.parent_path().filename().string() + "/" + f.stem().string();
        auto runs = run_all(d.problem, name, optimal_budget);
        print_row(name, d.problem.buffers.size(), bound, runs);
        rows.push_back(row_json(name, d.problem.buffers.size(), bound, runs));
        for (size_t k = 0; k < runs.size(); ++k)
            total_ms[k] += runs[k].ms;
    }
    fmt::print(tables, "{:<22} {:>8} {:>14}", "total time", "", "");
    for (double ms : total_ms)
        fmt::print(tables, " {:>20}", fmt::format("{:.1f}ms", ms));
    fmt::print(tables, "\n(P: optimal proved the height minimal; optimal budget {} nodes)\n\n",
               optimal_budget);
    return rows;
}

struct GraphCase {
    std::string name;
    std::string config;
    uint64_t batch, seq;
    Mode mode;
};

// Sums each strategy's per-arena heights: the bytes the whole model needs.
nlohmann::json bench_graphs() {
    std::vector<GraphCase> cases{
        {"gpt2-small train b8s1024", "gpt2-small.json", 8, 1024, Mode::Training},
        {"gpt2-small infer b8s1024", "gpt2-small.json", 8, 1024, Mode::Inference},
        {"tinyllama train b1s2048", "tinyllama-1.1b.json", 1, 2048, Mode::Training},
    };
    nlohmann::json rows = nlohmann::json::array();
    std::vector<std::string> builds; // printed under the table
    fmt::print(tables, "== transformer graphs (all arenas summed) ==\n");
    print_header("graph");
    for (const GraphCase& c : cases) {
        ModelRequest request{c.mode, c.batch, c.seq};
        const auto start = std::chrono::steady_clock::now();
        LoadedModel model = load_model(app::resource_dir() + "/models/" + c.config, request);
        const double build_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        PlanOptions options;
        std::vector<Run> totals;
        uint64_t bound = 0;
        size_t buffers = 0;
        for (const OffsetStrategy* s : all_strategies()) {
            options.strategy = std::string(s->name());
            Plan plan = plan_model(model, c.mode, options, interruptible_progress());
            const PlanTotals sums = plan_totals(plan);
            totals.push_back(
                Run{options.strategy, sums.peak_bytes, double(plan.total_plan_ns) / 1e6, false});
            bound = sums.lower_bound;
            buffers = size_t(sums.buffers);
        }
        print_row(c.name, buffers, bound, totals);
        rows.push_back(row_json(c.name, buffers, bound, totals));
        rows.back()["build_ms"] = build_ms;
        builds.push_back(fmt::format("{}: graph built in {:.0f} ms (target < 1000 ms){}", c.name,
                                     build_ms, build_ms < 1000 ? "" : "  MISSED"));
    }
    for (const std::string& line : builds)
        fmt::print(tables, "{}\n", line);
    fmt::print(tables, "\n");
    return rows;
}

// A strategy slower than this at one size is not run at the next, 10x larger size, where it
// would take 10-20x as long (n log n work plus cache effects).
constexpr double kSkipAfterMs = 2000;

// How each strategy's cost grows: planning time per buffer at each size (flat for n, growing
// like log n for n log n work).
void print_time_per_buffer(const std::vector<size_t>& sizes,
                           const std::vector<std::vector<double>>& ns_per_buffer) {
    fmt::print(tables, "time per buffer (ns):\n{:>20}", "strategy");
    for (size_t n : sizes)
        fmt::print(tables, " {:>10}", n);
    fmt::print(tables, "\n");
    for (size_t i = 0; i < all_strategies().size(); ++i) {
        fmt::print(tables, "{:>20}", all_strategies()[i]->name());
        for (double ns : ns_per_buffer[i])
            fmt::print(tables, " {:>10}",
                       ns < 0 ? std::string("skipped") : fmt::format("{:.0f}", ns));
        fmt::print(tables, "\n");
    }
    fmt::print(tables, "\n");
}

// A table of generated problems, a row per size up to max_buffers: each strategy's planning
// time and height over the bound, then each strategy's time per buffer at each size. skip:
// whether a strategy slower than kSkipAfterMs at one size sits out the next (for sizes 10x
// apart).
nlohmann::json bench_sizes(std::string_view title, const std::vector<size_t>& sizes,
                           size_t max_buffers, bool skip,
                           const std::function<OffsetProblem(size_t)>& make_problem) {
    nlohmann::json rows = nlohmann::json::array();
    fmt::print(tables, "== {} ==  cells: planning time\n", title);
    fmt::print(tables, "{:>10} {:>14}", "buffers", "LB");
    for (const OffsetStrategy* s : all_strategies())
        fmt::print(tables, " {:>20}", s->name());
    fmt::print(tables, "\n");
    std::vector<double> last_ms(all_strategies().size(), 0.0);
    std::vector<std::vector<double>> ns_per_buffer(all_strategies().size()); // < 0: skipped
    for (size_t n : sizes) {
        if (n > max_buffers) break;
        OffsetProblem p = make_problem(n);
        uint64_t bound = lower_bound_bytes(p);
        fmt::print(tables, "{:>10} {:>14}", n, bound);
        nlohmann::json row{{"buffers", n}, {"lower_bound", bound}};
        for (size_t i = 0; i < all_strategies().size(); ++i) {
            const OffsetStrategy& s = *all_strategies()[i];
            if (skip && last_ms[i] > kSkipAfterMs) {
                fmt::print(tables, " {:>20}", "skipped (>20 s)");
                ns_per_buffer[i].push_back(-1);
                continue;
            }
            Run r = run_strategy(s, p, fmt::format("{} {}", title, n));
            last_ms[i] = r.ms;
            ns_per_buffer[i].push_back(r.ms * 1e6 / double(n));
            fmt::print(tables, " {:>20}",
                       fmt::format("{:.2f}ms {:+.2f}%", r.ms, over_percent(r.height, bound)));
            row["strategies"][r.strategy] = {{"height", r.height}, {"ms", r.ms}};
        }
        fmt::print(tables, "\n");
        std::fflush(tables); // each row as it finishes
        rows.push_back(row);
    }
    if (rows.empty())
        fmt::print(tables, "(no size up to --max-buffers)\n\n");
    else
        print_time_per_buffer({sizes.begin(), sizes.begin() + rows.size()}, ns_per_buffer);
    return rows;
}

nlohmann::json bench_scaling(size_t max_buffers) {
    return bench_sizes("scaling on realistic random problems (seed 1)",
                       {500, 1000, 10000, 100000, 1000000}, max_buffers, true,
                       [](size_t n) { return realistic_random_problem(1, n); });
}

// Dense problems (about 852 buffers live at every step, large ones among them), where the
// gaps between the large buffers decide the height. Sizes 5x apart: nothing is skipped.
nlohmann::json bench_dense(size_t max_buffers) {
    return bench_sizes("dense random problems (seed 7, about 852 live at once)", {20000, 100000},
                       max_buffers, false,
                       [](size_t n) { return dense_random_problem(7, n, 852); });
}

// How closely "optimal" keeps a time budget (--budget Nms): the wall time of the whole
// strategy, seeding included, against the budget, on minimalloc's densest instance (J) and
// on 20,000 realistic random buffers (where the improvement search runs).
nlohmann::json bench_time_budgets(const std::string& dir) {
    std::vector<std::pair<std::string, OffsetProblem>> cases;
    const std::string j = (std::filesystem::path(dir) / "minimalloc" / "J.1048576.csv").string();
    if (std::filesystem::exists(j)) cases.emplace_back("minimalloc J", load_dsa_csv(j).problem);
    cases.emplace_back("random 20000", realistic_random_problem(1, 20000));
    fmt::print(tables, "== time budgets of optimal ==  cells: wall time (overrun over budget)\n");
    fmt::print(tables, "{:<22}", "instance");
    for (uint64_t ms : {10, 100, 1000})
        fmt::print(tables, " {:>22}", fmt::format("{} ms", ms));
    fmt::print(tables, "\n");
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [name, p] : cases) {
        fmt::print(tables, "{:<22}", name);
        nlohmann::json row{{"name", name}};
        for (uint64_t ms : {10, 100, 1000}) {
            OptimalOptions options;
            options.time_budget_ms = ms;
            const auto start = Clock::now();
            const OptimalResult r = solve_optimal(p, options, interruptible_progress());
            const double took =
                std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            validate_solution(p, r.solution.offsets, fmt::format("{} (optimal, {} ms)", name, ms));
            fmt::print(tables, " {:>22}",
                       fmt::format("{:.1f} ms ({:+.1f}%)", took, (took / double(ms) - 1) * 100));
            row["budgets"].push_back({{"budget_ms", ms}, {"wall_ms", took}});
        }
        fmt::print(tables, "\n");
        rows.push_back(row);
    }
    fmt::print(tables, "\n");
    return rows;
}

std::string default_data_dir() {
    if (const char* env = std::getenv("TMMU_DSA_DIR")) return env;
    return "../shared/data/dsa";
}

} // namespace

int cmd_bench(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    std::string dir = args.value("--data").value_or(default_data_dir());
    const auto max_buffers_arg = args.value("--max-buffers");
    const size_t max_buffers =
        max_buffers_arg ? app::parse_positive(*max_buffers_arg, "--max-buffers") : 1000000;
    // Search nodes for "optimal": the bench reports reproducible heights, so no "ms" form.
    const auto budget_arg = args.value("--budget");
    const uint64_t optimal_budget =
        budget_arg ? app::parse_positive(*budget_arg, "--budget") : kBenchOptimalBudget;
    auto json_out = args.value("--json");
    args.positionals(0, 0);
    if (sends_one_output_to_stdout({{"--json", json_out}})) tables = stderr;
    nlohmann::json report;
    report["instances"] = bench_instances(dir, optimal_budget);
    report["graphs"] = bench_graphs();
    report["scaling"] = bench_scaling(max_buffers);
    report["dense"] = bench_dense(max_buffers);
    report["time_budgets"] = bench_time_budgets(dir);
    if (json_out) write_output(*json_out, json_text(report, 2) + "\n"); // names from file names
    return 0;
}

} // namespace tmmu::cli
