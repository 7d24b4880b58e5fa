#pragma once
// The independent validator (seed 003 is_valid, in O(n log n) by a sweep over time keeping the
// live buffers ordered by offset). It trusts nothing the strategy says about itself.
#include "plan/offset_problem.h"

#include <functional>
#include <string>

namespace tmmu {

// Names buffer i for error messages ("tensor 'h3.attn.q' (t000123)").
using BufferNamer = std::function<std::string(size_t)>;

// Throws Failure:
//   ALIGNMENT_VIOLATION  offset % alignment != 0, or a pinned buffer moved
//   ADDRESS_COLLISION    two buffers alive at the same time overlap in bytes (Failure::step:
//                        the step they collide)
//   ARENA_TOO_SMALL      height exceeds p.capacity (Failure::step: the first step a buffer is
//                        live above it; the message names that buffer and its bytes)
//   ALLOCATION_OVERFLOW  offset + size overflows
//   INVALID_ARGUMENT     offsets.size() != buffers.size()
// arena names the arena in messages.
void validate_solution(const OffsetProblem& p, const std::vector<uint64_t>& offsets,
                       std::string_view arena, const BufferNamer& namer = {});

} // namespace tmmu
