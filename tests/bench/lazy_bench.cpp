// tmmu-lazy-bench: the bundled lazy programs (resources/programs) side by side with and without
// checkpointing, compiled regions and fusion (issue 18, item 7; lazy/run_comparison.h): kernels
// run, fused kernels, variant cache hits and misses, ops checkpoint replays made, the largest
// arena our planner gives a forced plan, the pool's peak, and whether the reads are the same
// bit for bit as the plain run's. Byte counts are exact; the times are machine-bound, so this
// is a program to run, not a test.
#include "lazy/run_comparison.h"

#include "core/units.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <vector>

int main() {
    using namespace tmmu;
    using namespace tmmu::lazy;
    std::vector<std::filesystem::path> files;
    for (const auto& entry :
         std::filesystem::directory_iterator(TMMU_SOURCE_DIR "/resources/programs"))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    fmt::print("{:<26} {:<22} {:>7} {:>6} {:>7} {:>8} {:>11} {:>11} {:>10} {:>6}  {}\n", "program",
               "run", "kernels", "fused", "cache", "replayed", "arena", "pool peak", "time",
               "reads", "result");
    for (const auto& f : files) {
        const LazyProgram p = load_lazy_program(f.string());
        const std::vector<ComparedRun> runs = compare_runs(p);
        for (const ComparedRun& r : runs) {
            const EngineStats& s = r.stats;
            const bool plain = &r == &runs.front();
            fmt::print("{:<26} {:<22} {:>7} {:>6} {:>7} {:>8} {:>11} {:>11} {:>7.1f} ms {:>6}  "
                       "{}\n",
                       plain ? p.name : "", r.name, s.kernels, s.fused_groups,
                       s.compiled_calls ? fmt::format("{}/{}", s.cache_hits, s.cache_misses)
                                        : std::string("-"),
                       s.recomputed_ops, format_bytes(s.planned_peak_bytes),
                       format_bytes(s.pool_peak_bytes), r.ms,
                       plain          ? ""
                       : r.same_reads ? "same"
                                      : "DIFFER",
                       r.failure.empty() ? "ok" : r.failure.substr(0, 40));
        }
    }
    fmt::print("\ncache: hits/misses of the compiled functions' variant caches\n");
}
