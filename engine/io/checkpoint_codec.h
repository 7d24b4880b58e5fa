#pragma once
// The checkpoint's CBOR layout, written and read field by field without a Value tree (a 100k
// tensor plan would otherwise build millions of nodes). checkpoint.cpp adds the integrity
// checks on top; resources/docs/outputs.md documents the fields.
#include "encoding/cbor.h"
#include "plan/plan.h"

#include <cstdint>
#include <string_view>

namespace tmmu::checkpoint_codec {

inline constexpr std::string_view kFormat = "tmmu-checkpoint";
inline constexpr uint64_t kVersion = 1;
inline constexpr size_t kTensorFields = 11;
inline constexpr size_t kBufferFields = 5;
inline constexpr size_t kRootFields =
    14; // with content_hash; "shard", "dims" and "retention" on top when present

// The root map, sealed with content_hash when it is given, unsealed (13 entries) otherwise;
// a plan for a rank of a distributed run has a "shard" entry too, a plan of a model with
// dynamic dimensions a "dims" entry (its binding), and a plan of a graph a "retention" entry
// (checkpoints written before it was added lack it, and restore without it).
// Keys come out in deterministic order, so the bytes equal encode_canonical of the same map.
void write_plan(cbor::Writer& w, const Plan& plan, const Digest* content_hash);

// Reads the root map of a well-formed checkpoint (already checked by cbor::Reader::skip) into
// a Plan. Fails with CorruptCheckpoint naming the field path for a wrong type, length, key or
// value. Returns the stored content hash in `content_hash`.
Plan read_plan(const uint8_t* data, size_t size, Digest& content_hash);

[[noreturn]] void corrupt(const std::string& where, const std::string& message);

} // namespace tmmu::checkpoint_codec
