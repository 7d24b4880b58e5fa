#include "lazy/buffer_pool.h"

#include <algorithm>

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

void BufferPool::release(uint64_t id) {
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
        if (b.state == PoolBuffer::State::Live) ids.push_back(id);
    return ids;
}

} // namespace tmmu::lazy
