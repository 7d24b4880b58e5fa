#pragma once
// Ctrl+C (SIGINT) and SIGTERM cancel long work cleanly: the engine polls the flag these set, the
// command ends with CANCELLED (exit status 19) and leaves no half-written output (every file is
// written atomically at the end). A second signal ends the process at once.
#include "core/progress.h"

namespace tmmu::cli {

void install_interrupt_handlers();
// Progress for engine calls the user may interrupt: its cancel flag is the handlers'.
Progress interruptible_progress();

} // namespace tmmu::cli
