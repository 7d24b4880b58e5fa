#pragma once
// The Vulkan backend's kernels (shaders/*.comp, SPIR-V built by glslc at build time and linked
// in): one compute pipeline per shader, and a Recorder that appends dispatches to the command
// buffer of a step. VulkanKernels is the kernel set runtime::GpuAdapters calls, with
// ExecutionContext::queue the step's Recorder and every pointer a device address.
#include "backends/vulkan/vulkan_context.h"
#include "runtime/param_block.h"
#include "runtime/rope.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tmmu::vulkan {

enum class Kernel : uint8_t {
    Embedding,
    EmbeddingF16, // the tables in f16
    Norm,
    Elementwise,
    Linear,
    LinearF16, // the matrix in f16
    Rope,
    StoreKv,
    Attend,
    MemoryCheck,
    Count
};

// Every kernel's pipeline, sharing one layout: no descriptor sets, 128 bytes of push constants
// (the least every device offers).
class Pipelines {
  public:
    explicit Pipelines(const VulkanContext& context);
    Pipelines(const Pipelines&) = delete;
    Pipelines& operator=(const Pipelines&) = delete;
    ~Pipelines();
    VkPipeline pipeline(Kernel k) const { return pipelines_[size_t(k)]; }
    VkPipelineLayout layout() const { return layout_; }

  private:
    const VulkanContext& context_;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    std::array<VkPipeline, size_t(Kernel::Count)> pipelines_{};
};

// Appends kernels to `commands`, each followed by a barrier that makes its writes visible to
// the next (the step's kernels run in order, as the plan's instructions do).
class Recorder {
  public:
    Recorder(const VulkanContext& context, const Pipelines& pipelines, VkCommandBuffer commands)
        : context_(context), pipelines_(pipelines), commands_(commands) {}
    void dispatch(Kernel k, const void* push, uint32_t bytes, uint32_t x, uint32_t y = 1);
    uint64_t dispatches() const { return dispatches_; }
    const VulkanContext& context() const { return context_; }

    // Attention's scores: `scores` holds scores_floats floats.
    uint64_t scores = 0, scores_floats = 0;
    std::vector<runtime::RopeTable> rope_tables; // runtime/rope.h

  private:
    const VulkanContext& context_;
    const Pipelines& pipelines_;
    VkCommandBuffer commands_;
    VkPipeline bound_ = VK_NULL_HANDLE;
    uint64_t dispatches_ = 0;
};

// The launchers, as runtime/gpu_adapters.h lists them.
struct VulkanKernels {
    static void embedding(void* queue, const int32_t* tokens, const uint32_t* positions,
                          const void* table, const void* positions_table, bool half, float* out,
                          uint32_t rows, uint32_t width);
    static void layernorm(void* queue, const float* x, const float* gamma, const float* beta,
                          float* out, uint32_t rows, uint32_t width, float eps);
    static void rmsnorm(void* queue, const float* x, const float* gamma, float* out, uint32_t rows,
                        uint32_t width, float eps);
    static void add(void* queue, const float* a, const float* b, float* out, uint64_t n);
    static void linear(void* queue, const float* x, const void* w, bool half, const float* bias,
                       float* out, uint32_t rows, uint32_t in, uint32_t col0, uint32_t cols);
    static void gelu_tanh(void* queue, float* x, uint64_t n);
    static void silu_mul(void* queue, float* gate, const float* up, uint64_t n);
    static void rope(void* queue, float* x, const uint32_t* positions, uint32_t rows,
                     uint32_t heads, uint32_t head_dim, float theta);
    static void store_kv(void* queue, const float* k, const float* v, void* cache, uint64_t stride,
                         const uint32_t* slots, const uint32_t* positions, uint32_t rows,
                         uint32_t kv_width, uint32_t max_seq);
    static void attend(void* queue, const float* q, const void* cache, uint64_t stride,
                       const uint32_t* slots, const uint32_t* positions, float* out, uint32_t rows,
                       uint32_t heads, uint32_t kv_heads, uint32_t head_dim, uint32_t max_seq);
};

// What shaders/memory_check.comp does to one register (vulkan_memory_check.h).
enum class CheckOp : uint32_t { Fingerprint = 0, CheckFingerprint = 1, CheckGuards = 2 };
void memory_check(Recorder& recorder, uint64_t data, uint64_t prints, uint64_t report,
                  uint32_t words, uint32_t reg, uint32_t instruction, CheckOp op);

// The most a head may hold (attend.comp keeps the query head on chip).
constexpr uint32_t kMaxHeadDim = 256;

} // namespace tmmu::vulkan
