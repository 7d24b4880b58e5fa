#include "backends/cpu/scheduler.h"

#include "core/failure.h"
#include "runtime/plan_compiler.h"

#include <algorithm>
#include <fmt/format.h>

namespace tmmu::cpu {

using namespace tmmu::runtime;

namespace {

int32_t argmax(std::span<const float> row) {
    return int32_t(std::max_element(row.begin(), row.end()) - row.begin());
}

} // namespace

Scheduler::Scheduler(const TransformerConfig& config, const WeightStore& weights, uint32_t slots,
                     uint32_t max_seq)
    : prefill_plan_(compile_transformer(config, {PlanMode::Prefill, max_seq, max_seq})),
      decode_plan_(compile_transformer(config, {PlanMode::Decode, slots, max_seq})),
      states_(decode_plan_.plan, slots), prefill_(prefill_plan_, weights, states_),
      decode_(decode_plan_, weights, states_), max_seq_(max_seq), slots_(slots),
      used_(slots, false) {
    for (uint32_t s = 0; s < slots; ++s)
        states_.apply(StateEvent::Alloc, s);
}

void Scheduler::submit(Request r) {
    if (r.prompt.empty() || r.prompt.size() + r.max_new_tokens > max_seq_)
        fail(FailureCode::InvalidArgument, fmt::format("request {}", r.id),
             fmt::format("{} prompt tokens + {} new ones: expected 1 to {} in all", r.prompt.size(),
                         r.max_new_tokens, max_seq_));
    queue_.push_back({std::move(r), {}, 0, 0});
}

// The prompt and whatever the request generated before an eviction, in one prefill.
void Scheduler::prefill(uint32_t slot, Running& run) {
    std::vector<int32_t> tokens = run.request.prompt;
    tokens.insert(tokens.end(), run.generated.begin(), run.generated.end());
    std::vector<uint32_t> slots(tokens.size(), slot), positions(tokens.size());
    for (uint32_t i = 0; i < tokens.size(); ++i)
        positions[i] = i;
    const std::span<const float> logits = prefill_.run(tokens, slots, positions);
    const size_t vocab = logits.size() / tokens.size();
    run.next = argmax(logits.subspan(logits.size() - vocab));
    run.position = uint32_t(tokens.size());
}

void Scheduler::admit() {
    for (uint32_t s = 0; s < slots_.size() && !queue_.empty(); ++s) {
        if (slots_[s]) continue;
        states_.apply(used_[s] ? StateEvent::Reuse : StateEvent::Reset, s);
        if (!states_.allocated(s)) states_.apply(StateEvent::Alloc, s);
        used_[s] = true;
        slots_[s] = std::move(queue_.front());
        queue_.pop_front();
        prefill(s, *slots_[s]);
    }
}

std::optional<Finished> Scheduler::abort(uint64_t id) {
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
        if (it->request.id == id) {
            Finished f{id, it->generated, true};
            queue_.erase(it);
            return f;
        }
    for (auto& slot : slots_)
        if (slot && slot->request.id == id) {
            Finished f{id, slot->generated, true};
            slot.reset(); // its blocks are truncated when the slot is reused
            return f;
        }
    return std::nullopt;
}

bool Scheduler::fork(uint64_t id, uint64_t child_id) {
    const auto parent = std::find_if(slots_.begin(), slots_.end(),
                                     [&](const auto& s) { return s && s->request.id == id; });
    const auto free = std::find_if(slots_.begin(), slots_.end(), [](const auto& s) { return !s; });
    if (parent == slots_.end() || free == slots_.end()) return false;
    const uint32_t to = uint32_t(free - slots_.begin());
    states_.apply(StateEvent::CloneForFork, to, uint32_t(parent - slots_.begin()));
    used_[to] = true;
    *free = **parent;
    (*free)->request.id = child_id;
    return true;
}

bool Scheduler::evict(uint64_t id) {
    for (uint32_t s = 0; s < slots_.size(); ++s)
        if (slots_[s] && slots_[s]->request.id == id) {
            states_.apply(StateEvent::Evict, s);
            queue_.push_front(std::move(*slots_[s]));
            slots_[s].reset();
            return true;
        }
    return false;
}

std::vector<Finished> Scheduler::step() {
    admit();
    std::vector<int32_t> tokens;
    std::vector<uint32_t> slots, positions;
    std::vector<Finished> done;
    for (uint32_t s = 0; s < slots_.size(); ++s) {
        if (!slots_[s]) continue;
        Running& run = *slots_[s];
        run.generated.push_back(run.next);
        if (run.generated.size() == run.request.max_new_tokens) {
            done.push_back({run.request.id, run.generated, false});
            slots_[s].reset();
            continue;
        }
        tokens.push_back(run.next);
        slots.push_back(s);
        positions.push_back(run.position);
    }
    if (tokens.empty()) return done;
    const std::span<const float> logits = decode_.run(tokens, slots, positions);
    const size_t vocab = logits.size() / tokens.size();
    for (size_t r = 0; r < slots.size(); ++r) {
        Running& run = *slots_[slots[r]];
        run.next = argmax(logits.subspan(r * vocab, vocab));
        ++run.position;
    }
    return done;
}

bool Scheduler::idle() const {
    return queue_.empty() &&
           std::none_of(slots_.begin(), slots_.end(), [](const auto& s) { return s.has_value(); });
}

} // namespace tmmu::cpu
