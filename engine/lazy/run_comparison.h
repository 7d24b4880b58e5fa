#pragma once
// One lazy program run side by side with and without checkpointing, compiled regions and fusion
// (issue 18, item 7): what `tmmu-lazy-bench` prints and the studio's run comparison shows.
#include "lazy/program.h"

#include <string>
#include <vector>

namespace tmmu::lazy {

struct ComparedRun {
    std::string
        name; // "plain", "checkpointed", "compiled, unfused", "compiled", "compiled, checkpointed"
    EngineOptions options;
    EngineStats stats;
    bool same_reads = true; // the reads' bits equal the plain run's (result_hash)
    std::string failure;    // the error that stopped the run, "" when none
    double ms = 0;          // wall time of the run (machine-bound)
};

// The plain run (checkpoints kept, nothing compiled) first, then each configuration the
// program's statements make different: checkpointing when it has checkpoint statements,
// compiled without and with fusion when it has compile statements, and compiled with
// checkpointing when it has both. `progress`'s cancel flag stops it between statements.
std::vector<ComparedRun> compare_runs(const LazyProgram& program, const Progress& progress = {});

} // namespace tmmu::lazy
