#include "backends/cpu/cpu_program.h"

#include "backends/cpu/cpu_adapters.h"
#include "core/failure.h"
#include "runtime/adapter_check.h"
#include "runtime/adapter_memory.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

namespace tmmu::cpu {

using namespace tmmu::runtime;

namespace {

constexpr uint64_t kFloatsPer64Bytes = 64 / sizeof(float);

uint64_t round_up_floats(uint64_t bytes) {
    return (bytes + 63) / 64 * kFloatsPer64Bytes;
}

} // namespace

SlotStates::SlotStates(const ExecutionPlan& plan, uint32_t slots)
    : slots_(slots), descriptors_(plan.states), allocated_(slots, true) {
    for (const StateDescriptor& s : plan.states) {
        const uint64_t stride = round_up_floats(s.size_bytes) * sizeof(float);
        // Allocate (zero-filled either way: a vector's floats start at 0).
        blocks_.emplace_back(stride / sizeof(float) * slots, 0.0f);
        strides_.push_back(stride);
        sizes_.push_back(s.size_bytes);
    }
}

StateAction SlotStates::apply(StateEvent event, uint32_t slot, uint32_t parent) {
    StateAction first = StateAction::Keep;
    for (size_t b = 0; b < blocks_.size(); ++b) {
        const StateAction action = state_action(descriptors_[b].lifecycle, event);
        if (b == 0) first = action;
        const uint64_t floats = strides_[b] / sizeof(float);
        float* mine = blocks_[b].data() + slot * floats;
        switch (action) {
        case StateAction::Allocate:
            if (descriptors_[b].zero_init) std::fill(mine, mine + floats, 0.0f);
            break;
        case StateAction::Release: // the contents are gone: poison, so a use shows at once
            std::fill(mine, mine + floats, std::numeric_limits<float>::quiet_NaN());
            break;
        case StateAction::CopyPrefix: // the whole block: positions past the prefix are unused
            std::copy(blocks_[b].data() + parent * floats,
                      blocks_[b].data() + (parent + 1) * floats, mine);
            break;
        case StateAction::Truncate: // the request's length is the scheduler's: nothing here
        case StateAction::Keep:
            break;
        }
    }
    if (event == StateEvent::Alloc || event == StateEvent::CloneForFork) allocated_[slot] = true;
    if (first == StateAction::Release) allocated_[slot] = false;
    return first;
}

bool SlotStates::fits(const ExecutionPlan& plan) const {
    if (plan.states.size() != sizes_.size()) return false;
    for (size_t s = 0; s < sizes_.size(); ++s)
        if (plan.states[s].size_bytes != sizes_[s]) return false;
    return true;
}

CpuProgram::CpuProgram(CompiledPlan plan, const WeightStore& weights, SlotStates& states,
                       RegisterLayout layout, bool check_memory)
    : plan_(std::move(plan)), states_(states) {
    const ExecutionPlan& p = plan_.plan;
    if (weights.offset.size() != p.weights.size())
        fail(FailureCode::InvalidArgument, p.name,
             fmt::format("{} weights given, the plan has {}", weights.offset.size(),
                         p.weights.size()));
    if (!states.fits(p))
        fail(FailureCode::InvalidArgument, p.name,
             "the slot states were made for a plan with other state blocks");
    check_backend_supports(p, cpu_adapters(), cpu_capabilities(), "cpu");
    const uint64_t guard = check_memory ? kGuardBytes : 0;
    offset_ = register_offsets(plan_, layout, guard);
    arena_.assign(round_up_floats(register_arena_bytes(p, offset_, guard)), 0.0f);
    if (check_memory)
        check_ = std::make_unique<MemoryCheck>(
            plan_, offset_,
            std::span<uint8_t>(reinterpret_cast<uint8_t*>(arena_.data()),
                               arena_.size() * sizeof(float)));
    workspace_.assign(plan_workspace_floats(p), 0.0f);
    limits_ = step_limits(p, states.slot_count());
    bound_ = bind_instructions(
        p, cpu_adapters(), reinterpret_cast<char*>(arena_.data()), offset_,
        [&](WeightRef w) -> const void* { return weights.at(w); },
        [&](uint8_t block) {
            return StateBinding{states.base(block), states.stride(block)};
        });
}

std::span<const float> CpuProgram::run(std::span<const int32_t> tokens,
                                       std::span<const uint32_t> slots,
                                       std::span<const uint32_t> positions) {
    check_step(plan_.plan, limits_, tokens, slots, positions);
    const ExecutionPlan& p = plan_.plan;
    char* base = reinterpret_cast<char*>(arena_.data());
    std::copy(tokens.begin(), tokens.end(),
              reinterpret_cast<int32_t*>(base + offset_[p.plan_inputs[0].id]));
    ExecutionContext ctx;
    ctx.mode = p.mode;
    ctx.rows = uint32_t(tokens.size());
    ctx.slot_of_row = slots;
    ctx.position_of_row = positions;
    ctx.workspace = workspace_;
    if (check_) {
        check_->start_step();
        check_->host_wrote(p.plan_inputs[0]);
        for (uint32_t i = 0; i < bound_.size(); ++i) {
            check_->before(i);
            bound_[i].fn(ctx, bound_[i].operands);
            check_->after(i);
        }
    } else if (counting_) {
        for (const BoundInstruction& b : bound_) {
            b.fn(ctx, b.operands);
            ++counters_.per_opcode[b.opcode];
        }
        counters_.total += bound_.size();
    } else {
        for (const BoundInstruction& b : bound_)
            b.fn(ctx, b.operands);
    }
    const RegisterRef logits = p.plan_outputs[0];
    const uint64_t vocab = p.registers[logits.id].view.shape[1];
    return {reinterpret_cast<const float*>(base + offset_[logits.id]), ctx.rows * vocab};
}

} // namespace tmmu::cpu
