#include "io/checkpoint.h"

#include "core/checked.h"
#include "core/failure.h"
#include "encoding/sha256.h"
#include "io/checkpoint_codec.h"
#include "io/file_io.h"
#include "plan/plan_hash.h"
#include "plan/plan_summary.h"
#include "plan/validator.h"

#include <algorithm>

namespace tmmu {

namespace {

using cbor::Reader;
using cbor::Type;
using checkpoint_codec::corrupt;

std::string item_path(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

// The top level of a checkpoint as found in the bytes, before any field is trusted.
struct RootEntry {
    std::string_view key; // empty for a key that is not text
    size_t key_begin = 0, value_begin = 0, value_end = 0;
};
struct RootScan {
    size_t entry_count = 0;
    size_t body_begin = 0; // first byte after the map head
    std::vector<RootEntry> entries;

    const RootEntry* find(std::string_view key) const {
        for (const RootEntry& e : entries)
            if (e.key == key) return &e;
        return nullptr;
    }
};

// Checks the whole input as cbor::decode would (one deterministic item, every rule) without
// building it, and records where each top-level entry lies.
RootScan scan_root(const uint8_t* data, size_t size) {
    Reader r(data, size);
    if (const Type t = r.peek(); t != Type::Map) {
        r.skip(0);
        r.finish();
        corrupt("checkpoint", "expected a map, found " + std::string(cbor::type_name(t)));
    }
    RootScan scan;
    scan.entry_count = r.map(1);
    scan.body_begin = r.offset();
    for (size_t i = 0; i < scan.entry_count; ++i) {
        RootEntry e;
        e.key_begin = r.offset();
        if (r.peek() == Type::Text)
            e.key = r.text();
        else
            r.skip(1);
        e.value_begin = r.offset();
        if (i > 0)
            r.check_key_order(scan.entries.back().key_begin, scan.entries.back().value_begin,
                              e.key_begin, e.value_begin);
        r.skip(1);
        e.value_end = r.offset();
        scan.entries.push_back(e);
    }
    r.finish();
    return scan;
}

Reader value_reader(const uint8_t* data, const RootEntry& e) {
    return Reader(data + e.value_begin, e.value_end - e.value_begin);
}

// Format and version come first so that a file of another kind or version is named as such
// rather than reported as damaged.
void check_format(const RootScan& scan, const uint8_t* data) {
    const RootEntry* format = scan.find("format");
    bool ok = false;
    if (format) {
        Reader r = value_reader(data, *format);
        ok = r.peek() == Type::Text && r.text() == checkpoint_codec::kFormat;
    }
    if (!ok)
        corrupt("checkpoint.format", "not a tmmu checkpoint (format must be \"tmmu-checkpoint\")");
    const RootEntry* version = scan.find("version");
    ok = false;
    if (version) {
        Reader r = value_reader(data, *version);
        ok = r.peek() == Type::Unsigned && r.uint64() == checkpoint_codec::kVersion;
    }
    if (!ok)
        corrupt("checkpoint.version", "unsupported checkpoint version (this build reads version " +
                                          std::to_string(checkpoint_codec::kVersion) + ")");
}

// content_hash = SHA-256 of the canonical encoding of the root map without the content_hash
// entry. The scan proved the bytes canonical, so that encoding is the input with the entry cut
// out and the map head counting one entry less. It covers what the plan hash leaves out (names,
// notes, series, metrics), so any damage is caught before a field is trusted.
void check_content_hash(const RootScan& scan, const uint8_t* data, size_t size) {
    const RootEntry* entry = scan.find("content_hash");
    if (!entry) corrupt("checkpoint", "missing key 'content_hash'");
    Reader r = value_reader(data, *entry);
    if (r.peek() != Type::Bytes)
        corrupt("checkpoint.content_hash",
                "expected a byte string, found " + std::string(cbor::type_name(r.peek())));
    const auto [stored, length] = r.bytes();
    if (length != 32)
        corrupt("checkpoint.content_hash", "expected 32 bytes, found " + std::to_string(length));
    Digest expected{};
    std::copy(stored, stored + length, expected.begin());
    cbor::Writer head;
    head.map(scan.entry_count - 1);
    Sha256 h;
    h.update(head.data().data(), head.data().size());
    h.update(data + scan.body_begin, entry->key_begin - scan.body_begin);
    h.update(data + entry->value_end, size - entry->value_end);
    const Digest actual = h.finish();
    if (actual != expected)
        corrupt("checkpoint.content_hash", "stored content hash " + to_hex(expected) +
                                               " does not match the content (" + to_hex(actual) +
                                               "): the file was modified or damaged");
}

// Every tensor must sit inside its buffer, carry its buffer's slot, and the buffer's root
// tensor (named by buffer_names) must start exactly at the buffer's offset. The plan hash
// covers tensor offsets; these checks tie the arena layout (which the validator checks) to
// them, so editing either one alone is detected.
void check_tensors_in_buffers(const Plan& plan) {
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const PlannedTensor& t = plan.tensors[i];
        auto path = [i] { return item_path("checkpoint.tensors", i); };
        if (t.arena >= plan.arenas.size())
            corrupt(path() + "[3].arena",
                    "arena index " + std::to_string(t.arena) + " is out of range");
        const ArenaPlan& a = plan.arenas[t.arena];
        if (t.buffer >= a.problem.buffers.size())
            corrupt(path() + "[4].buffer", "buffer index " + std::to_string(t.buffer) +
                                               " is out of range in arena '" + a.config.name + "'");
        const uint64_t begin = a.solution.offsets[t.buffer];
        const uint64_t end = begin + a.problem.buffers[t.buffer].size; // no overflow: height_of
        if (t.offset < begin || t.offset > end || t.size > end - t.offset)
            corrupt(path() + "[6].offset", "tensor '" + t.id + "' at [" + std::to_string(t.offset) +
                                               ", +" + std::to_string(t.size) +
                                               ") is outside its buffer [" + std::to_string(begin) +
                                               ", " + std::to_string(end) + ")");
        if (t.offset != begin && a.buffer_names[t.buffer] == t.id)
            corrupt(path() + "[6].offset", "root tensor '" + t.id + "' is at " +
                                               std::to_string(t.offset) + ", its buffer at " +
                                               std::to_string(begin));
        if (t.slot != a.slot_of_buffer[t.buffer])
            corrupt(path() + "[5].slot", "tensor '" + t.id + "' has slot " +
                                             std::to_string(t.slot) + ", its buffer slot " +
                                             std::to_string(a.slot_of_buffer[t.buffer]));
    }
}

void validate_arenas(const Plan& plan) {
    for (const ArenaPlan& a : plan.arenas) {
        const BufferNamer namer = [&a](size_t i) {
            return "buffer " + std::to_string(i) + " ('" + a.buffer_names[i] + "')";
        };
        validate_solution(a.problem, a.solution.offsets, a.config.name, namer);
    }
}

std::vector<uint8_t> sealed_encoding(const Plan& plan, const Digest& content_hash) {
    cbor::Writer w;
    checkpoint_codec::write_plan(w, plan, &content_hash);
    return w.take();
}

} // namespace

std::vector<uint8_t> encode_checkpoint(const Plan& plan) {
    const Digest expected = compute_plan_hash(plan);
    if (expected != plan.plan_hash)
        fail(FailureCode::InvalidArgument, "plan.plan_hash",
             "plan hash " + to_hex(plan.plan_hash) + " is stale; the plan's content hashes to " +
                 to_hex(expected));
    cbor::Writer unsealed;
    checkpoint_codec::write_plan(unsealed, plan, nullptr);
    return sealed_encoding(plan, sha256(unsealed.data()));
}

Plan decode_checkpoint(const uint8_t* data, size_t size) {
    const RootScan scan = scan_root(data, size);
    check_format(scan, data);
    check_content_hash(scan, data, size);
    Digest content_hash{};
    Plan plan = checkpoint_codec::read_plan(data, size, content_hash);
    check_tensors_in_buffers(plan);
    const Digest recomputed = compute_plan_hash(plan);
    if (recomputed != plan.plan_hash)
        corrupt("checkpoint.plan_hash", "stored plan hash " + to_hex(plan.plan_hash) +
                                            " does not match recomputed " + to_hex(recomputed));
    // Anything the Plan cannot represent would not survive a restore; refuse it rather than
    // silently rewrite the file's meaning.
    const std::vector<uint8_t> again = sealed_encoding(plan, content_hash);
    if (again.size() != size || !std::equal(again.begin(), again.end(), data))
        corrupt("checkpoint", "not the canonical encoding of the plan it describes");
    validate_arenas(plan);
    // The planner never makes a plan whose totals overflow (plan_totals): one that does was
    // not written by it.
    try {
        plan_totals(plan);
    } catch (const Failure& f) {
        corrupt(f.where(), f.message());
    }
    return plan;
}

void write_checkpoint_file(const Plan& plan, const std::string& path) {
    const std::vector<uint8_t> bytes = encode_checkpoint(plan);
    write_output(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Plan read_checkpoint_file(const std::string& path) {
    const std::string bytes = read_text_file(path);
    try {
        return decode_checkpoint(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const Failure& f) {
        fail(f.code(), path + ": " + f.where(), f.message());
    }
}

bool looks_like_checkpoint(std::string_view head) {
    return !head.empty() && (static_cast<uint8_t>(head[0]) & 0xE0) == 0xA0; // CBOR major type 5
}

} // namespace tmmu
