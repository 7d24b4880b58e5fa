// tmmu-lazy-bench: the bundled lazy programs (resources/programs) side by side with and without
// checkpointing, compiled regions and fusion (issue 18, item 7): kernels run, fused kernels,
// variant cache hits and misses, ops checkpoint replays made, the largest arena our planner
// gives a forced plan, the pool's peak, and whether the reads are the same bit for bit as the
// plain run's (checkpoints kept, nothing compiled). A program gets the rows its statements make
// different. Byte counts are exact; the times are machine-bound, so this is a program to run,
// not a test.
#include "lazy/program.h"

#include "core/units.h"

#include "bench_rows.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <vector>

namespace {

using namespace tmmu;
using namespace tmmu::lazy;

struct Config {
    const char* name;
    EngineOptions options;
};

// Plain first: every other row's reads are compared with it.
const Config kConfigs[] = {
    {"plain", {.checkpoint = CheckpointPolicy::Keep, .compile = false}},
    {"checkpointed", {.checkpoint = CheckpointPolicy::Recompute, .compile = false}},
    {"compiled, unfused", {.checkpoint = CheckpointPolicy::Keep, .fuse = false}},
    {"compiled", {.checkpoint = CheckpointPolicy::Keep}},
};

bool uses(const std::vector<Statement>& body, StatementKind kind) {
    return std::any_of(body.begin(), body.end(),
                       [&](const Statement& s) { return s.kind == kind || uses(s.body, kind); });
}

// A configuration runs when the program has what it switches: checkpoint or compile statements.
bool applies(const Config& c, bool checkpoints, bool compiles) {
    const bool ckpt = c.options.checkpoint == CheckpointPolicy::Recompute;
    return (!ckpt || checkpoints) && (!c.options.compile || compiles);
}

} // namespace

int main() {
    std::vector<std::filesystem::path> files;
    for (const auto& entry :
         std::filesystem::directory_iterator(TMMU_SOURCE_DIR "/resources/programs"))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    fmt::print("{:<26} {:<17} {:>7} {:>6} {:>7} {:>8} {:>11} {:>11} {:>10} {:>6}  {}\n", "program",
               "run", "kernels", "fused", "cache", "replayed", "arena", "pool peak", "time",
               "reads", "result");
    for (const auto& f : files) {
        const LazyProgram p = load_lazy_program(f.string());
        const bool checkpoints = uses(p.program, StatementKind::Checkpoint);
        const bool compiles = uses(p.program, StatementKind::Compile);
        ProgramRun plain;
        bool first = true;
        for (const Config& c : kConfigs) {
            if (!applies(c, checkpoints, compiles)) continue;
            const auto t0 = bench::Clock::now();
            ProgramRun run = run_lazy_program_to_failure(p, c.options);
            const double ms = bench::ms_since(t0);
            const EngineStats& s = run.stats;
            const char* reads = first                                  ? ""
                                : run.result_hash == plain.result_hash ? "same"
                                                                       : "DIFFER";
            fmt::print("{:<26} {:<17} {:>7} {:>6} {:>7} {:>8} {:>11} {:>11} {:>7.1f} ms {:>6}  "
                       "{}\n",
                       first ? p.name : "", c.name, s.kernels, s.fused_groups,
                       s.compiled_calls ? fmt::format("{}/{}", s.cache_hits, s.cache_misses)
                                        : std::string("-"),
                       s.recomputed_ops, format_bytes(s.planned_peak_bytes),
                       format_bytes(s.pool_peak_bytes), ms, reads,
                       run.failure.empty() ? "ok" : run.failure.substr(0, 40));
            if (first) plain = std::move(run);
            first = false;
        }
    }
    fmt::print("\ncache: hits/misses of the compiled functions' variant caches\n");
}
