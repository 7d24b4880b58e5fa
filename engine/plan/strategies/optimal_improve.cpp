#include "plan/strategies/optimal_improve.h"

#include <algorithm>

namespace tmmu::optimal {

namespace {

// Nodes one window's decision gets, split between the static orders: a window that is not
// solved quickly is usually infeasible at its target, and a smaller step is cheaper to try.
constexpr uint64_t kWindowNodes = uint64_t{3} * 1024;
constexpr uint64_t kFirstStep = 64;  // first target: top - top / kFirstStep
constexpr uint64_t kLastStep = 4096; // stop when the step falls below top / kLastStep
// Every window scans the whole problem (O(n log window)): at most this many are tried, which
// bounds the phase's time on huge problems whatever the node budget.
constexpr size_t kMaxWindows = 256;

struct Interval {
    uint64_t begin, end;
};

// Sorted, disjoint union of the lifetimes of the given buffers.
std::vector<Interval> lifetimes(const OffsetProblem& p, const std::vector<uint32_t>& buffers) {
    std::vector<Interval> v;
    v.reserve(buffers.size());
    for (uint32_t i : buffers)
        v.push_back({p.buffers[i].begin, p.buffers[i].end});
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
        return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
    });
    std::vector<Interval> out;
    for (const Interval& x : v)
        if (!out.empty() && x.begin < out.back().end)
            out.back().end = std::max(out.back().end, x.end);
        else
            out.push_back(x);
    return out;
}

bool meets(const std::vector<Interval>& u, const Buffer& b) {
    auto it = std::upper_bound(u.begin(), u.end(), b.begin,
                               [](uint64_t t, const Interval& x) { return t < x.end; });
    return it != u.end() && it->begin < b.end;
}

uint64_t top_of(const OffsetProblem& p, const std::vector<uint32_t>& members,
                const std::vector<uint64_t>& offsets) {
    uint64_t h = 0;
    for (uint32_t m : members)
        h = std::max(h, offsets[m] + p.buffers[m].size);
    return h;
}

// The window for target: every member reaching above it, then the highest members alive at
// the same times (ties by index) up to kWindowItems. Empty when the first part alone is larger.
std::vector<uint32_t> pick_window(const OffsetProblem& p, const std::vector<uint32_t>& members,
                                  const std::vector<uint64_t>& offsets, uint64_t target,
                                  size_t size) {
    std::vector<uint32_t> window, candidates;
    for (uint32_t m : members)
        if (offsets[m] + p.buffers[m].size > target) window.push_back(m);
    if (window.size() > size) return {};
    const std::vector<Interval> must = lifetimes(p, window);
    for (uint32_t m : members)
        if (offsets[m] + p.buffers[m].size <= target && meets(must, p.buffers[m]))
            candidates.push_back(m);
    auto top = [&](uint32_t i) { return offsets[i] + p.buffers[i].size; };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](uint32_t a, uint32_t b) { return top(a) > top(b); });
    const size_t room = size - window.size();
    window.insert(window.end(), candidates.begin(),
                  candidates.begin() + std::min(room, candidates.size()));
    std::sort(window.begin(), window.end());
    return window;
}

// The window as a problem of its own: its buffers free (indices 0..window.size()), then every
// other buffer alive at the same times pinned where it is.
OffsetProblem window_problem(const OffsetProblem& p, const std::vector<uint32_t>& window,
                             const std::vector<uint64_t>& offsets) {
    OffsetProblem sub;
    std::vector<char> in(p.buffers.size(), 0);
    for (uint32_t w : window) {
        in[w] = 1;
        Buffer b = p.buffers[w];
        b.pinned.reset();
        sub.buffers.push_back(b);
    }
    const std::vector<Interval> span = lifetimes(p, window);
    for (uint32_t j = 0; j < p.buffers.size(); ++j) {
        const Buffer& b = p.buffers[j];
        if (in[j] || b.size == 0 || !meets(span, b)) continue;
        Buffer pin = b;
        pin.pinned = b.pinned ? *b.pinned : offsets[j];
        sub.buffers.push_back(pin);
    }
    return sub;
}

// Places the window's buffers under target around the pins; on success writes them to offsets.
bool resolve(const OffsetProblem& p, const std::vector<uint32_t>& window, uint64_t target,
             NodeBudget& budget, std::vector<uint64_t>& offsets) {
    const OffsetProblem sub = window_problem(p, window, offsets);
    std::vector<uint64_t> placed(sub.buffers.size(), 0);
    for (size_t k = 0; k < window.size(); ++k)
        placed[k] = offsets[window[k]];
    const uint64_t total_limit = budget.limit;
    const uint64_t end = std::min(total_limit, budget.spent + kWindowNodes);
    for (Component& c : split_components(sub)) {
        uint64_t h = 0;
        for (const Item& it : c.items)
            h = std::max(h, placed[it.buffer] + it.size);
        if (h <= target) continue;
        prepare_component(sub, c);
        Outcome outcome = Outcome::OutOfNodes;
        const uint64_t slice = std::max<uint64_t>(1, (end - std::min(end, budget.spent)) / 3);
        for (size_t order = 0; order < c.ranks.size() && outcome == Outcome::OutOfNodes; ++order) {
            if (budget.stopped || budget.spent >= end) break;
            budget.limit = std::min(end, budget.spent + slice);
            outcome = search_component(c, order, target, budget, placed);
            budget.limit = total_limit;
        }
        if (outcome != Outcome::Found) return false;
    }
    for (size_t k = 0; k < window.size(); ++k)
        offsets[window[k]] = placed[k];
    return true;
}

} // namespace

uint64_t improve_group(const OffsetProblem& p, const std::vector<uint32_t>& members, uint64_t floor,
                       NodeBudget& budget, std::vector<uint64_t>& offsets) {
    uint64_t top = top_of(p, members, offsets);
    uint64_t step = std::max<uint64_t>(1, top / kFirstStep);
    const uint64_t last = std::max<uint64_t>(1, top / kLastStep);
    for (size_t windows = 0;
         windows < kMaxWindows && top > floor && step >= last && budget.spent < budget.limit &&
         budget.work < budget.work_limit && !budget.stopped;
         ++windows) {
        // A window's set-up scans the whole problem without counting nodes: poll here too, so
        // a time budget or a cancel also stops a run of cheap windows.
        if (budget.poll && budget.poll()) {
            budget.stopped = true;
            break;
        }
        const uint64_t target = top - std::min(step, top - floor);
        bool ok = false;
        for (size_t size = kWindowItems / 2; size <= kWindowItems && !ok; size *= 2) {
            const std::vector<uint32_t> window = pick_window(p, members, offsets, target, size);
            ok = !window.empty() && resolve(p, window, target, budget, offsets);
        }
        if (ok)
            top = top_of(p, members, offsets);
        else
            step /= 2;
    }
    return top;
}

} // namespace tmmu::optimal
