#pragma once
// Buffer orders for the gap placer. Every order lists every buffer index once and breaks its
// last tie by lower index, so the same problem always gives the same order.
#include "plan/offset_problem.h"

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <vector>

namespace tmmu::placement {

uint64_t length(const Buffer& b);

// A buffer order of a problem (one of the functions below).
using OrderFn = std::vector<uint32_t> (*)(const OffsetProblem&);

// The orders of one problem, each made once, by whichever thread asks for it first (a thread
// asking while it is made waits): the strategies that compete in auto and optimal ask for the
// same orders (order_by_size four times at most), and at a million buffers an order takes
// 60-270 ms.
class OrderCache {
  public:
    explicit OrderCache(const OffsetProblem& p) : p_(p) {}
    OrderCache(const OrderCache&) = delete;
    OrderCache& operator=(const OrderCache&) = delete;
    // The order, valid as long as the cache.
    const std::vector<uint32_t>& operator()(OrderFn order);
    // Makes each of orders not made yet.
    void make(std::span<const OrderFn> orders);

  private:
    struct Entry {
        OrderFn fn;
        std::once_flag made;
        std::vector<uint32_t> order;
    };
    const OffsetProblem& p_;
    std::mutex mutex_;          // guards entries_ (not the orders, made under their once_flag)
    std::deque<Entry> entries_; // a deque: entries stay where they are as it grows
};

std::vector<uint32_t> order_by_size(const OffsetProblem& p);   // size, length desc
std::vector<uint32_t> order_by_length(const OffsetProblem& p); // length, size desc
std::vector<uint32_t> order_by_area(const OffsetProblem& p);   // size * length desc
// Lifetime begin asc, then size desc: the order an online allocator sees (ONNX Runtime).
std::vector<uint32_t> order_by_begin(const OffsetProblem& p);
std::vector<uint32_t> order_by_size_begin(const OffsetProblem& p); // size desc, begin asc
std::vector<uint32_t> order_by_size_end(const OffsetProblem& p);   // size desc, end desc
std::vector<uint32_t> order_by_begin_end(const OffsetProblem& p);  // begin asc, end asc
// Size desc, equal sizes in input (index) order: no secondary key at all.
std::vector<uint32_t> order_by_size_index(const OffsetProblem& p);
// Lifetime begin asc, equal begins in input order: the order an online allocator meets the
// buffers when each step allocates its outputs in turn (ONNX Runtime's pattern planner).
std::vector<uint32_t> order_by_birth(const OffsetProblem& p);
// Lifetime end asc, equal ends in input order.
std::vector<uint32_t> order_by_death(const OffsetProblem& p);
// The buffers live at a peak of the live bytes (a time when they reach lower_bound_bytes) first,
// then the others; each group by size desc, length desc. A plan at the lower bound stacks the
// buffers of a peak without a gap between them, so they go in before anything that could split
// their space; on random problems shaped like real graphs this reaches the bound more often
// than the size order alone (and is worse where it does not).
std::vector<uint32_t> order_peak_first(const OffsetProblem& p);
// As order_peak_first, each group by length desc, size desc.
std::vector<uint32_t> order_peak_first_by_length(const OffsetProblem& p);
// peak[i] = whether buffer i is live at a peak of the live bytes (see order_peak_first).
std::vector<bool> live_at_peak(const OffsetProblem& p);
// Number of time-overlapping buffers desc, then size desc.
std::vector<uint32_t> order_by_conflicts(const OffsetProblem& p);
// Total size of the time-overlapping buffers desc, then size desc.
std::vector<uint32_t> order_by_conflict_bytes(const OffsetProblem& p);

// The framework planners' own orders (framework_heuristics.h), their ties broken as they do:
// Size desc, equal sizes in reverse index order: TFLite Micro's GreedyMemoryPlanner adds its
// buffers to the sort arrays from the tail, and its stable sort by size keeps that order.
std::vector<uint32_t> order_tflm(const OffsetProblem& p);
// TFLite's ArenaPlanner: the buffers live through the whole problem first, by index; then size
// desc, then begin asc (std::sort there, so further ties unspecified: here by index).
std::vector<uint32_t> order_tflite_arena(const OffsetProblem& p);
// TVM USMP's greedy_by_size: size desc, then conflict count desc, then name desc. Our buffers
// have no names; tensor ids are their names and come in index order, so: index desc.
std::vector<uint32_t> order_tvm_size(const OffsetProblem& p);
// TVM USMP's greedy_by_conflicts: conflict count desc, then size desc, then index desc.
std::vector<uint32_t> order_tvm_conflicts(const OffsetProblem& p);

// conflicts[i] = number of other buffers whose lifetimes overlap buffer i's. O(n log n).
std::vector<uint64_t> conflict_counts(const OffsetProblem& p);
// bytes[i] = total size of the other buffers whose lifetimes overlap buffer i's. O(n log n).
__extension__ typedef unsigned __int128 Bytes; // a sum of sizes never overflows 128 bits
std::vector<Bytes> conflict_bytes(const OffsetProblem& p);

} // namespace tmmu::placement
