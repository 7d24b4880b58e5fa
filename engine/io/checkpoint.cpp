#include "io/checkpoint.h"

#include "core/checked.h"
#include "core/failure.h"
#include "io/cbor.h"
#include "io/file_io.h"
#include "io/plan_hash.h"
#include "io/sha256.h"
#include "plan/validator.h"

#include <initializer_list>

namespace tmmu {

namespace {

using cbor::Type;
using cbor::Value;

constexpr std::string_view kFormat = "tmmu-checkpoint";
constexpr uint64_t kVersion = 1;

// ---------------------------------------------------------------------------------------
// Encoding

Value digest_value(const Digest& d) {
    return Value::byte_string(d.data(), d.size());
}

Value opt_u64(const std::optional<uint64_t>& v) {
    return v ? Value::uint64(*v) : Value::null();
}

template <class T>
Value u64_array(const std::vector<T>& xs) {
    Value a = Value::array();
    a.items.reserve(xs.size());
    for (T x : xs)
        a.items.push_back(Value::uint64(x));
    return a;
}

Value text_array(const std::vector<std::string>& xs) {
    Value a = Value::array();
    a.items.reserve(xs.size());
    for (const std::string& s : xs)
        a.items.push_back(Value::str(s));
    return a;
}

Value encode_metrics(const ArenaMetrics& m) {
    Value v = Value::map();
    v.set("peak_bytes", Value::uint64(m.peak_bytes));
    v.set("lower_bound", Value::uint64(m.lower_bound));
    v.set("slots", Value::uint64(m.slot_count));
    v.set("max_live", Value::uint64(m.max_live));
    v.set("buffers", Value::uint64(m.buffers));
    v.set("tensors", Value::uint64(m.tensors));
    return v;
}

Value encode_arena(const ArenaPlan& a) {
    Value buffers = Value::array();
    for (const Buffer& b : a.problem.buffers)
        buffers.items.push_back(
            Value::array({Value::uint64(b.begin), Value::uint64(b.end), Value::uint64(b.size),
                          Value::uint64(b.alignment), opt_u64(b.pinned)}));
    Value v = Value::map();
    v.set("name", Value::str(a.config.name));
    v.set("capacity", Value::uint64(a.config.capacity));
    v.set("alignment", Value::uint64(a.config.alignment));
    v.set("strategy", Value::str(a.strategy));
    v.set("problem_capacity", Value::uint64(a.problem.capacity));
    v.set("buffers", std::move(buffers));
    v.set("buffer_names", text_array(a.buffer_names));
    v.set("offsets", u64_array(a.solution.offsets));
    v.set("slot_of_buffer", u64_array(a.slot_of_buffer));
    v.set("metrics", encode_metrics(a.metrics));
    return v;
}

Value encode_tensor(const PlannedTensor& t) {
    return Value::array({Value::str(t.id), Value::str(t.name), Value::str(role_name(t.role)),
                         Value::uint64(t.arena), Value::uint64(t.buffer), Value::uint64(t.slot),
                         Value::uint64(t.offset), Value::uint64(t.size), Value::uint64(t.alignment),
                         Value::uint64(t.life.begin), Value::uint64(t.life.end)});
}
constexpr size_t kTensorFields = 11;
constexpr size_t kBufferFields = 5;

Value encode_series(const MemorySeries& s) {
    Value live = Value::array();
    for (const auto& row : s.live_bytes)
        live.items.push_back(u64_array(row));
    Value high = Value::array();
    for (const auto& row : s.high_water)
        high.items.push_back(u64_array(row));
    Value v = Value::map();
    v.set("times", u64_array(s.times));
    v.set("live_bytes", std::move(live));
    v.set("high_water", std::move(high));
    return v;
}

Value encode_plan(const Plan& plan) {
    Value arenas = Value::array();
    for (const ArenaPlan& a : plan.arenas)
        arenas.items.push_back(encode_arena(a));
    Value tensors = Value::array();
    tensors.items.reserve(plan.tensors.size());
    for (const PlannedTensor& t : plan.tensors)
        tensors.items.push_back(encode_tensor(t));
    Value v = Value::map();
    v.set("format", Value::str(kFormat));
    v.set("version", Value::uint64(kVersion));
    v.set("source", Value::str(plan.source));
    v.set("mode", plan.mode ? Value::str(mode_name(*plan.mode)) : Value::null());
    v.set("strategy", Value::str(plan.strategy));
    v.set("ir_hash", digest_value(plan.ir_hash));
    v.set("replay_token", digest_value(plan.replay_token));
    v.set("plan_hash", digest_value(plan.plan_hash));
    v.set("execution_order", text_array(plan.execution_order));
    v.set("arenas", std::move(arenas));
    v.set("tensors", std::move(tensors));
    v.set("series", encode_series(plan.series));
    v.set("notes", text_array(plan.notes));
    return v;
}

// ---------------------------------------------------------------------------------------
// Decoding: typed accessors that name the field path in every failure.

[[noreturn]] void corrupt(const std::string& where, const std::string& message) {
    fail(FailureCode::CorruptCheckpoint, where, message);
}

std::string type_name(Type t) {
    switch (t) {
    case Type::Unsigned:
        return "an unsigned integer";
    case Type::Negative:
        return "a negative integer";
    case Type::Bytes:
        return "a byte string";
    case Type::Text:
        return "a text string";
    case Type::Array:
        return "an array";
    case Type::Map:
        return "a map";
    case Type::Bool:
        return "a boolean";
    case Type::Null:
        return "null";
    }
    return "?";
}

const Value& expect(const Value& v, Type t, const std::string& path) {
    if (v.type != t) corrupt(path, "expected " + type_name(t) + ", found " + type_name(v.type));
    return v;
}

// Requires a map with exactly these text keys; unknown keys are refused because they would
// be lost on restore and break the byte-identical round trip.
void expect_keys(const Value& m, const std::string& path,
                 std::initializer_list<std::string_view> keys) {
    expect(m, Type::Map, path);
    for (const auto& [k, v] : m.entries) {
        bool known = false;
        for (std::string_view key : keys)
            known = known || (k.type == Type::Text && k.text == key);
        if (!known)
            corrupt(path, "unexpected key " +
                              (k.type == Type::Text ? "'" + k.text + "'" : type_name(k.type)));
    }
    for (std::string_view key : keys)
        if (!m.find(key)) corrupt(path, "missing key '" + std::string(key) + "'");
}

const Value& at(const Value& m, std::string_view key) {
    return *m.find(key);
}

uint64_t as_u64(const Value& v, const std::string& path) {
    return expect(v, Type::Unsigned, path).number;
}

uint32_t as_u32(const Value& v, const std::string& path) {
    const uint64_t x = as_u64(v, path);
    if (x > UINT32_MAX) corrupt(path, std::to_string(x) + " does not fit in 32 bits");
    return static_cast<uint32_t>(x);
}

std::optional<uint64_t> as_opt_u64(const Value& v, const std::string& path) {
    if (v.type == Type::Null) return std::nullopt;
    return as_u64(v, path);
}

const std::string& as_text(const Value& v, const std::string& path) {
    return expect(v, Type::Text, path).text;
}

const std::vector<Value>& as_array(const Value& v, const std::string& path,
                                   std::optional<size_t> length = std::nullopt) {
    const auto& items = expect(v, Type::Array, path).items;
    if (length && items.size() != *length)
        corrupt(path, "expected " + std::to_string(*length) + " items, found " +
                          std::to_string(items.size()));
    return items;
}

Digest as_digest(const Value& v, const std::string& path) {
    const auto& b = expect(v, Type::Bytes, path).bytes;
    if (b.size() != 32) corrupt(path, "expected 32 bytes, found " + std::to_string(b.size()));
    Digest d{};
    std::copy(b.begin(), b.end(), d.begin());
    return d;
}

std::string item_path(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

template <class T, class Conv>
std::vector<T> decode_list(const Value& v, const std::string& path, Conv conv,
                           std::optional<size_t> length = std::nullopt) {
    const auto& items = as_array(v, path, length);
    std::vector<T> out;
    out.reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i)
        out.push_back(conv(items[i], item_path(path, i)));
    return out;
}

std::vector<uint64_t> u64_list(const Value& v, const std::string& path,
                               std::optional<size_t> length = std::nullopt) {
    return decode_list<uint64_t>(v, path, as_u64, length);
}

std::vector<std::string> text_list(const Value& v, const std::string& path,
                                   std::optional<size_t> length = std::nullopt) {
    return decode_list<std::string>(v, path, as_text, length);
}

Buffer decode_buffer(const Value& v, const std::string& path) {
    const auto& f = as_array(v, path, kBufferFields);
    Buffer b;
    b.begin = as_u64(f[0], path + "[0].begin");
    b.end = as_u64(f[1], path + "[1].end");
    b.size = as_u64(f[2], path + "[2].size");
    b.alignment = as_u64(f[3], path + "[3].alignment");
    b.pinned = as_opt_u64(f[4], path + "[4].pinned");
    if (b.end <= b.begin)
        corrupt(path, "buffer lifetime [" + std::to_string(b.begin) + ", " + std::to_string(b.end) +
                          ") is empty");
    return b;
}

ArenaMetrics decode_metrics(const Value& v, const std::string& path) {
    expect_keys(v, path, {"peak_bytes", "lower_bound", "slots", "max_live", "buffers", "tensors"});
    ArenaMetrics m;
    m.peak_bytes = as_u64(at(v, "peak_bytes"), path + ".peak_bytes");
    m.lower_bound = as_u64(at(v, "lower_bound"), path + ".lower_bound");
    m.slot_count = as_u32(at(v, "slots"), path + ".slots");
    m.max_live = as_u32(at(v, "max_live"), path + ".max_live");
    m.buffers = as_u32(at(v, "buffers"), path + ".buffers");
    m.tensors = as_u32(at(v, "tensors"), path + ".tensors");
    m.derive_ratios();
    return m;
}

// max(offset + size), overflow-checked (the validator re-checks the same sums).
uint64_t height_of(const ArenaPlan& a, const std::string& path) {
    uint64_t h = 0;
    for (size_t i = 0; i < a.problem.buffers.size(); ++i)
        h = std::max(h, checked_add(a.solution.offsets[i], a.problem.buffers[i].size,
                                    item_path(path + ".offsets", i)));
    return h;
}

ArenaPlan decode_arena(const Value& v, const std::string& path) {
    expect_keys(v, path,
                {"name", "capacity", "alignment", "strategy", "problem_capacity", "buffers",
                 "buffer_names", "offsets", "slot_of_buffer", "metrics"});
    ArenaPlan a;
    a.config.name = as_text(at(v, "name"), path + ".name");
    a.config.capacity = as_u64(at(v, "capacity"), path + ".capacity");
    a.config.alignment = as_u64(at(v, "alignment"), path + ".alignment");
    if (!is_power_of_two(a.config.alignment))
        corrupt(path + ".alignment",
                "alignment " + std::to_string(a.config.alignment) + " is not a power of two");
    a.strategy = as_text(at(v, "strategy"), path + ".strategy");
    a.solution.producer = a.strategy;
    a.problem.capacity = as_u64(at(v, "problem_capacity"), path + ".problem_capacity");
    a.problem.buffers = decode_list<Buffer>(at(v, "buffers"), path + ".buffers", decode_buffer);
    const size_t n = a.problem.buffers.size();
    a.buffer_names = text_list(at(v, "buffer_names"), path + ".buffer_names", n);
    a.solution.offsets = u64_list(at(v, "offsets"), path + ".offsets", n);
    a.slot_of_buffer =
        decode_list<uint32_t>(at(v, "slot_of_buffer"), path + ".slot_of_buffer", as_u32, n);
    a.metrics = decode_metrics(at(v, "metrics"), path + ".metrics");
    a.solution.height = height_of(a, path);
    if (a.metrics.peak_bytes != a.solution.height)
        corrupt(path + ".metrics.peak_bytes", "peak_bytes " + std::to_string(a.metrics.peak_bytes) +
                                                  " differs from the height of the offsets, " +
                                                  std::to_string(a.solution.height));
    if (a.metrics.lower_bound > a.metrics.peak_bytes)
        corrupt(path + ".metrics.lower_bound", "lower bound exceeds peak_bytes");
    return a;
}

PlannedTensor decode_tensor(const Value& v, const std::string& path) {
    const auto& f = as_array(v, path, kTensorFields);
    PlannedTensor t;
    t.id = as_text(f[0], path + "[0].id");
    t.name = as_text(f[1], path + "[1].name");
    const std::string& role = as_text(f[2], path + "[2].role");
    const auto parsed = parse_role(role);
    if (!parsed) corrupt(path + "[2].role", "unknown role '" + role + "'");
    t.role = *parsed;
    t.arena = as_u32(f[3], path + "[3].arena");
    t.buffer = as_u32(f[4], path + "[4].buffer");
    t.slot = as_u32(f[5], path + "[5].slot");
    t.offset = as_u64(f[6], path + "[6].offset");
    t.size = as_u64(f[7], path + "[7].size");
    t.alignment = as_u64(f[8], path + "[8].alignment");
    t.life.begin = as_u32(f[9], path + "[9].begin");
    t.life.end = as_u32(f[10], path + "[10].end");
    return t;
}

MemorySeries decode_series(const Value& v, const std::string& path) {
    expect_keys(v, path, {"times", "live_bytes", "high_water"});
    MemorySeries s;
    s.times = u64_list(at(v, "times"), path + ".times");
    const size_t points = s.times.size();
    auto rows = [&](std::string_view key) {
        const std::string p = path + "." + std::string(key);
        return decode_list<std::vector<uint64_t>>(
            at(v, key), p,
            [&](const Value& row, const std::string& rp) { return u64_list(row, rp, points); });
    };
    s.live_bytes = rows("live_bytes");
    s.high_water = rows("high_water");
    return s;
}

// Every tensor must sit inside its buffer, carry its buffer's slot, and the buffer's root
// tensor (named by buffer_names) must start exactly at the buffer's offset. The plan hash
// covers tensor offsets; these checks tie the arena layout (which the validator checks) to
// them, so editing either one alone is detected.
void check_tensors_in_buffers(const Plan& plan) {
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const PlannedTensor& t = plan.tensors[i];
        const std::string path = item_path("checkpoint.tensors", i);
        if (t.arena >= plan.arenas.size())
            corrupt(path + "[3].arena",
                    "arena index " + std::to_string(t.arena) + " is out of range");
        const ArenaPlan& a = plan.arenas[t.arena];
        if (t.buffer >= a.problem.buffers.size())
            corrupt(path + "[4].buffer", "buffer index " + std::to_string(t.buffer) +
                                             " is out of range in arena '" + a.config.name + "'");
        const uint64_t begin = a.solution.offsets[t.buffer];
        const uint64_t end = checked_add(begin, a.problem.buffers[t.buffer].size, path);
        if (t.offset < begin || t.offset > end || t.size > end - t.offset)
            corrupt(path + "[6].offset", "tensor '" + t.id + "' at [" + std::to_string(t.offset) +
                                             ", +" + std::to_string(t.size) +
                                             ") is outside its buffer [" + std::to_string(begin) +
                                             ", " + std::to_string(end) + ")");
        if (a.buffer_names[t.buffer] == t.id && t.offset != begin)
            corrupt(path + "[6].offset", "root tensor '" + t.id + "' is at " +
                                             std::to_string(t.offset) + ", its buffer at " +
                                             std::to_string(begin));
        if (t.slot != a.slot_of_buffer[t.buffer])
            corrupt(path + "[5].slot", "tensor '" + t.id + "' has slot " + std::to_string(t.slot) +
                                           ", its buffer slot " +
                                           std::to_string(a.slot_of_buffer[t.buffer]));
    }
}

// Format and version come first so that a file of another kind or version is named as such
// rather than reported as damaged.
void check_format(const Value& v) {
    expect(v, Type::Map, "checkpoint");
    const Value* format = v.find("format");
    if (!format || format->type != Type::Text || format->text != kFormat)
        corrupt("checkpoint.format", "not a tmmu checkpoint (format must be \"tmmu-checkpoint\")");
    const Value* version = v.find("version");
    if (!version || version->type != Type::Unsigned || version->number != kVersion)
        corrupt("checkpoint.version", "unsupported checkpoint version (this build reads version " +
                                          std::to_string(kVersion) + ")");
}

// content_hash = SHA-256 of the canonical encoding of the map without the content_hash entry.
// It covers what the plan hash leaves out (names, notes, series, metrics), so any damage to
// the file is caught before its fields are trusted.
Digest content_digest(const Value& map_without_hash) {
    return sha256(cbor::encode_canonical(map_without_hash));
}

Value sealed(Value m) {
    const Digest d = content_digest(m);
    m.set("content_hash", digest_value(d));
    return m;
}

void check_content_hash(const Value& v) {
    const Value* stored = v.find("content_hash");
    if (!stored) corrupt("checkpoint", "missing key 'content_hash'");
    const Digest expected = as_digest(*stored, "checkpoint.content_hash");
    Value rest = Value::map();
    for (const auto& entry : v.entries)
        if (!(entry.first.type == Type::Text && entry.first.text == "content_hash"))
            rest.entries.push_back(entry);
    const Digest actual = content_digest(rest);
    if (actual != expected)
        corrupt("checkpoint.content_hash", "stored content hash " + to_hex(expected) +
                                               " does not match the content (" + to_hex(actual) +
                                               "): the file was modified or damaged");
}

Plan decode_plan(const Value& v) {
    const std::string root = "checkpoint";
    expect_keys(v, root,
                {"format", "version", "source", "mode", "strategy", "ir_hash", "replay_token",
                 "plan_hash", "execution_order", "arenas", "tensors", "series", "notes",
                 "content_hash"});
    Plan plan;
    plan.source = as_text(at(v, "source"), root + ".source");
    if (const Value& mode = at(v, "mode"); mode.type != Type::Null) {
        const std::string& name = as_text(mode, root + ".mode");
        plan.mode = parse_mode(name);
        if (!plan.mode || mode_name(*plan.mode) != name)
            corrupt(root + ".mode", "unknown mode '" + name + "'");
    }
    plan.strategy = as_text(at(v, "strategy"), root + ".strategy");
    plan.ir_hash = as_digest(at(v, "ir_hash"), root + ".ir_hash");
    plan.replay_token = as_digest(at(v, "replay_token"), root + ".replay_token");
    plan.plan_hash = as_digest(at(v, "plan_hash"), root + ".plan_hash");
    plan.execution_order = text_list(at(v, "execution_order"), root + ".execution_order");
    plan.arenas = decode_list<ArenaPlan>(at(v, "arenas"), root + ".arenas", decode_arena);
    plan.tensors = decode_list<PlannedTensor>(at(v, "tensors"), root + ".tensors", decode_tensor);
    plan.series = decode_series(at(v, "series"), root + ".series");
    plan.notes = text_list(at(v, "notes"), root + ".notes");
    return plan;
}

void validate_arenas(const Plan& plan) {
    for (const ArenaPlan& a : plan.arenas) {
        const BufferNamer namer = [&a](size_t i) {
            return "buffer " + std::to_string(i) + " ('" + a.buffer_names[i] + "')";
        };
        validate_solution(a.problem, a.solution.offsets, a.config.name, namer);
    }
}

} // namespace

std::vector<uint8_t> encode_checkpoint(const Plan& plan) {
    const Digest expected = compute_plan_hash(plan);
    if (expected != plan.plan_hash)
        fail(FailureCode::InvalidArgument, "plan.plan_hash",
             "plan hash " + to_hex(plan.plan_hash) + " is stale; the plan's content hashes to " +
                 to_hex(expected));
    return cbor::encode_canonical(sealed(encode_plan(plan)));
}

Plan decode_checkpoint(const uint8_t* data, size_t size) {
    const Value v = cbor::decode(data, size);
    check_format(v);
    check_content_hash(v);
    Plan plan = decode_plan(v);
    check_tensors_in_buffers(plan);
    const Digest recomputed = compute_plan_hash(plan);
    if (recomputed != plan.plan_hash)
        corrupt("checkpoint.plan_hash", "stored plan hash " + to_hex(plan.plan_hash) +
                                            " does not match recomputed " + to_hex(recomputed));
    // Anything the Plan cannot represent (an alias spelling of a mode, say) would not survive
    // a restore; refuse it rather than silently rewrite the file's meaning.
    const std::vector<uint8_t> again = cbor::encode_canonical(sealed(encode_plan(plan)));
    if (again.size() != size || !std::equal(again.begin(), again.end(), data))
        corrupt("checkpoint", "not the canonical encoding of the plan it describes");
    validate_arenas(plan);
    return plan;
}

void write_checkpoint_file(const Plan& plan, const std::string& path) {
    const std::vector<uint8_t> bytes = encode_checkpoint(plan);
    write_file_atomic(path,
                      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

Plan read_checkpoint_file(const std::string& path) {
    const std::string bytes = read_text_file(path);
    try {
        return decode_checkpoint(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const Failure& f) {
        fail(f.code(), path + ": " + f.where(), f.message());
    }
}

} // namespace tmmu
