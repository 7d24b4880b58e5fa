#pragma once
// CBOR checkpoint/restore of a Plan (seed section 10). The file is one deterministic CBOR map
// (encoding/cbor.h; field list in resources/docs/outputs.md) holding everything a Plan contains
// except timing. Restoring re-derives the ratio metrics, recomputes the plan hash and re-runs
// the independent validator, so a restored Plan is as trustworthy as a freshly planned one.
// encode_checkpoint(decode_checkpoint(b)) == b for every b that decodes.
#include "plan/plan.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

// Throws Failure(InvalidArgument) when plan.plan_hash is not compute_plan_hash(plan) (a stale
// or unset hash would make the checkpoint unrestorable) or an index inside the plan is out of
// range.
std::vector<uint8_t> encode_checkpoint(const Plan& plan);

// Throws Failure(CorruptCheckpoint) naming the byte offset (malformed CBOR) or the field path
// ("checkpoint.arenas[1].offsets[4]") for a wrong format or version; for a content hash that
// does not match (any damaged byte); for a wrong type, length or index; for a stored plan hash
// that differs from the recomputed one; for tensors that do not sit inside their buffers. Validator
// failures (ADDRESS_COLLISION, ALIGNMENT_VIOLATION, ARENA_TOO_SMALL, ALLOCATION_OVERFLOW) pass
// through unchanged. The result has plan_ns == 0 everywhere.
Plan decode_checkpoint(const uint8_t* data, size_t size);

// Writes with write_output (io/file_io.h): a regular file through a temporary file and a
// rename, so a crash leaves either the old file or the complete new one; "-", devices and
// FIFOs directly. Failure(IoError) names the path.
void write_checkpoint_file(const Plan& plan, const std::string& path);
Plan read_checkpoint_file(const std::string& path);

// Whether a file starting with `head` is a checkpoint rather than a model: a checkpoint is one
// CBOR map, whose first byte no model source starts with (text opens with '{' or a CSV header,
// ONNX protobuf with a field tag). Cheap; decode_checkpoint is what checks it.
bool looks_like_checkpoint(std::string_view head);

} // namespace tmmu
