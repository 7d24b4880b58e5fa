#include "lazy/buffer_pool.h"

#include "core/assert.h"

#include <algorithm>
#include <utility>

namespace tmmu::lazy {

BufferPool::Acquired BufferPool::acquire(uint64_t elements) {
    const uint64_t bytes = elements * sizeof(float);
    auto it = free_.find(bytes);
    if (it != free_.end() && !it->second.empty()) {
        const uint64_t id = it->second.front();
        it->second.erase(it->second.begin());
        PoolBuffer& b = buffers_.at(id);
        b.state = PoolBuffer::State::Live;
        b.refs = 0;
        ++reused_;
        return {id, true};
    }
    const uint64_t id = next_++;
    PoolBuffer& b = buffers_[id];
    b.bytes = bytes;
    b.data.assign(elements, 0.0f);
    held_bytes_ += bytes;
    peak_bytes_ = std::max(peak_bytes_, held_bytes_);
    ++allocated_;
    return {id, false};
}

uint64_t BufferPool::part(uint64_t arena, uint64_t offset, uint64_t elements) {
    TMMU_ASSERT(buffers_.at(arena).state == PoolBuffer::State::Live &&
                    offset + elements <= buffers_.at(arena).data.size(),
                "a part lies inside a live region arena");
    const uint64_t id = next_++;
    PoolBuffer& b = buffers_[id];
    b.bytes = elements * sizeof(float);
    b.arena = arena;
    b.offset = offset;
    return id;
}

std::span<const float> BufferPool::span(uint64_t id) const {
    const PoolBuffer& b = buffers_.at(id);
    const std::span<const float> memory = buffers_.at(b.arena == 0 ? id : b.arena).data;
    return b.arena == 0 ? memory : memory.subspan(b.offset, b.bytes / sizeof(float));
}

std::span<float> BufferPool::span(uint64_t id) {
    const std::span<const float> s = std::as_const(*this).span(id);
    return {const_cast<float*>(s.data()), s.size()}; // this pool's own, non-const memory
}

void BufferPool::release(uint64_t id) {
    if (buffers_.at(id).arena != 0) {
        buffers_.erase(id);
        return;
    }
    buffers_.at(id).state = PoolBuffer::State::Pending;
    pending_.push_back(id);
}

std::vector<uint64_t> BufferPool::flush() {
    std::vector<uint64_t> moved = pending_;
    std::sort(moved.begin(), moved.end());
    for (uint64_t id : moved) {
        PoolBuffer& b = buffers_.at(id);
        b.state = PoolBuffer::State::Free;
        auto& ids = free_[b.bytes];
        ids.insert(std::lower_bound(ids.begin(), ids.end(), id), id);
    }
    pending_.clear();
    return moved;
}

std::vector<uint64_t> BufferPool::live() const {
    std::vector<uint64_t> ids;
    for (const auto& [id, b] : buffers_)
        if (b.state == PoolBuffer::State::Live && b.arena == 0) ids.push_back(id);
    return ids;
}

} // namespace tmmu::lazy
