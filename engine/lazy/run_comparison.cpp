#include "lazy/run_comparison.h"

#include <algorithm>
#include <chrono>

namespace tmmu::lazy {
namespace {

struct Config {
    const char* name;
    EngineOptions options;
};

const Config kConfigs[] = {
    {"plain", {.checkpoint = CheckpointPolicy::Keep, .compile = false}},
    {"checkpointed", {.checkpoint = CheckpointPolicy::Recompute, .compile = false}},
    {"compiled, unfused", {.checkpoint = CheckpointPolicy::Keep, .fuse = false}},
    {"compiled", {.checkpoint = CheckpointPolicy::Keep}},
    {"compiled, checkpointed", {.checkpoint = CheckpointPolicy::Recompute}},
};

bool uses(const std::vector<Statement>& body, StatementKind kind) {
    return std::any_of(body.begin(), body.end(),
                       [&](const Statement& s) { return s.kind == kind || uses(s.body, kind); });
}

} // namespace

std::vector<ComparedRun> compare_runs(const LazyProgram& program, const Progress& progress) {
    const bool checkpoints = uses(program.program, StatementKind::Checkpoint);
    const bool compiles = uses(program.program, StatementKind::Compile);
    std::vector<ComparedRun> out;
    Digest plain{};
    for (const Config& c : kConfigs) {
        const bool ckpt = c.options.checkpoint == CheckpointPolicy::Recompute;
        if ((ckpt && !checkpoints) || (c.options.compile && !compiles)) continue;
        const auto t0 = std::chrono::steady_clock::now();
        const ProgramRun run = run_lazy_program_to_failure(program, c.options, {}, progress);
        ComparedRun r{c.name, c.options, run.stats, true, run.failure, 0};
        r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                   .count();
        if (out.empty()) plain = run.result_hash;
        r.same_reads = run.result_hash == plain;
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace tmmu::lazy
