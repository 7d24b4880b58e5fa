#include "runtime/physical_mapping.h"

#include <algorithm>

namespace tmmu::runtime {

namespace {

// Per register: the instruction writing it (0 for the host's plan inputs).
std::vector<uint64_t> first_steps(const ExecutionPlan& p) {
    std::vector<uint64_t> begin(p.registers.size(), 0);
    for (uint32_t i = 0; i < p.instructions.size(); ++i)
        for (RegisterRef r : p.instructions[i].outputs)
            begin[r.id] = i;
    return begin;
}

OffsetProblem register_problem(const CompiledPlan& c, uint64_t guard) {
    const ExecutionPlan& p = c.plan;
    const std::vector<uint64_t> begin = first_steps(p);
    OffsetProblem problem;
    for (size_t r = 0; r < p.registers.size(); ++r) {
        const uint32_t last = c.liveness.register_last_read[r];
        const uint64_t end =
            last == LivenessMap::kNeverRead ? begin[r] + 1 : std::max<uint64_t>(begin[r], last) + 1;
        problem.buffers.push_back({begin[r], end, p.registers[r].view.bytes() + 2 * guard,
                                   kRegisterAlignment, std::nullopt});
    }
    return problem;
}

} // namespace

RegisterMemory map_registers(const CompiledPlan& c, const PlanOptions& options,
                             const Progress& progress, uint64_t guard) {
    const ExecutionPlan& p = c.plan;
    std::vector<std::string> ids;
    for (const RegisterDesc& r : p.registers)
        ids.push_back(r.name);
    PlanOptions o = options;
    o.policy.arenas = {ArenaConfig{"arena", UINT64_MAX, kRegisterAlignment}};
    RegisterMemory m;
    m.arena = plan_problem(register_problem(c, guard), ids, o, progress, p.name + " registers");
    const ArenaPlan& arena = m.arena.arenas.front();
    m.arena_bytes = arena.solution.height;
    m.offset = arena.solution.offsets;
    for (uint64_t& o : m.offset)
        o += guard;
    m.mapping.register_to_physical.resize(p.registers.size());
    for (size_t r = 0; r < p.registers.size(); ++r) {
        const uint32_t slot = arena.slot_of_buffer[r];
        m.mapping.register_to_physical[r] = uint16_t(slot);
        if (slot >= m.mapping.physical_specs.size()) m.mapping.physical_specs.resize(slot + 1);
        PhysicalSpec& spec = m.mapping.physical_specs[slot];
        spec.size = std::max(spec.size, arena.problem.buffers[r].size);
        m.separate_bytes += arena.problem.buffers[r].size;
    }
    m.mapping.physical_count = uint16_t(m.mapping.physical_specs.size());
    for (const PhysicalSpec& s : m.mapping.physical_specs)
        m.slot_bytes += s.size;
    return m;
}

std::vector<uint64_t> register_offsets(const CompiledPlan& plan, RegisterLayout layout,
                                       uint64_t guard_bytes) {
    if (layout == RegisterLayout::Planned)
        return map_registers(plan, PlanOptions{}, Progress{}, guard_bytes).offset;
    std::vector<uint64_t> offsets;
    uint64_t at = 0;
    for (const RegisterDesc& r : plan.plan.registers) {
        offsets.push_back(at + guard_bytes);
        at += (r.view.bytes() + 2 * guard_bytes + kRegisterAlignment - 1) / kRegisterAlignment *
              kRegisterAlignment;
    }
    return offsets;
}

uint64_t register_arena_bytes(const ExecutionPlan& plan, const std::vector<uint64_t>& offsets,
                              uint64_t guard_bytes) {
    uint64_t bytes = 0;
    for (size_t r = 0; r < plan.registers.size(); ++r)
        bytes = std::max(bytes, offsets[r] + plan.registers[r].view.bytes() + guard_bytes);
    return bytes;
}

} // namespace tmmu::runtime
