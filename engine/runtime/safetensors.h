#pragma once
// Weights from a Hugging Face safetensors file: an 8-byte little-endian header length, a JSON
// header naming each tensor's dtype, shape and byte range, then the raw data. F32, F16 and
// BF16 tensors are read (converted to f32); a "transformer." prefix on GPT-2 names is accepted.
#include "runtime/weights.h"

#include <string>

namespace tmmu::runtime {

// Every plan weight must be in the file with the plan's shape (a tied lm head is the token
// embedding). IO_ERROR when the file cannot be read; INVALID_IR_SHAPES naming the file and the
// tensor for a malformed header, a byte range outside the data, an unsupported dtype, a
// missing weight or a shape that differs from the plan's.
WeightStore load_safetensors(const ExecutionPlan& plan, const std::string& path);

} // namespace tmmu::runtime
