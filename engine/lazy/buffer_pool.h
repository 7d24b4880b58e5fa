#pragma once
// The buffer pool (seed 004, 14.1): a released buffer waits in pendingRelease and becomes
// acquirable only when the step ends (flush), never in the middle of a step, so no later op of
// the same step can write a buffer an earlier submission may still read.
//
// A compiled call's temporaries are parts of one buffer, its region arena, at the offsets our
// planner gave them (compiled.h): the pool hands out and takes back the arena, never the parts.
#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace tmmu::lazy {

struct PoolBuffer {
    uint64_t bytes = 0;
    uint32_t refs = 0;       // values and locs holding it
    uint64_t version = 0;    // storageVersion: + 1 per committed in-place store (5.3)
    std::vector<float> data; // the buffer's memory; empty for a part of a region arena
    uint64_t arena = 0;      // a part's region arena, and where in it the part begins (floats)
    uint64_t offset = 0;
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
    // A part of the live buffer `arena`: `elements` floats from `offset`. Parts are not the
    // pool's memory: never pending, free or held bytes; release() forgets one at once.
    uint64_t part(uint64_t arena, uint64_t offset, uint64_t elements);
    void release(uint64_t id); // -> pendingRelease (a part: gone)
    // A buffer's memory (a part's, inside its arena).
    std::span<float> span(uint64_t id);
    std::span<const float> span(uint64_t id) const;
    // pendingRelease -> free; returns the buffers moved, in id order.
    std::vector<uint64_t> flush();

    PoolBuffer& at(uint64_t id) { return buffers_.at(id); }
    const PoolBuffer& at(uint64_t id) const { return buffers_.at(id); }
    uint64_t held_bytes() const { return held_bytes_; } // live + pending + free
    uint64_t peak_bytes() const { return peak_bytes_; }
    uint64_t allocated() const { return allocated_; }
    uint64_t reused() const { return reused_; }
    const std::vector<uint64_t>& pending() const { return pending_; }
    std::vector<uint64_t> live() const; // ids of buffers in use (not parts), ascending

  private:
    std::map<uint64_t, PoolBuffer> buffers_;
    std::map<uint64_t, std::vector<uint64_t>> free_; // bytes -> ids (ascending)
    std::vector<uint64_t> pending_;
    uint64_t next_ = 1, held_bytes_ = 0, peak_bytes_ = 0, allocated_ = 0, reused_ = 0;
};

} // namespace tmmu::lazy
