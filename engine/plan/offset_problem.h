#pragma once
// The offset-assignment problem every strategy solves: buffers with fixed half-open lifetimes
// [begin, end) and sizes, to be given byte offsets so that buffers alive at the same time never
// overlap, minimising the height max(offset + size). One problem per arena.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

struct Buffer {
    uint64_t begin = 0;               // first time step the buffer is live
    uint64_t end = 0;                 // first time step it is dead again (end > begin)
    uint64_t size = 0;                // bytes
    uint64_t alignment = 1;           // power of two; offset % alignment == 0
    std::optional<uint64_t> pinned{}; // fixed offset the strategy must keep
};

// Buffer index is identity: strategies break every tie by lower index, so callers order
// buffers by their own stable key (tensor id, CSV row) to make plans deterministic.
struct OffsetProblem {
    std::vector<Buffer> buffers;
    uint64_t capacity = UINT64_MAX;
};

struct OffsetSolution {
    std::vector<uint64_t> offsets; // offsets[i] for buffers[i]
    uint64_t height = 0;           // max(offset + size), 0 when empty
    std::string producer;          // strategy that produced it ("auto" reports its winner)
};

// The last time step a lifetime may end at: plans store steps as 32-bit values.
inline constexpr uint64_t kMaxTimeStep = UINT32_MAX;

// max over time of the total size of live buffers: no valid plan is lower. O(n log n).
uint64_t lower_bound_bytes(const OffsetProblem& p);
// A tighter bound where sizes are not multiples of the alignment: offsets are multiples of the
// smallest alignment A, so of the buffers live at one time, all but the topmost take their size
// rounded up to A. max over time of (rounded sizes of the live buffers - the largest rounding
// among them). At least lower_bound_bytes; equal when every size is a multiple of A. O(n log n).
uint64_t aligned_lower_bound_bytes(const OffsetProblem& p);
// max(offset + size) over buffers; overflow-checked.
uint64_t solution_height(const OffsetProblem& p, const std::vector<uint64_t>& offsets);
// Throws INVALID_ARGUMENT for an empty lifetime (end <= begin), ALIGNMENT_VIOLATION for an
// alignment that is not a power of two or a pin off its alignment, naming "<where> buffer <i>",
// and ADDRESS_COLLISION for two pinned buffers that share bytes while both live (no plan could
// keep both, and the lower bound would count both), naming both. Strategies call it first.
void check_offset_problem(const OffsetProblem& p, std::string_view where);

} // namespace tmmu
