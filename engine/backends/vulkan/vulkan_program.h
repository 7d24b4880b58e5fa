#pragma once
// A compiled plan run by the Vulkan backend (issue 13): the plan's register arena is one
// VkBuffer with every register at the planner's offset, the weights as few buffers as the
// device's allocation limit allows, each state block one buffer for all slots. A step is one
// command buffer (inputs in, every instruction's kernels, logits out) submitted once; it is
// recorded at the first step and submitted again while the row count and counting stay the
// same. No Vulkan header here: the CLI and the studio include it.
#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/program.h"

#include <memory>

namespace tmmu::vulkan {

// The executor on the first device that can run the backend (VK_DRIVER_FILES picks the
// driver). DEVICE_ERROR when there is none or the run does not fit; INVALID_ARGUMENT for a
// request the backend does not take (memory checks run on the CPU backend only).
std::unique_ptr<runtime::Executor> make_vulkan_executor(const runtime::ExecutionPlan& decode,
                                                        runtime::WeightStore weights,
                                                        const runtime::RunRequest& request);

// runtime::generate on the Vulkan backend.
runtime::RunResult generate(const TransformerConfig& config, const runtime::RunRequest& request,
                            const Progress& progress);

} // namespace tmmu::vulkan
