#pragma once
// The buffer pool (seed 004, 14.1): a released buffer waits in pendingRelease and becomes
// acquirable only when the step ends (flush), never in the middle of a step, so no later op of
// the same step can write a buffer an earlier submission may still read.
#include <cstdint>
#include <map>
#include <vector>

namespace tmmu::lazy {

struct PoolBuffer {
    uint64_t bytes = 0;
    uint32_t refs = 0;    // values and locs holding it
    uint64_t version = 0; // storageVersion: + 1 per committed in-place store (5.3)
    std::vector<float> data;
    enum class State : uint8_t { Live, Pending, Free } state = State::Live;
};

class BufferPool {
  public:
    struct Acquired {
        uint64_t id;
        bool reused;
    };
    // A free buffer of exactly this size (lowest id first), or a new one.
    Acquired acquire(uint64_t elements);
    void release(uint64_t id); // -> pendingRelease
    // pendingRelease -> free; returns the buffers moved, in id order.
    std::vector<uint64_t> flush();

    PoolBuffer& at(uint64_t id) { return buffers_.at(id); }
    const PoolBuffer& at(uint64_t id) const { return buffers_.at(id); }
    uint64_t held_bytes() const { return held_bytes_; } // live + pending + free
    uint64_t peak_bytes() const { return peak_bytes_; }
    uint64_t allocated() const { return allocated_; }
    uint64_t reused() const { return reused_; }
    const std::vector<uint64_t>& pending() const { return pending_; }
    std::vector<uint64_t> live() const; // ids of buffers in use, ascending

  private:
    std::map<uint64_t, PoolBuffer> buffers_;
    std::map<uint64_t, std::vector<uint64_t>> free_; // bytes -> ids (ascending)
    std::vector<uint64_t> pending_;
    uint64_t next_ = 1, held_bytes_ = 0, peak_bytes_ = 0, allocated_ = 0, reused_ = 0;
};

} // namespace tmmu::lazy
