#include "runtime/adapter_check.h"

#include "core/failure.h"
#include "runtime/param_block.h"

#include <fmt/format.h>

namespace tmmu::runtime {

uint32_t slots_per_step(const ExecutionPlan& plan) {
    return plan.mode == PlanMode::Decode ? plan.rows : 1;
}

void check_backend_supports(const ExecutionPlan& plan, const AdapterTable& table,
                            const AdapterCapabilities& capabilities, std::string_view backend) {
    const uint32_t slots = slots_per_step(plan);
    for (size_t i = 0; i < plan.instructions.size(); ++i) {
        const Opcode op = plan.instructions[i].opcode;
        const std::string where =
            fmt::format("{} instruction {} ({})", plan.name, i, opcode_name(op));
        if (!table[uint8_t(op)])
            fail(FailureCode::UnsupportedOpcode, where,
                 fmt::format("the {} backend has no adapter for {}; nothing falls back to "
                             "another one",
                             backend, opcode_name(op)));
        const AdapterCapability& can = capabilities[uint8_t(op)];
        if (op == Opcode::MultiheadAttention && !can.supports_rope_scaling &&
            param_view<AttentionParams>(plan.params[plan.instructions[i].param_block])
                    .rope_scaling != 0)
            fail(FailureCode::UnsupportedOpcode, where,
                 fmt::format("the {} backend's {} adapter does not compute RoPE scaling (the "
                             "config's rope_scaling); run it on a backend that does (the CPU "
                             "reference does)",
                             backend, opcode_name(op)));
        const uint32_t limit = can.supports_batch ? can.max_batch_size : 1;
        if (limit != 0 && slots > limit)
            fail(FailureCode::BatchUnsupported, where,
                 fmt::format("the {} backend's {} adapter takes at most {} slot{} per step, the "
                             "plan runs {}: compile it for fewer slots or route it to another "
                             "backend",
                             backend, opcode_name(op), limit, limit == 1 ? "" : "s", slots));
    }
}

} // namespace tmmu::runtime
