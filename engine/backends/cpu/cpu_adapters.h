#pragma once
// The CPU reference backend's adapters (seed 002, A3, A5): f32, synchronous, deterministic
// (every reduction runs in one fixed order, so the same inputs give the same bits), each call
// covering all rows of the step.
#include "runtime/adapter.h"
#include "runtime/param_block.h"

namespace tmmu::cpu {

// The static table: an entry for every opcode of kAllOpcodes, null elsewhere.
const runtime::AdapterTable& cpu_adapters();
const runtime::AdapterCapabilities& cpu_capabilities();

} // namespace tmmu::cpu
