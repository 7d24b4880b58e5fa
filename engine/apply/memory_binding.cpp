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

// The memory given for each of the plan's arenas, in the plan's order; every given arena must
// be one of the plan's, and each must hold the arena's committed bytes.
std::vector<ArenaMemory> match_arenas(const Plan& plan, std::vector<ArenaMemory> given) {
    for (size_t i = 0; i < given.size(); ++i) {
        const std::string& name = given[i].name;
        if (std::none_of(plan.arenas.begin(), plan.arenas.end(),
                         [&](const ArenaPlan& a) { return a.config.name == name; }))
            fail(FailureCode::InvalidArgument, arena_where(name),
                 "memory was given for an arena the plan does not have");
        for (size_t j = 0; j < i; ++j)
            if (given[j].name == name)
                fail(FailureCode::InvalidArgument, arena_where(name),
                     "memory was given for it twice");
    }
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
std::byte* pointer_of(const PlannedTensor& t, const ArenaPlan& arena, const ArenaMemory& m) {
    if (t.offset > m.size || t.size > m.size - t.offset)
        fail(FailureCode::ArenaTooSmall, "tensor '" + t.id + "'",
             fmt::format("its {} bytes at offset {} end past the {} bytes of {}", t.size, t.offset,
                         m.size, arena_where(m.name)));
    std::byte* p = m.base + t.offset;
    if (t.alignment <= 1 || reinterpret_cast<uintptr_t>(p) % t.alignment == 0) return p;
    // Where in its buffer the tensor sits: a view sits where its base's bytes put it.
    const uint64_t inside =
        t.buffer < arena.solution.offsets.size() ? t.offset - arena.solution.offsets[t.buffer] : 0;
    // A view that asked for no alignment of its own (it has the arena's) at a row of its base,
    // byte 64 of a 128-aligned buffer: the base's own check covers the memory.
    if (inside % t.alignment != 0) {
        if (t.alignment == arena.config.alignment) return p;
        fail(FailureCode::AlignmentViolation, "tensor '" + t.id + "'",
             fmt::format("it sits at byte {} of its buffer, which its alignment of {} bytes does "
                         "not divide",
                         inside, t.alignment));
    }
    fail(FailureCode::AlignmentViolation, "tensor '" + t.id + "'",
         fmt::format("base + offset {} of {} is not aligned to the tensor's {} bytes (the "
                     "arena's base is not aligned enough)",
                     t.offset, arena_where(m.name), t.alignment));
}

// Pieces of a tensor between two looks at the cancel flag: a tensor of gigabytes takes seconds
// to fill or read back.
constexpr uint64_t kChunk = uint64_t(64) << 20;

// Calls on(offset in the tensor, bytes) for each chunk of `size` bytes, checking for cancel
// before each, while on returns true.
template <class On>
void each_chunk(uint64_t size, const Progress& progress, std::string_view stage, On on) {
    for (uint64_t done = 0; done < size; done += kChunk) {
        progress.check_cancel(stage);
        if (!on(done, std::min(kChunk, size - done))) return;
    }
}

} // namespace

MemoryBinding::MemoryBinding(const Plan& plan, std::vector<ArenaMemory> arenas,
                             const ApplyOptions& options, const Progress& progress)
    : plan_hash_(plan.plan_hash), options_(options) {
    check_fill_allowed(options.fill, options.policy);
    arenas_ = match_arenas(plan, std::move(arenas));
    for (const ArenaPlan& a : plan.arenas)
        committed_.push_back(a.config.committed_bytes(a.metrics.peak_bytes));
    tensors_.reserve(plan.tensors.size());
    uint64_t total = 0;
    for (const PlannedTensor& t : plan.tensors) {
        tensors_.push_back({t.id, t.arena, t.offset, t.size,
                            pointer_of(t, plan.arenas.at(t.arena), arenas_.at(t.arena))});
        total += t.size;
    }
    // Tensor-map order is ascending id: a plan's invariant, kept here for plans made by hand.
    std::sort(tensors_.begin(), tensors_.end(),
              [](const Bound& a, const Bound& b) { return a.id < b.id; });
    // ZeroTensor_v1 / DebugFillTensor_v1 in tensor-map order; a debug pattern depends on the
    // arena offset only, so tensors that share bytes agree on them whatever the order.
    for (const Bound& b : tensors_)
        each_chunk(b.size, progress, "fill", [&](uint64_t at, uint64_t n) {
            fill_bytes(options_.fill, b.arena, b.offset + at, b.ptr + at, n);
            filled_bytes_ += n;
            progress.report(double(filled_bytes_) / double(total), "fill");
            return true;
        });
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

std::string MemoryBinding::verify(const Progress& progress) const {
    std::string wrong;
    for (const Bound& b : tensors_) {
        each_chunk(b.size, progress, "read back", [&](uint64_t at, uint64_t n) {
            const uint64_t i = first_mismatch(options_.fill, b.arena, b.offset + at, b.ptr + at, n);
            if (i != n) wrong = fmt::format("tensor '{}' byte {} of {}", b.id, at + i, b.size);
            return wrong.empty();
        });
        if (!wrong.empty()) return wrong;
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
    for (size_t i = 0; i < arenas_.size(); ++i) {
        w.array(2);
        w.text(arenas_[i].name);
        w.uint64(committed_[i]);
    }
    w.uint64(tensors_.size());
    w.uint64(filled_bytes_);
    return sha256(w.data());
}

} // namespace tmmu
