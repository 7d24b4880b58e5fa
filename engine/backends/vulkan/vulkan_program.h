#pragma once
// A compiled plan run by the Vulkan backend (issue 13): the plan's register arena is one
// VkBuffer with every register at the planner's offset, the weights as few buffers as the
// device's allocation limit allows, each state block one buffer for all slots. A step is one
// command buffer (inputs in, every instruction's kernels, logits out) submitted once; it is
// recorded at the first step and submitted again while the row count and counting stay the
// same. No Vulkan header here: the CLI and the studio include it.
#include "core/progress.h"
#include "models/transformer_config.h"
#include "runtime/adapter.h"
#include "runtime/program.h"

#include <memory>

namespace tmmu::vulkan {

// The executor on the first device that can run the backend (VK_DRIVER_FILES picks the
// driver). DEVICE_ERROR when there is none or the run does not fit. With the request's memory
// checks, every step runs them on the device (vulkan_memory_check.h): ADDRESS_COLLISION names
// the first finding.
std::unique_ptr<runtime::Executor> make_vulkan_executor(const runtime::ExecutionPlan& decode,
                                                        runtime::WeightStore weights,
                                                        const runtime::RunRequest& request);

// The static table: runtime::GpuAdapters over vulkan_kernels.h.
const runtime::AdapterTable& vulkan_adapters();

// runtime::generate on the Vulkan backend.
runtime::RunResult generate(const TransformerConfig& config, const runtime::RunRequest& request,
                            const Progress& progress);

} // namespace tmmu::vulkan
