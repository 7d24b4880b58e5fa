#include "backends/vulkan/vulkan_kernels.h"

#include "core/failure.h"
#include "runtime/rope.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <span>

namespace tmmu::vulkan {

namespace {

// SPIR-V words, one array per shader (glslc -mfmt=num at build time).
const uint32_t kEmbeddingSpv[] = {
#include "embedding.spv.inc"
};
const uint32_t kEmbeddingF16Spv[] = {
#include "embedding_f16.spv.inc"
};
const uint32_t kLinearF16Spv[] = {
#include "linear_f16.spv.inc"
};
const uint32_t kNormSpv[] = {
#include "norm.spv.inc"
};
const uint32_t kElementwiseSpv[] = {
#include "elementwise.spv.inc"
};
const uint32_t kLinearSpv[] = {
#include "linear.spv.inc"
};
const uint32_t kRopeSpv[] = {
#include "rope.spv.inc"
};
const uint32_t kStoreKvSpv[] = {
#include "store_kv.spv.inc"
};
const uint32_t kAttendSpv[] = {
#include "attend.spv.inc"
};
const uint32_t kMemoryCheckSpv[] = {
#include "memory_check.spv.inc"
};

// Every kernel's SPIR-V, in Kernel's order.
const std::array<std::span<const uint32_t>, size_t(Kernel::Count)> kSpirv = {
    kEmbeddingSpv, kEmbeddingF16Spv, kNormSpv,    kElementwiseSpv, kLinearSpv,
    kLinearF16Spv, kRopeSpv,         kStoreKvSpv, kAttendSpv,      kMemoryCheckSpv};

constexpr uint32_t kPushBytes = 128;
constexpr uint32_t kThreads = 64;      // THREADS in shaders/common.glsl
constexpr uint32_t kMaxGroups = 65535; // the least maxComputeWorkGroupCount[0..2]

// The push-constant blocks, member for member as the shaders declare them (std430: 64-bit
// addresses first, then 32-bit fields).
struct EmbeddingPush {
    uint64_t tokens, positions, table, positions_table, dst;
    uint32_t width;
};
struct NormPush {
    uint64_t x, gamma, beta, dst;
    uint32_t width;
    float eps;
    uint32_t layer;
};
struct ElementwisePush {
    uint64_t a, b, dst;
    uint32_t n, op;
};
struct LinearPush {
    uint64_t x, w, bias, dst;
    uint32_t in, col0, cols;
};
struct RopePush {
    uint64_t x, positions, table;
    uint32_t rows, heads, head_dim, table_positions;
};
struct StoreKvPush {
    uint64_t k, v, cache, stride, slots, positions;
    uint32_t kv_width, max_seq;
};
struct MemoryCheckPush {
    uint64_t data, prints, report;
    uint32_t words, reg, instruction, op;
};
struct AttendPush {
    uint64_t q, cache, stride, slots, positions, dst, scores;
    uint32_t heads, kv_heads, head_dim, max_seq;
    float scale;
};

uint64_t address(const void* p) {
    return reinterpret_cast<uintptr_t>(p);
}

Recorder& recorder(void* queue) {
    return *static_cast<Recorder*>(queue);
}

template <class Push>
void dispatch(void* queue, Kernel k, const Push& push, uint32_t x, uint32_t y = 1) {
    static_assert(sizeof(Push) <= kPushBytes);
    recorder(queue).dispatch(k, &push, sizeof(Push), x, y);
}

uint32_t element_groups(uint64_t n) {
    return uint32_t(std::clamp<uint64_t>((n + kThreads - 1) / kThreads, 1, kMaxGroups));
}

// linear.comp gives each subgroup a column: groups enough for one column per subgroup.
uint32_t linear_groups(const VulkanContext& context, uint32_t cols) {
    const uint32_t per_group = std::max(1u, kThreads / std::max(1u, context.subgroup_size()));
    return std::clamp((cols + per_group - 1) / per_group, 1u, kMaxGroups);
}

uint32_t checked_count(uint64_t n, const char* what) {
    if (n > UINT32_MAX)
        fail(FailureCode::InvalidArgument, what,
             fmt::format("{} elements, more than a Vulkan kernel indexes (2^32)", n));
    return uint32_t(n);
}

void elementwise(void* queue, const float* a, const float* b, float* out, uint64_t n, uint32_t op) {
    dispatch(
        queue, Kernel::Elementwise,
        ElementwisePush{address(a), address(b), address(out), checked_count(n, "elementwise"), op},
        element_groups(n));
}

} // namespace

Pipelines::Pipelines(const VulkanContext& context) : context_(context) {
    const VulkanFns& fn = context.fn();
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.pushConstantRangeCount = 1;
    layout.pPushConstantRanges = &range;
    check_vk(fn.vkCreatePipelineLayout(context.device(), &layout, nullptr, &layout_),
             "vkCreatePipelineLayout");
    for (size_t k = 0; k < size_t(Kernel::Count); ++k) {
        const std::span<const uint32_t> code = kSpirv[k];
        VkShaderModuleCreateInfo module{};
        module.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
        module.codeSize = code.size_bytes();
        module.pCode = code.data();
        VkShaderModule shader = VK_NULL_HANDLE;
        check_vk(fn.vkCreateShaderModule(context.device(), &module, nullptr, &shader),
                 "vkCreateShaderModule");
        VkComputePipelineCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
        info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        info.stage.module = shader;
        info.stage.pName = "main";
        info.layout = layout_;
        const VkResult r = fn.vkCreateComputePipelines(context.device(), VK_NULL_HANDLE, 1, &info,
                                                       nullptr, &pipelines_[k]);
        fn.vkDestroyShaderModule(context.device(), shader, nullptr);
        check_vk(r, fmt::format("vkCreateComputePipelines (kernel {})", k));
    }
}

Pipelines::~Pipelines() {
    const VulkanFns& fn = context_.fn();
    for (VkPipeline p : pipelines_)
        if (p) fn.vkDestroyPipeline(context_.device(), p, nullptr);
    if (layout_) fn.vkDestroyPipelineLayout(context_.device(), layout_, nullptr);
}

void Recorder::dispatch(Kernel k, const void* push, uint32_t bytes, uint32_t x, uint32_t y) {
    const VulkanFns& fn = context_.fn();
    const VkPipeline pipeline = pipelines_.pipeline(k);
    if (pipeline != bound_) {
        fn.vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        bound_ = pipeline;
    }
    fn.vkCmdPushConstants(commands_, pipelines_.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, bytes,
                          push);
    fn.vkCmdDispatch(commands_, x, y, 1);
    VkMemoryBarrier barrier{};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    fn.vkCmdPipelineBarrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, nullptr, 0,
                            nullptr);
    ++dispatches_;
}

void memory_check(Recorder& recorder, uint64_t data, uint64_t prints, uint64_t report,
                  uint32_t words, uint32_t reg, uint32_t instruction, CheckOp op) {
    dispatch(&recorder, Kernel::MemoryCheck,
             MemoryCheckPush{data, prints, report, words, reg, instruction, uint32_t(op)}, 1);
}

void VulkanKernels::embedding(void* queue, const int32_t* tokens, const uint32_t* positions,
                              const void* table, const void* positions_table, bool half, float* out,
                              uint32_t rows, uint32_t width) {
    dispatch(queue, half ? Kernel::EmbeddingF16 : Kernel::Embedding,
             EmbeddingPush{address(tokens), address(positions), address(table),
                           address(positions_table), address(out), width},
             rows);
}

void VulkanKernels::layernorm(void* queue, const float* x, const float* gamma, const float* beta,
                              float* out, uint32_t rows, uint32_t width, float eps) {
    dispatch(queue, Kernel::Norm,
             NormPush{address(x), address(gamma), address(beta), address(out), width, eps, 1},
             rows);
}

void VulkanKernels::rmsnorm(void* queue, const float* x, const float* gamma, float* out,
                            uint32_t rows, uint32_t width, float eps) {
    dispatch(queue, Kernel::Norm,
             NormPush{address(x), address(gamma), 0, address(out), width, eps, 0}, rows);
}

void VulkanKernels::add(void* queue, const float* a, const float* b, float* out, uint64_t n) {
    elementwise(queue, a, b, out, n, 0);
}

void VulkanKernels::gelu_tanh(void* queue, float* x, uint64_t n) {
    elementwise(queue, x, nullptr, x, n, 1);
}

void VulkanKernels::silu_mul(void* queue, float* gate, const float* up, uint64_t n) {
    elementwise(queue, gate, up, gate, n, 2);
}

void VulkanKernels::linear(void* queue, const float* x, const void* w, bool half, const float* bias,
                           float* out, uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols) {
    dispatch(queue, half ? Kernel::LinearF16 : Kernel::Linear,
             LinearPush{address(x), address(w), address(bias), address(out), in, col0, cols},
             linear_groups(recorder(queue).context(), cols), rows);
}

void VulkanKernels::rope(void* queue, float* x, const uint32_t* positions, uint32_t rows,
                         uint32_t heads, uint32_t head_dim, float theta) {
    const Recorder& r = recorder(queue);
    const runtime::RopeTable* table = runtime::find_rope_table(r.rope_tables, theta, head_dim);
    if (!table)
        fail(FailureCode::InvalidExecutionPlan, "vulkan rope", // the program made every table
             fmt::format("no RoPE table for theta {} and head size {}", theta, head_dim));
    const uint64_t n = uint64_t(rows) * heads * (head_dim / 2);
    dispatch(queue, Kernel::Rope,
             RopePush{address(x), address(positions), table->address, rows, heads, head_dim,
                      table->positions},
             element_groups(checked_count(n, "rope")));
}

void VulkanKernels::store_kv(void* queue, const float* k, const float* v, void* cache,
                             uint64_t stride, const uint32_t* slots, const uint32_t* positions,
                             uint32_t rows, uint32_t kv_width, uint32_t max_seq) {
    dispatch(queue, Kernel::StoreKv,
             StoreKvPush{address(k), address(v), address(cache), stride, address(slots),
                         address(positions), kv_width, max_seq},
             rows);
}

void VulkanKernels::attend(void* queue, const float* q, const void* cache, uint64_t stride,
                           const uint32_t* slots, const uint32_t* positions, float* out,
                           uint32_t rows, uint32_t heads, uint32_t kv_heads, uint32_t head_dim,
                           uint32_t max_seq) {
    const Recorder& r = recorder(queue);
    if (uint64_t(rows) * heads * max_seq > r.scores_floats)
        fail(FailureCode::InvalidExecutionPlan, "vulkan attend", // sized at load for the plan
             "the scores buffer is smaller than the step's attention");
    const auto scale = float(1.0 / std::sqrt(double(head_dim)));
    dispatch(queue, Kernel::Attend,
             AttendPush{address(q), address(cache), stride, address(slots), address(positions),
                        address(out), r.scores, heads, kv_heads, head_dim, max_seq, scale},
             rows, heads);
}

} // namespace tmmu::vulkan
