#include "io/checkpoint_codec.h"

#include "encoding/utf8.h"
#include "plan/plan_hash.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace tmmu::checkpoint_codec {
namespace {

using cbor::Writer;
using Field = std::pair<std::string_view, std::function<void()>>;

// Deterministic CBOR orders map entries by their encoded keys; for text keys that is shorter
// first, then bytewise (the head grows with the length), so entries may be listed in any order.
void write_map(Writer& w, std::vector<Field> fields) {
    std::sort(fields.begin(), fields.end(), [](const Field& a, const Field& b) {
        return a.first.size() != b.first.size() ? a.first.size() < b.first.size()
                                                : a.first < b.first;
    });
    w.map(fields.size());
    for (const auto& [key, write] : fields) {
        w.text(key);
        write();
    }
}

void write_digest(Writer& w, const Digest& d) {
    w.bytes(d.data(), d.size());
}

template <class T>
void write_u64s(Writer& w, const std::vector<T>& xs) {
    w.array(xs.size());
    for (T x : xs)
        w.uint64(x);
}

void write_texts(Writer& w, const std::vector<std::string>& xs) {
    w.array(xs.size());
    for (const std::string& s : xs)
        w.text(s);
}

void write_metrics(Writer& w, const ArenaMetrics& m) {
    write_map(w, {{"peak_bytes", [&] { w.uint64(m.peak_bytes); }},
                  {"lower_bound", [&] { w.uint64(m.lower_bound); }},
                  {"slots", [&] { w.uint64(m.slot_count); }},
                  {"max_live", [&] { w.uint64(m.max_live); }},
                  {"buffers", [&] { w.uint64(m.buffers); }},
                  {"tensors", [&] { w.uint64(m.tensors); }}});
}

void write_buffers(Writer& w, const std::vector<Buffer>& buffers) {
    w.array(buffers.size());
    for (const Buffer& b : buffers) {
        w.array(kBufferFields);
        write_buffer_fields(w, b);
    }
}

// A paged arena has a "page_size" entry too (unpaged ones are written as before it existed).
void write_arena(Writer& w, const ArenaPlan& a) {
    std::vector<Field> fields = {{"name", [&] { w.text(a.config.name); }},
                                 {"capacity", [&] { w.uint64(a.config.capacity); }},
                                 {"alignment", [&] { w.uint64(a.config.alignment); }},
                                 {"strategy", [&] { w.text(a.strategy); }},
                                 {"problem_capacity", [&] { w.uint64(a.problem.capacity); }},
                                 {"buffers", [&] { write_buffers(w, a.problem.buffers); }},
                                 {"buffer_names", [&] { write_texts(w, a.buffer_names); }},
                                 {"offsets", [&] { write_u64s(w, a.solution.offsets); }},
                                 {"slot_of_buffer", [&] { write_u64s(w, a.slot_of_buffer); }},
                                 {"metrics", [&] { write_metrics(w, a.metrics); }}};
    if (a.config.page_size != 0)
        fields.push_back({"page_size", [&] { w.uint64(a.config.page_size); }});
    write_map(w, std::move(fields));
}

void write_tensors(Writer& w, const std::vector<PlannedTensor>& tensors) {
    w.array(tensors.size());
    for (const PlannedTensor& t : tensors) {
        w.array(kTensorFields);
        w.text(t.id);
        w.text(t.name);
        w.text(role_name(t.role));
        w.uint64(t.arena);
        w.uint64(t.buffer);
        w.uint64(t.slot);
        w.uint64(t.offset);
        w.uint64(t.size);
        w.uint64(t.alignment);
        w.uint64(t.life.begin);
        w.uint64(t.life.end);
    }
}

void write_series(Writer& w, const MemorySeries& s) {
    auto rows = [&w](const std::vector<std::vector<uint64_t>>& rs) {
        w.array(rs.size());
        for (const auto& r : rs)
            write_u64s(w, r);
    };
    write_map(w, {{"times", [&] { write_u64s(w, s.times); }},
                  {"live_bytes", [&] { rows(s.live_bytes); }},
                  {"high_water", [&] { rows(s.high_water); }}});
}

void write_shard(Writer& w, const ShardSpec& spec) {
    write_map(w, {{"rank", [&] { w.uint64(spec.rank); }},
                  {"roles",
                   [&] {
                       w.array(spec.roles.size());
                       for (Role r : spec.roles)
                           w.text(role_name(r));
                   }},
                  {"world_size", [&] { w.uint64(spec.world_size); }}});
}

// [[name, value], ...] in name order: names are free text, so an array keeps them out of the
// map-key ordering rules.
void write_dims(Writer& w, const DimBinding& dims) {
    w.array(dims.size());
    for (const auto& [name, value] : dims) {
        w.array(2);
        w.text(name);
        w.uint64(uint64_t(value));
    }
}

// {"backward_start" (null when none), "forward_buffers", "forward_bytes", "retained_buffers",
// "retained_bytes"}.
void write_retention(Writer& w, const ActivationRetention& r) {
    write_map(w, {{"backward_start",
                   [&] {
                       if (r.backward_start == kNone)
                           w.null();
                       else
                           w.uint64(r.backward_start);
                   }},
                  {"forward_buffers", [&] { w.uint64(r.forward_storages); }},
                  {"forward_bytes", [&] { w.uint64(r.forward_bytes); }},
                  {"retained_buffers", [&] { w.uint64(r.retained_storages); }},
                  {"retained_bytes", [&] { w.uint64(r.retained_bytes); }}});
}

} // namespace

void write_plan(Writer& w, const Plan& plan, const Digest* content_hash) {
    std::vector<Field> fields = {
        {"format", [&] { w.text(kFormat); }},
        {"version", [&] { w.uint64(kVersion); }},
        {"source", [&] { w.text(valid_utf8(plan.source)); }}, // a path: any bytes
        {"mode",
         [&] {
             if (plan.mode)
                 w.text(mode_name(*plan.mode));
             else
                 w.null();
         }},
        {"strategy", [&] { w.text(plan.strategy); }},
        {"ir_hash", [&] { write_digest(w, plan.ir_hash); }},
        {"replay_token", [&] { write_digest(w, plan.replay_token); }},
        {"plan_hash", [&] { write_digest(w, plan.plan_hash); }},
        {"execution_order", [&] { write_texts(w, plan.execution_order); }},
        {"arenas",
         [&] {
             w.array(plan.arenas.size());
             for (const ArenaPlan& a : plan.arenas)
                 write_arena(w, a);
         }},
        {"tensors", [&] { write_tensors(w, plan.tensors); }},
        {"series", [&] { write_series(w, plan.series); }},
        {"notes", [&] { write_texts(w, plan.notes); }},
    };
    if (!plan.shard.single_rank()) fields.push_back({"shard", [&] { write_shard(w, plan.shard); }});
    if (!plan.dims.empty()) fields.push_back({"dims", [&] { write_dims(w, plan.dims); }});
    if (plan.retention)
        fields.push_back({"retention", [&] { write_retention(w, *plan.retention); }});
    if (content_hash) fields.push_back({"content_hash", [&] { write_digest(w, *content_hash); }});
    write_map(w, std::move(fields));
}

} // namespace tmmu::checkpoint_codec
