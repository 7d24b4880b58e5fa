#pragma once
// Seed 000's ApplyPlan_v1, ZeroTensor_v1 / DebugFillTensor_v1 and CommitExecution_v1 on memory
// the caller owns (the runtime's arena handles): each tensor's logical address (arena, offset)
// becomes the pointer base + offset, every tensor is filled in tensor-map order (ascending id),
// and a commit seals what was done as a state hash. Pointers never enter the hash, so the same
// plan and fill commit the same state in every run on every machine.
#include "apply/fill.h"
#include "core/digest.h"
#include "core/progress.h"
#include "plan/plan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

// One arena's memory as the runtime hands it over: `size` bytes at `base`.
struct ArenaMemory {
    std::string name;
    std::byte* base = nullptr;
    uint64_t size = 0;
};

struct ApplyOptions {
    FillSpec fill;
    DataPolicy policy = DataPolicy::Standard;
};

class MemoryBinding {
  public:
    // Binds and fills every tensor of `plan`. Throws Failure:
    //  - InvalidArgument at "fill" for a debug fill under a confidential or regulated policy
    //    (check_fill_allowed, before anything is written), at "arena 'X'" for an arena of the
    //    plan that has no memory, memory for an arena the plan does not have or given twice, or
    //    no base for a non-empty arena;
    //  - ArenaTooSmall at "arena 'X'" for memory smaller than the arena's committed bytes
    //    (its peak, in whole pages when it is paged);
    //  - AlignmentViolation at "tensor 'T'" when base + offset breaks the tensor's alignment
    //    (a base that is not aligned enough);
    //  - Cancelled while filling.
    MemoryBinding(const Plan& plan, std::vector<ArenaMemory> arenas, const ApplyOptions& options,
                  const Progress& progress = {});

    bool is_bound(std::string_view tensor_id) const;
    // Throws Failure(InvalidArgument) naming the tensor when the plan has no such tensor.
    std::byte* get_ptr(std::string_view tensor_id) const;

    size_t tensor_count() const { return tensors_.size(); }
    uint64_t filled_bytes() const { return filled_bytes_; }
    const ApplyOptions& options() const { return options_; }
    const std::vector<ArenaMemory>& arenas() const { return arenas_; }

    // Reads every tensor back: "" when each holds what its fill wrote, else the first tensor
    // (ascending id) that does not and where ("tensor 'T' byte 12 of 64"). Throws Cancelled.
    std::string verify(const Progress& progress = {}) const;

    // CommitExecution_v1: a full memory fence (writes before it are visible to whoever reads
    // the arenas next), then the state hash over the plan hash, the policy, the fill, the arenas'
    // names and committed bytes (the plan's, not the sizes of the memory given) and the bytes
    // filled: the same plan and fill commit the same state on any memory. Committing again
    // without new writes gives the same hash: the commit changes nothing it covers.
    Digest commit() const;

  private:
    struct Bound {
        std::string id;
        uint32_t arena = 0;
        uint64_t offset = 0, size = 0;
        std::byte* ptr = nullptr;
    };
    const Bound* find(std::string_view tensor_id) const;

    Digest plan_hash_{};
    ApplyOptions options_;
    std::vector<ArenaMemory> arenas_; // in the plan's arena order
    std::vector<uint64_t> committed_; // per arena: its committed bytes in the plan
    std::vector<Bound> tensors_;      // ascending id, as the plan lists them
    uint64_t filled_bytes_ = 0;
};

} // namespace tmmu
