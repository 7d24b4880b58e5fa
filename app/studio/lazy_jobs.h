#pragma once
// What the studio asks the token/effect engine (no Qt): run a lazy program and turn its trace
// into what the views show. The pool's buffers over the trace's events become the plan on
// screen (planned by our planner, event i at plan time i), so the arena, live-range and memory
// views show the same run the token graph does.
#include "planning.h"

#include "lazy/program.h"
#include "lazy/run_comparison.h"

#include <memory>
#include <string>

namespace tmmu::studio {

struct LazyShown {
    std::string path;
    std::string name;
    std::shared_ptr<const lazy::Trace> trace;
    std::vector<lazy::HostRead> reads;
    lazy::EngineStats stats;
    std::string trace_hash;
    std::string failure; // the named error that stopped the program; empty when it ran through
    PlanOutcome buffers; // null plan when the program made no buffer
    // The program with and without checkpointing, compile and fusion (the run shown above is
    // the default one: checkpoints replayed, compile statements compiled).
    std::vector<lazy::ComparedRun> comparison;
};

// Whether the file's first bytes look like a lazy program (format detection by content).
bool looks_like_lazy_program_file(const std::string& path);
// Loads and runs; a malformed file throws Failure, a program that breaks an engine rule comes
// back with its trace up to the error and `failure` set.
LazyShown run_lazy_job(const std::string& path, const Progress& progress);

} // namespace tmmu::studio
