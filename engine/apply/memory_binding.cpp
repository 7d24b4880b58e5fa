#include "apply/memory_binding.h"

#include "core/failure.h"
#include "encoding/cbor.h"
#include "encoding/sha256.h"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>

namespace tmmu {

namespace {

std::string arena_where(const std::string& name) {
    return "arena '" + name + "'";
}

void check_policy(const ApplyOptions& options) {
    if (options.fill.kind == FillKind::Debug && options.policy != DataPolicy::Standard)
        fail(FailureCode::InvalidArgument, "fill",
             fmt::format("a debug fill is forbidden under the {} data policy, where only zeros "
                         "may be written (seed 000 DebugFillTensor_v1); fill with zeros",
                         data_policy_name(options.policy)));
}

// The memory given for each of the plan's arenas, in the plan's order; every given arena must
// be one of the plan's, and each must hold the arena's committed bytes.
std::vector<ArenaMemory> match_arenas(const Plan& plan, std::vector<ArenaMemory> given) {
    for (const ArenaMemory& m : given)
        if (std::none_of(plan.arenas.begin(), plan.arenas.end(),
                         [&](const ArenaPlan& a) { return a.config.name == m.name; }))
            fail(FailureCode::InvalidArgument, arena_where(m.name),
                 "memory was given for an arena the plan does not have");
    std::vector<ArenaMemory> ordered;
    for (const ArenaPlan& a : plan.arenas) {
        auto it = std::find_if(given.begin(), given.end(),
                               [&](const ArenaMemory& m) { return m.name == a.config.name; });
        if (it == given.end())
            fail(FailureCode::InvalidArgument, arena_where(a.config.name),
                 "the plan places tensors here, but no memory was given for it");
        const uint64_t needed = a.config.committed_bytes(a.metrics.peak_bytes);
        if (it->size < needed)
            fail(FailureCode::ArenaTooSmall, arena_where(a.config.name),
                 fmt::format("the memory given holds {} bytes; the plan needs {} (its peak of {} "
                             "bytes{})",
                             it->size, needed, a.metrics.peak_bytes,
                             a.config.page_size
                                 ? fmt::format(" in whole pages of {} bytes", a.config.page_size)
                                 : ""));
        if (!it->base && it->size != 0)
            fail(FailureCode::InvalidArgument, arena_where(a.config.name),
                 fmt::format("{} bytes were given without a base address", it->size));
        ordered.push_back(std::move(*it));
    }
    return ordered;
}

// A validated plan's tensors end within their arena's peak, which match_arenas checked the
// memory holds; a plan put together by hand is checked here too, before a byte is written.
std::byte* pointer_of(const PlannedTensor& t, const ArenaMemory& m) {
    if (t.offset > m.size || t.size > m.size - t.offset)
        fail(FailureCode::ArenaTooSmall, "tensor '" + t.id + "'",
             fmt::format("its {} bytes at offset {} end past the {} bytes of {}", t.size, t.offset,
                         m.size, arena_where(m.name)));
    std::byte* p = m.base + t.offset;
    if (t.alignment > 1 && reinterpret_cast<uintptr_t>(p) % t.alignment != 0)
        fail(FailureCode::AlignmentViolation, "tensor '" + t.id + "'",
             fmt::format("base + offset {} of {} is not aligned to the tensor's {} bytes (the "
                         "arena's base is not aligned enough)",
                         t.offset, arena_where(m.name), t.alignment));
    return p;
}

} // namespace

MemoryBinding::MemoryBinding(const Plan& plan, std::vector<ArenaMemory> arenas,
                             const ApplyOptions& options, const Progress& progress)
    : plan_hash_(plan.plan_hash), options_(options) {
    check_policy(options);
    arenas_ = match_arenas(plan, std::move(arenas));
    tensors_.reserve(plan.tensors.size());
    for (const PlannedTensor& t : plan.tensors)
        tensors_.push_back({t.id, t.arena, t.offset, t.size, pointer_of(t, arenas_.at(t.arena))});
    // ZeroTensor_v1 / DebugFillTensor_v1 in tensor-map order; a debug pattern depends on the
    // arena offset only, so tensors that share bytes agree on them whatever the order.
    for (size_t i = 0; i < tensors_.size(); ++i) {
        const Bound& b = tensors_[i];
        if (i % 256 == 0) {
            progress.check_cancel("fill");
            progress.report(double(i) / double(tensors_.size()), "fill");
        }
        fill_bytes(options_.fill, b.arena, b.offset, b.ptr, b.size);
        filled_bytes_ += b.size;
    }
}

const MemoryBinding::Bound* MemoryBinding::find(std::string_view tensor_id) const {
    auto it = std::lower_bound(tensors_.begin(), tensors_.end(), tensor_id,
                               [](const Bound& b, std::string_view id) { return b.id < id; });
    return it != tensors_.end() && it->id == tensor_id ? &*it : nullptr;
}

bool MemoryBinding::is_bound(std::string_view tensor_id) const {
    return find(tensor_id) != nullptr;
}

std::byte* MemoryBinding::get_ptr(std::string_view tensor_id) const {
    const Bound* b = find(tensor_id);
    if (!b)
        fail(FailureCode::InvalidArgument, fmt::format("tensor '{}'", tensor_id),
             "the applied plan has no such tensor");
    return b->ptr;
}

std::string MemoryBinding::verify() const {
    for (const Bound& b : tensors_) {
        const uint64_t at = first_mismatch(options_.fill, b.arena, b.offset, b.ptr, b.size);
        if (at != b.size) return fmt::format("tensor '{}' byte {} of {}", b.id, at, b.size);
    }
    return {};
}

Digest MemoryBinding::commit() const {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    cbor::Writer w;
    w.array(2);
    w.text("tmmu_state_v1");
    w.array(6);
    w.bytes(plan_hash_.data(), plan_hash_.size());
    w.text(data_policy_name(options_.policy));
    w.array(2);
    w.text(fill_kind_name(options_.fill.kind));
    if (options_.fill.kind == FillKind::Debug)
        w.uint64(options_.fill.seed);
    else
        w.null();
    w.array(arenas_.size());
    for (const ArenaMemory& m : arenas_) {
        w.array(2);
        w.text(m.name);
        w.uint64(m.size);
    }
    w.uint64(tensors_.size());
    w.uint64(filled_bytes_);
    return sha256(w.data());
}

} // namespace tmmu
