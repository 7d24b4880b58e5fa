// tmmu-lazy-bench: the bundled lazy programs (resources/programs) side by side with and without
// checkpointing (issue 18, item 7): kernels run, ops the replays made, the largest arena our
// planner gives a forced plan, the pool's peak, and whether the reads are the same bit for
// bit. Compiled regions and fusion add their columns when they exist. Byte counts are exact;
// the times are machine-bound, so this is a program to run, not a test.
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

struct Measured {
    ProgramRun run;
    uint64_t kernels = 0; // pure ops run (trace events of kind Op)
    double ms = 0;
};

Measured measure(const LazyProgram& p, CheckpointPolicy policy) {
    const auto t0 = bench::Clock::now();
    Measured m{run_lazy_program_to_failure(p, EngineOptions{.checkpoint = policy})};
    m.ms = bench::ms_since(t0);
    m.kernels =
        uint64_t(std::count_if(m.run.trace.events.begin(), m.run.trace.events.end(),
                               [](const TraceEvent& e) { return e.kind == EventKind::Op; }));
    return m;
}

bool same_reads(const ProgramRun& a, const ProgramRun& b) {
    if (a.reads.size() != b.reads.size()) return false;
    for (size_t i = 0; i < a.reads.size(); ++i)
        if (a.reads[i].values != b.reads[i].values) return false;
    return true;
}

} // namespace

int main() {
    std::vector<std::filesystem::path> files;
    for (const auto& entry :
         std::filesystem::directory_iterator(TMMU_SOURCE_DIR "/resources/programs"))
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    fmt::print("{:<22} {:>9} {:>8} {:>8} {:>11} {:>11} {:>10} {:>8}  {}\n", "program", "policy",
               "kernels", "replayed", "arena", "pool peak", "time", "reads", "result");
    for (const auto& f : files) {
        const LazyProgram p = load_lazy_program(f.string());
        const Measured keep = measure(p, CheckpointPolicy::Keep);
        const Measured recompute = measure(p, CheckpointPolicy::Recompute);
        for (const Measured* m : {&keep, &recompute}) {
            const EngineStats& s = m->run.stats;
            fmt::print("{:<22} {:>9} {:>8} {:>8} {:>11} {:>11} {:>7.1f} ms {:>8}  {}\n",
                       m == &keep ? p.name : "", checkpoint_policy_name(m->run.checkpoint),
                       m->kernels, s.recomputed_ops, format_bytes(s.planned_peak_bytes),
                       format_bytes(s.pool_peak_bytes), m->ms,
                       m == &keep                            ? ""
                       : same_reads(keep.run, recompute.run) ? "same"
                                                             : "DIFFER",
                       m->run.failure.empty() ? "ok" : m->run.failure.substr(0, 40));
        }
    }
}
