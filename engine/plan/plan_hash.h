#pragma once
// Content hashes of a model, a bare offset problem, and a plan (seed section II.K).
// Every hash is SHA-256 over the deterministic CBOR (encoding/cbor.h) of a documented value, so two
// machines that agree on the inputs agree on the hash bit for bit. Timing never enters a hash.
#include "encoding/cbor.h"
#include "ir/graph.h"
#include "plan/offset_problem.h"
#include "plan/plan.h"

#include <string>
#include <vector>

namespace tmmu {

// The canonical IR: ["tmmu_ir_v1", {"tensors": [...], "nodes": [...]}], tensors and nodes
// sorted by id, references written as ids. Display names (graph name, tensor names) and
// derived fields (bytes, producer, consumers, the execution order) are excluded: renaming a
// tensor for display keeps the hash, while every field that can change a plan is included.
// A graph with dynamic dimensions adds "shape_envelope" ({name: [min, max, bound value]}),
// "replan_policy" and each dynamic tensor's "shape_dims" (per axis: null, or its text as
// axis_text writes it: "seq", "4*batch*seq"), so each
// binding hashes apart; graphs without them hash as before.
// Throws Failure(InvalidIrShapes) for a reference to a tensor index that does not exist.
cbor::Value canonical_ir(const Graph& g);
Digest ir_hash(const Graph& g);

// ["tmmu_problem_v1", [[id, begin, end, size, alignment, pinned or null], ...]] in buffer
// order (the order breaks strategy ties, so it is part of the problem). The capacity belongs
// to the arena config and is hashed there. ids.size() must equal the buffer count.
Digest problem_hash(const OffsetProblem& p, const std::vector<std::string>& ids);

// begin, end, size, alignment, pinned or null: the buffer fields as the problem hash and the
// checkpoint both write them (the caller writes the enclosing array head).
void write_buffer_fields(cbor::Writer& w, const Buffer& b);

// The sharding configuration of a plan as the plan hash takes it: {} when nothing is sharded,
// else {"contract": "tmmu_flat_shard_v1", "roles": [role names, ascending]} (the contract of
// shard_spec.h). Rank and world size are fields of the plan hash of their own.
cbor::Value shard_spec_value(const ShardSpec& spec);

// The canonical CBOR bytes hashed by compute_plan_hash (streamed, not built as a Value):
//   ["tmmu_plan_v1", [ir_hash, mode, arena_config_hash, execution_order_hash, rank,
//     world_size, shard_spec_hash, slot_assignment_table, logical_address_table]]
// mode is the mode's name or "none" (bare problems); hashes are 32-byte byte strings;
//   arena_config_hash     = SHA-256(CBOR([[name, capacity, alignment], ...] in arena order))
//   execution_order_hash  = SHA-256(CBOR([node id, ...]))
//   shard_spec_hash       = SHA-256(CBOR(shard_spec_value(shard)))  ({} on a single rank)
//   slot_assignment_table = [replay_token, [[tensor_id, arena_name, slot], ...]]
//   logical_address_table = [[tensor_id, arena_name, offset, size], ...]
// with both tables sorted by tensor id. Throws Failure(InvalidArgument) when a tensor names an
// arena index the plan does not have.
std::vector<uint8_t> plan_hash_preimage(const Plan& plan);
Digest compute_plan_hash(const Plan& plan);

// Seed 000 section 10's replan key, SHA-256(CBOR([shape_envelope_hash, mode, arena_config_hash]))
// with shape_envelope_hash = SHA-256(CBOR({name: [min, max], ...})) (the envelope, not the
// binding) and arena_config_hash as in the plan hash: every plan a run over iterations makes of
// one model under one mode and arena config has the same key, whatever its binding.
Digest replan_key(const Graph& g, const Plan& plan);

} // namespace tmmu
