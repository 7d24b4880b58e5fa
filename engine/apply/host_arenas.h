#pragma once
// Host memory for every arena of a plan, as a runtime without a device would give it to
// ApplyPlan (apply/memory_binding.h): each arena's committed bytes (its peak, in whole pages when
// it is paged), aligned to the largest alignment its config or any of its tensors asks for.
#include "apply/memory_binding.h"
#include "plan/plan.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tmmu {

class HostArenas {
  public:
    // Throws Failure(DeviceError) at "arena 'X'" when the host cannot give an arena its bytes,
    // and before allocating anything when the arenas together need more than the memory the
    // host has available (allocating them would only let the kernel kill the process later).
    explicit HostArenas(const Plan& plan);

    // What the constructor allocates for `plan`: every arena's committed bytes, summed.
    // Throws Failure(AllocationOverflow) when the sum passes 2^64 - 1.
    static uint64_t bytes_needed(const Plan& plan);

    std::vector<ArenaMemory> memory() const;
    uint64_t total_bytes() const { return total_; }

  private:
    struct Free {
        std::align_val_t alignment;
        void operator()(std::byte* p) const;
    };
    struct Block {
        std::string name;
        uint64_t size = 0;
        std::unique_ptr<std::byte, Free> data;
    };
    std::vector<Block> blocks_;
    uint64_t total_ = 0;
};

} // namespace tmmu
