#pragma once
// What ApplyPlan writes into every tensor it binds (seed 000's ZeroTensor_v1 and
// DebugFillTensor_v1), and the read-back that checks it.
//
// A debug pattern is a function of the arena and the byte's offset in it, never of the tensor:
// tensors that share bytes (views, alias groups, buffers reused over time) write the same value
// there, so the result does not depend on the fill order and every tensor reads back its own
// pattern. Both fills are deterministic: same plan, same seed, same bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tmmu {

enum class FillKind : uint8_t { Zero, Debug };

// Seed 000's execution modes as far as filling goes: a debug pattern is forbidden in the
// confidential and regulated modes, where only literal zeros may be written.
enum class DataPolicy : uint8_t { Standard, Confidential, Regulated };

std::string_view fill_kind_name(FillKind k);     // "zero", "debug"
std::string_view data_policy_name(DataPolicy p); // "standard", "confidential", "regulated"

struct FillSpec {
    FillKind kind = FillKind::Zero;
    uint64_t seed = 0; // the debug pattern's seed
};

// Throws Failure(InvalidArgument) at "fill" for a debug fill under a confidential or regulated
// policy; callers check before allocating or writing anything.
void check_fill_allowed(const FillSpec& fill, DataPolicy policy);

// Writes `size` bytes at `at`, which lies at byte `offset` of arena number `arena`.
void fill_bytes(const FillSpec& fill, uint32_t arena, uint64_t offset, std::byte* at,
                uint64_t size);

// The first of `size` bytes at `at` (arena offset `offset`) that does not hold what
// fill_bytes wrote there, as an index from `at`; `size` when all do.
uint64_t first_mismatch(const FillSpec& fill, uint32_t arena, uint64_t offset, const std::byte* at,
                        uint64_t size);

} // namespace tmmu
