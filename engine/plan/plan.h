#pragma once
// A Plan is immutable data: every view, report and file format reads it; nothing edits it.
#include "core/digest.h"
#include "ir/dynamic_dims.h"
#include "ir/graph.h"
#include "liveness/activation_retention.h"
#include "liveness/liveness.h"
#include "plan/offset_problem.h"
#include "plan/shard_spec.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tmmu {

struct ArenaConfig {
    std::string name;
    uint64_t capacity = UINT64_MAX;
    uint64_t alignment = 128; // bytes, power of two; the seed's default
    // Seed 000 I.B's page_size: 0 for none, else a power of two; the arena is backed by whole
    // pages (a device's allocation granularity, 2 MiB for CUDA's virtual memory), so it holds
    // its peak rounded up to a page, and only the whole pages inside its capacity are usable.
    uint64_t page_size = 0;

    // The bytes a plan may reach: the capacity, rounded down to whole pages.
    uint64_t usable_capacity() const {
        return page_size == 0 ? capacity : capacity - capacity % page_size;
    }
    // The bytes the arena holds for a plan of this peak: the peak rounded up to whole pages.
    // Never above usable_capacity() for a plan that fits, so it cannot overflow there.
    uint64_t committed_bytes(uint64_t peak) const {
        return page_size == 0 || peak % page_size == 0 ? peak : peak + page_size - peak % page_size;
    }
};

struct ArenaMetrics {
    uint64_t peak_bytes = 0;             // height of the plan in this arena
    uint64_t lower_bound = 0;            // max live bytes over time: no plan can be lower
    uint32_t slot_count = 0;             // logical slots from linear scan (== max_live, checked)
    uint32_t max_live = 0;               // max simultaneously live buffers
    uint32_t buffers = 0;                // storages placed
    uint32_t tensors = 0;                // tensors mapped into this arena
    double peak_over_bound = 1.0;        // peak_bytes / lower_bound (1.0 when both are 0)
    double reuse_ratio = 0.0;            // 1 - slots / tensors (seed step 6)
    double internal_fragmentation = 0.0; // (peak_bytes - lower_bound) / peak_bytes
    uint64_t plan_ns = 0;                // wall time of the strategy (not deterministic)

    // Fills the three ratios from the integer fields; the planner and checkpoint restore share
    // it so a restored plan compares equal to the original.
    void derive_ratios();
};

struct ArenaPlan {
    ArenaConfig config;
    OffsetProblem problem;                 // buffers ordered by their stable key
    std::vector<std::string> buffer_names; // per buffer: its root tensor's id or CSV row id
    OffsetSolution solution;               // validated
    std::vector<uint32_t> slot_of_buffer;  // logical slot from the seed's linear scan
    std::string strategy;                  // strategy that produced the solution (auto: winner)
    ArenaMetrics metrics;
};

struct PlannedTensor {
    std::string id;
    std::string name;
    Role role = Role::Activation;
    uint32_t arena = 0;  // index into Plan::arenas
    uint32_t buffer = 0; // index into that arena's problem.buffers
    uint32_t slot = 0;
    uint64_t offset = 0; // byte offset in the arena (buffer offset + view offset)
    uint64_t size = 0;
    uint64_t alignment = 0;
    Lifetime life;
};

// Memory over time, for charts: at each time point, per arena, the bytes of live buffers and
// the high-water mark (top of the highest live buffer).
struct MemorySeries {
    std::vector<uint64_t> times;                   // steps (graphs) or event times (CSV)
    std::vector<std::vector<uint64_t>> live_bytes; // [arena][point]
    std::vector<std::vector<uint64_t>> high_water; // [arena][point]
};

struct Plan {
    std::string source;       // model path or name
    std::optional<Mode> mode; // empty for offset-assignment problems (CSV)
    std::string strategy;     // as requested ("auto", "slots", ...)
    Digest ir_hash{};
    Digest replay_token{};
    Digest plan_hash{};
    ShardSpec shard; // the rank this plan is for (single_rank: the run's only one)
    // The binding of the model's dynamic dimensions the plan was made at (seed 000, II.H);
    // empty for fixed shapes. The IR hash covers it.
    DimBinding dims;
    // Forward activations held into the backward pass (seed 000's activation_retention_ratio);
    // empty for offset problems, which have no phases.
    std::optional<ActivationRetention> retention;
    std::vector<std::string> execution_order; // node ids of the schedule (empty for CSV)
    std::vector<ArenaPlan> arenas;
    std::vector<PlannedTensor> tensors; // ascending id
    MemorySeries series;
    std::vector<std::string> notes; // from liveness and planning
    uint64_t total_plan_ns = 0;
};

} // namespace tmmu
