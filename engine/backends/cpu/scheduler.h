#pragma once
// Requests over slots (seed 002, A9.6): a request arrives, takes a free slot (its state blocks
// reset, or reused when the slot served an earlier request), is prefilled, then decodes with
// every other active request in one batched step per token until it has its tokens or is
// aborted; a request can fork (its slot's state cloned into a free slot) or be evicted (its
// state released; it queues to prefill its prompt and what it generated again). Each event runs
// the lifecycle matrix on the slot's blocks.
#include "backends/cpu/cpu_program.h"
#include "models/transformer_config.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace tmmu::cpu {

struct Request {
    uint64_t id = 0;
    std::vector<int32_t> prompt;
    uint32_t max_new_tokens = 16;
};

struct Finished {
    uint64_t id = 0;
    std::vector<int32_t> generated;
    bool aborted = false;
};

class Scheduler {
  public:
    // `slots` requests at once, each up to max_seq tokens (prompt plus generated).
    Scheduler(const TransformerConfig& config, const runtime::WeightStore& weights, uint32_t slots,
              uint32_t max_seq);

    void submit(Request r); // queued; admitted by the next step with a free slot
    std::optional<Finished> abort(uint64_t id); // ends it now (queued or running)
    bool fork(uint64_t id, uint64_t child_id);  // false when no slot is free or id not running
    bool evict(uint64_t id);                    // false when id is not running
    // Admits what fits, then one batched decode step over every running request; returns the
    // requests that finished in it.
    std::vector<Finished> step();
    bool idle() const;

  private:
    struct Running {
        Request request;
        std::vector<int32_t> generated;
        int32_t next = 0;      // the token the next step feeds
        uint32_t position = 0; // where `next` goes
    };
    void admit();
    void prefill(uint32_t slot, Running& run);

    runtime::CompiledPlan prefill_plan_, decode_plan_;
    SlotStates states_;
    CpuProgram prefill_, decode_;
    uint32_t max_seq_;
    std::vector<std::optional<Running>> slots_;
    std::vector<bool> used_; // a slot has served a request before: admission is a Reuse
    std::deque<Running> queue_;
};

} // namespace tmmu::cpu
