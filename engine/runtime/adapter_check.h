#pragma once
// A backend's load-time check of a plan against its adapter table and capabilities (seed 002,
// A3: "plan load validates every instruction opcode against the backend's table"; A9.4: a
// batch above an adapter's max_batch_size is refused at route time). A plan that passes runs
// without any per-token check or fallback.
#include "runtime/adapter.h"

#include <cstdint>
#include <string_view>

namespace tmmu::runtime {

// Slots one step of `plan` serves: a decode step runs every active slot (its rows), a prefill
// step one request's prompt.
uint32_t slots_per_step(const ExecutionPlan& plan);

// UNSUPPORTED_OPCODE naming the instruction and opcode when `table` has no adapter for it;
// BATCH_UNSUPPORTED naming them, the slots and the limit when the adapter's capability
// (supports_batch false: 1; else max_batch_size, 0 meaning no limit) is below
// slots_per_step(plan); UNSUPPORTED_OPCODE too for an attention instruction whose RoPE scaling
// the adapter does not compute. `backend` names the backend in messages ("cpu", "cuda").
void check_backend_supports(const ExecutionPlan& plan, const AdapterTable& table,
                            const AdapterCapabilities& capabilities, std::string_view backend);

} // namespace tmmu::runtime
