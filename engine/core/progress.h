#pragma once
// Progress and cancel hooks for long-running engine work (planning big graphs, search).
// The engine never blocks on them: it calls report() now and then and polls cancelled().
#include <atomic>
#include <functional>
#include <string>
#include <string_view>

namespace tmmu {

struct Progress {
    // fraction in [0, 1]; stage is a short human-readable label ("liveness", "arena gradients").
    std::function<void(double fraction, std::string_view stage)> on_progress;
    const std::atomic<bool>* cancel_flag = nullptr;

    void report(double fraction, std::string_view stage) const {
        if (on_progress) on_progress(fraction, stage);
    }
    bool cancelled() const { return cancel_flag && cancel_flag->load(std::memory_order_relaxed); }
    // Throws Failure(Cancelled) naming the stage when cancellation was requested.
    void check_cancel(std::string_view stage) const;
    // The same hooks for one part of longer work: the part's fractions [0, 1] report as
    // [from, to] of the whole, so work done in parts never runs the bar back. A non-empty
    // `label` goes before each of the part's stages ("label: stage").
    Progress part(double from, double to, std::string_view label = {}) const;
};

} // namespace tmmu
