// Reads checkpoint fields straight from the bytes. Field paths ("checkpoint.tensors[4][3].arena")
// are only built when a failure needs one: a 100k-tensor plan has over a million fields.
#include "io/checkpoint_codec.h"

#include "core/checked.h"
#include "core/failure.h"
#include "plan/plan_summary.h"

#include <algorithm>
#include <array>
#include <optional>

namespace tmmu::checkpoint_codec {

void corrupt(const std::string& where, const std::string& message) {
    fail(FailureCode::CorruptCheckpoint, where, message);
}

namespace {

using cbor::Reader;
using cbor::Type;

// Path makers: callables returning the field path, invoked on failure only.
auto at(const std::string& path) {
    return [&path] { return path; };
}
auto item(const std::string& path, size_t i, const char* suffix = "") {
    return [&path, i, suffix] { return path + "[" + std::to_string(i) + "]" + suffix; };
}

template <class P>
void expect(Reader& r, Type t, const P& path) {
    const Type found = r.peek();
    if (found != t)
        corrupt(path(), "expected " + std::string(cbor::type_name(t)) + ", found " +
                            std::string(cbor::type_name(found)));
}

template <class P>
uint64_t read_u64(Reader& r, const P& path) {
    expect(r, Type::Unsigned, path);
    return r.uint64();
}

template <class P>
uint32_t read_u32(Reader& r, const P& path) {
    const uint64_t x = read_u64(r, path);
    if (x > UINT32_MAX) corrupt(path(), std::to_string(x) + " does not fit in 32 bits");
    return static_cast<uint32_t>(x);
}

template <class P>
std::string_view read_text(Reader& r, const P& path) {
    expect(r, Type::Text, path);
    return r.text();
}

template <class P>
size_t read_array(Reader& r, int depth, const P& path, std::optional<size_t> length = {}) {
    expect(r, Type::Array, path);
    const size_t n = r.array(depth);
    if (length && n != *length)
        corrupt(path(),
                "expected " + std::to_string(*length) + " items, found " + std::to_string(n));
    return n;
}

Digest read_digest(Reader& r, const std::string& path) {
    expect(r, Type::Bytes, at(path));
    const auto [p, n] = r.bytes();
    if (n != 32) corrupt(path, "expected 32 bytes, found " + std::to_string(n));
    Digest d{};
    std::copy(p, p + n, d.begin());
    return d;
}

void check_length(const std::string& path, size_t found, size_t expected) {
    if (found != expected)
        corrupt(path,
                "expected " + std::to_string(expected) + " items, found " + std::to_string(found));
}

// Reads a map holding `keys` (any order; the CBOR scan already refused duplicates and
// disorder) and hands each value to on_field with its key's index. The first `required` keys
// must be present, the rest may be. Unknown keys are refused: they would be lost on restore
// and break the byte-identical round trip.
template <size_t N, class F>
void read_map(Reader& r, int depth, const std::string& path,
              const std::array<std::string_view, N>& keys, F&& on_field, size_t required = N) {
    expect(r, Type::Map, at(path));
    std::array<bool, N> seen{};
    for (size_t i = 0, n = r.map(depth); i < n; ++i) {
        if (r.peek() != Type::Text)
            corrupt(path, "unexpected key " + std::string(cbor::type_name(r.peek())));
        const std::string_view key = r.text();
        const auto k = std::find(keys.begin(), keys.end(), key);
        if (k == keys.end()) corrupt(path, "unexpected key '" + std::string(key) + "'");
        seen[size_t(k - keys.begin())] = true;
        on_field(size_t(k - keys.begin()));
    }
    for (size_t k = 0; k < required; ++k)
        if (!seen[k]) corrupt(path, "missing key '" + std::string(keys[k]) + "'");
}

template <class T>
std::vector<T> read_u64s(Reader& r, int depth, const std::string& path) {
    std::vector<T> out(read_array(r, depth, at(path)));
    for (size_t i = 0; i < out.size(); ++i) {
        if constexpr (sizeof(T) == 4)
            out[i] = read_u32(r, item(path, i));
        else
            out[i] = read_u64(r, item(path, i));
    }
    return out;
}

std::vector<std::string> read_texts(Reader& r, int depth, const std::string& path) {
    std::vector<std::string> out(read_array(r, depth, at(path)));
    for (size_t i = 0; i < out.size(); ++i)
        out[i] = read_text(r, item(path, i));
    return out;
}

std::vector<Buffer> read_buffers(Reader& r, int depth, const std::string& path) {
    std::vector<Buffer> out(read_array(r, depth, at(path)));
    for (size_t i = 0; i < out.size(); ++i) {
        read_array(r, depth + 1, item(path, i), kBufferFields);
        Buffer& b = out[i];
        b.begin = read_u64(r, item(path, i, "[0].begin"));
        b.end = read_u64(r, item(path, i, "[1].end"));
        b.size = read_u64(r, item(path, i, "[2].size"));
        b.alignment = read_u64(r, item(path, i, "[3].alignment"));
        if (r.peek() == Type::Null)
            r.null();
        else
            b.pinned = read_u64(r, item(path, i, "[4].pinned"));
        if (b.end <= b.begin)
            corrupt(item(path, i)(), "buffer lifetime [" + std::to_string(b.begin) + ", " +
                                         std::to_string(b.end) + ") is empty");
    }
    return out;
}

ArenaMetrics read_metrics(Reader& r, int depth, const std::string& path) {
    static constexpr std::array<std::string_view, 6> kKeys = {
        "peak_bytes", "lower_bound", "slots", "max_live", "buffers", "tensors"};
    ArenaMetrics m;
    read_map(r, depth, path, kKeys, [&](size_t k) {
        const auto field = [&] { return path + "." + std::string(kKeys[k]); };
        switch (k) {
        case 0:
            m.peak_bytes = read_u64(r, field);
            break;
        case 1:
            m.lower_bound = read_u64(r, field);
            break;
        case 2:
            m.slot_count = read_u32(r, field);
            break;
        case 3:
            m.max_live = read_u32(r, field);
            break;
        case 4:
            m.buffers = read_u32(r, field);
            break;
        default:
            m.tensors = read_u32(r, field);
            break;
        }
    });
    m.derive_ratios();
    return m;
}

// max(offset + size), overflow-checked (the validator re-checks the same sums).
uint64_t height_of(const ArenaPlan& a, const std::string& path) {
    uint64_t h = 0;
    for (size_t i = 0; i < a.problem.buffers.size(); ++i)
        h = std::max(h, checked_add(a.solution.offsets[i], a.problem.buffers[i].size,
                                    item(path + ".offsets", i)()));
    return h;
}

// The checks that need the whole arena map: lengths against the buffer list, the peak.
void check_arena(ArenaPlan& a, const std::string& path) {
    const size_t n = a.problem.buffers.size();
    check_length(path + ".buffer_names", a.buffer_names.size(), n);
    check_length(path + ".offsets", a.solution.offsets.size(), n);
    check_length(path + ".slot_of_buffer", a.slot_of_buffer.size(), n);
    a.solution.producer = a.strategy;
    a.solution.height = height_of(a, path);
    if (a.metrics.peak_bytes != a.solution.height)
        corrupt(path + ".metrics.peak_bytes", "peak_bytes " + std::to_string(a.metrics.peak_bytes) +
                                                  " differs from the height of the offsets, " +
                                                  std::to_string(a.solution.height));
    if (a.metrics.lower_bound > a.metrics.peak_bytes)
        corrupt(path + ".metrics.lower_bound", "lower bound exceeds peak_bytes");
    // The planner validates against the capacity in whole pages, never more.
    if (a.problem.capacity > a.config.usable_capacity())
        corrupt(path + ".problem_capacity", "problem_capacity " +
                                                std::to_string(a.problem.capacity) +
                                                " exceeds the arena's capacity in whole pages, " +
                                                std::to_string(a.config.usable_capacity()));
}

ArenaPlan read_arena(Reader& r, int depth, const std::string& path) {
    static constexpr std::array<std::string_view, 11> kKeys = {
        "name",         "capacity", "alignment",      "strategy", "problem_capacity", "buffers",
        "buffer_names", "offsets",  "slot_of_buffer", "metrics",  "page_size"};
    ArenaPlan a;
    read_map(
        r, depth, path, kKeys,
        [&](size_t k) {
            const std::string field = path + "." + std::string(kKeys[k]);
            switch (k) {
            case 0:
                a.config.name = read_text(r, at(field));
                break;
            case 1:
                a.config.capacity = read_u64(r, at(field));
                break;
            case 2:
                a.config.alignment = read_u64(r, at(field));
                if (!is_power_of_two(a.config.alignment))
                    corrupt(field, "alignment " + std::to_string(a.config.alignment) +
                                       " is not a power of two");
                break;
            case 3:
                a.strategy = read_text(r, at(field));
                break;
            case 4:
                a.problem.capacity = read_u64(r, at(field));
                break;
            case 5:
                a.problem.buffers = read_buffers(r, depth + 1, field);
                break;
            case 6:
                a.buffer_names = read_texts(r, depth + 1, field);
                break;
            case 7:
                a.solution.offsets = read_u64s<uint64_t>(r, depth + 1, field);
                break;
            case 8:
                a.slot_of_buffer = read_u64s<uint32_t>(r, depth + 1, field);
                break;
            case 9:
                a.metrics = read_metrics(r, depth + 1, field);
                break;
            default: // optional: a paged arena's
                a.config.page_size = read_u64(r, at(field));
                if (!is_power_of_two(a.config.page_size))
                    corrupt(field, "page size " + std::to_string(a.config.page_size) +
                                       " is not a power of two");
                break;
            }
        },
        kKeys.size() - 1);
    check_arena(a, path);
    return a;
}

std::vector<PlannedTensor> read_tensors(Reader& r, int depth, const std::string& path) {
    std::vector<PlannedTensor> out(read_array(r, depth, at(path)));
    for (size_t i = 0; i < out.size(); ++i) {
        read_array(r, depth + 1, item(path, i), kTensorFields);
        PlannedTensor& t = out[i];
        t.id = read_text(r, item(path, i, "[0].id"));
        t.name = read_text(r, item(path, i, "[1].name"));
        const std::string_view role = read_text(r, item(path, i, "[2].role"));
        const auto parsed = parse_role(role);
        if (!parsed)
            corrupt(item(path, i, "[2].role")(), "unknown role '" + std::string(role) + "'");
        t.role = *parsed;
        t.arena = read_u32(r, item(path, i, "[3].arena"));
        t.buffer = read_u32(r, item(path, i, "[4].buffer"));
        t.slot = read_u32(r, item(path, i, "[5].slot"));
        t.offset = read_u64(r, item(path, i, "[6].offset"));
        t.size = read_u64(r, item(path, i, "[7].size"));
        t.alignment = read_u64(r, item(path, i, "[8].alignment"));
        t.life.begin = read_u32(r, item(path, i, "[9].begin"));
        t.life.end = read_u32(r, item(path, i, "[10].end"));
    }
    return out;
}

MemorySeries read_series(Reader& r, int depth, const std::string& path) {
    static constexpr std::array<std::string_view, 3> kKeys = {"times", "live_bytes", "high_water"};
    MemorySeries s;
    auto rows = [&](const std::string& p) {
        std::vector<std::vector<uint64_t>> out(read_array(r, depth + 1, at(p)));
        for (size_t i = 0; i < out.size(); ++i)
            out[i] = read_u64s<uint64_t>(r, depth + 2, item(p, i)());
        return out;
    };
    read_map(r, depth, path, kKeys, [&](size_t k) {
        const std::string field = path + "." + std::string(kKeys[k]);
        if (k == 0)
            s.times = read_u64s<uint64_t>(r, depth + 1, field);
        else
            (k == 1 ? s.live_bytes : s.high_water) = rows(field);
    });
    const size_t points = s.times.size();
    for (size_t i = 0; i < s.live_bytes.size(); ++i)
        check_length(item(path + ".live_bytes", i)(), s.live_bytes[i].size(), points);
    for (size_t i = 0; i < s.high_water.size(); ++i)
        check_length(item(path + ".high_water", i)(), s.high_water[i].size(), points);
    return s;
}

std::optional<Mode> read_mode(Reader& r, const std::string& path) {
    if (r.peek() == Type::Null) {
        r.null();
        return std::nullopt;
    }
    const std::string_view name = read_text(r, at(path));
    const std::optional<Mode> mode = parse_mode(name);
    // An alias spelling would not survive a restore: refuse it rather than rewrite the file.
    if (!mode || mode_name(*mode) != name)
        corrupt(path, "unknown mode '" + std::string(name) + "'");
    return mode;
}

// The optional "shard" entry: {"rank", "roles", "world_size"}, present for a plan of a rank of
// a distributed run only (the writer leaves a single rank's out).
ShardSpec read_shard(Reader& r, const std::string& path) {
    static constexpr std::array<std::string_view, 3> kKeys = {"rank", "roles", "world_size"};
    uint64_t rank = 0, world_size = 0;
    std::vector<std::string> roles;
    read_map(r, 2, path, kKeys, [&](size_t k) {
        const std::string field = path + "." + std::string(kKeys[k]);
        if (k == 0) rank = read_u64(r, at(field));
        if (k == 1) roles = read_texts(r, 3, field);
        if (k == 2) world_size = read_u64(r, at(field));
    });
    try {
        return stored_shard_spec(world_size, rank, roles, path);
    } catch (const Failure& f) {
        corrupt(f.where(), f.message());
    }
}

// The optional "dims" entry: [[name, value], ...], names ascending and unique, each value a
// dimension --dim could bind (the writer leaves a plan of fixed shapes without it).
DimBinding read_dims(Reader& r, const std::string& path) {
    DimBinding dims;
    const size_t n = read_array(r, 2, at(path));
    for (size_t i = 0; i < n; ++i) {
        const std::string entry = item(path, i)();
        read_array(r, 3, at(entry), 2);
        const std::string name(read_text(r, item(entry, 0)));
        const uint64_t value = read_u64(r, item(entry, 1));
        if (name.empty() || (!dims.empty() && dims.rbegin()->first >= name))
            corrupt(entry, "dimension names must be non-empty, ascending and unique");
        if (value < 1 || value > uint64_t(kMaxDynamicDim))
            corrupt(entry,
                    name + "=" + std::to_string(value) + " is not a dimension a plan is made at");
        dims.emplace(name, int64_t(value));
    }
    return dims;
}

// The optional "retention" entry (see write_retention).
ActivationRetention read_retention(Reader& r, const std::string& path) {
    static constexpr std::array<std::string_view, 5> kKeys = {
        "backward_start", "forward_buffers", "forward_bytes", "retained_buffers", "retained_bytes"};
    ActivationRetention a;
    read_map(r, 2, path, kKeys, [&](size_t k) {
        const auto field = [&] { return path + "." + std::string(kKeys[k]); };
        switch (k) {
        case 0:
            if (r.peek() == Type::Null)
                r.null();
            else
                a.backward_start = read_u32(r, field);
            break;
        case 1:
            a.forward_storages = read_u32(r, field);
            break;
        case 2:
            a.forward_bytes = read_u64(r, field);
            break;
        case 3:
            a.retained_storages = read_u32(r, field);
            break;
        default:
            a.retained_bytes = read_u64(r, field);
            break;
        }
    });
    return a; // checked against the plan once it is read (read_plan)
}

} // namespace

Plan read_plan(const uint8_t* data, size_t size, Digest& content_hash) {
    static constexpr std::array<std::string_view, kRootFields + 3> kKeys = {
        "format",       "version",      "source",          "mode",   "strategy", "ir_hash",
        "replay_token", "plan_hash",    "execution_order", "arenas", "tensors",  "series",
        "notes",        "content_hash", "shard",           "dims",   "retention"};
    const std::string root = "checkpoint";
    Reader r(data, size);
    Plan plan;
    // "shard", "dims" and "retention" are optional: a single rank's plan leaves the first out,
    // a plan of fixed shapes the second, an offset problem's plan the third.
    const auto on_field = [&](size_t k) {
        const std::string field = root + "." + std::string(kKeys[k]);
        switch (k) {
        case 0: // format and version were checked before the content hash
        case 1:
            r.skip(1);
            break;
        case 2:
            plan.source = read_text(r, at(field));
            break;
        case 3:
            plan.mode = read_mode(r, field);
            break;
        case 4:
            plan.strategy = read_text(r, at(field));
            break;
        case 5:
            plan.ir_hash = read_digest(r, field);
            break;
        case 6:
            plan.replay_token = read_digest(r, field);
            break;
        case 7:
            plan.plan_hash = read_digest(r, field);
            break;
        case 8:
            plan.execution_order = read_texts(r, 2, field);
            break;
        case 9:
            plan.arenas.resize(read_array(r, 2, at(field)));
            for (size_t i = 0; i < plan.arenas.size(); ++i)
                plan.arenas[i] = read_arena(r, 3, item(field, i)());
            break;
        case 10:
            plan.tensors = read_tensors(r, 2, field);
            break;
        case 11:
            plan.series = read_series(r, 2, field);
            break;
        case 12:
            plan.notes = read_texts(r, 2, field);
            break;
        case 13:
            content_hash = read_digest(r, field);
            break;
        case 14:
            plan.shard = read_shard(r, field);
            break;
        case 15:
            plan.dims = read_dims(r, field);
            break;
        default:
            plan.retention = read_retention(r, field);
            break;
        }
    };
    read_map(r, 1, root, kKeys, on_field, kRootFields);
    if (const std::string wrong = retention_inconsistency(plan, true); !wrong.empty())
        corrupt(root + ".retention", wrong);
    return plan;
}

} // namespace tmmu::checkpoint_codec
