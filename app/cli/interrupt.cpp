#include "interrupt.h"

#include <atomic>
#include <csignal>

namespace tmmu::cli {
namespace {

// Lock-free, so storing to it is safe in a signal handler.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_interrupt(int signal) {
    g_interrupted.store(true, std::memory_order_relaxed);
    std::signal(signal, SIG_DFL); // the next one is not caught
}

} // namespace

void install_interrupt_handlers() {
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
}

Progress interruptible_progress() {
    Progress p;
    p.cancel_flag = &g_interrupted;
    return p;
}

} // namespace tmmu::cli
