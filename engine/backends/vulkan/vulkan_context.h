#pragma once
// One Vulkan device opened for compute (issue 13): the instance, the first physical device that
// can run the backend's shaders (a compute queue, buffer device addresses, 64-bit integers,
// subgroup shuffles), a logical device with one compute queue, and the entry points the backend
// calls, loaded through the loader (vulkan_loader.h). Buffers are addressed by device address
// (Vulkan 1.2's bufferDeviceAddress): a kernel takes its operands as 64-bit addresses in push
// constants, so a register is its arena's address plus the planner's offset, exactly as on the CPU
// and in CUDA.
#include "backends/vulkan/vulkan_loader.h"

#include <cstdint>
#include <memory>
#include <string>

namespace tmmu::vulkan {

#define TMMU_VK_INSTANCE_FUNCTIONS(X)                                                              \
    X(vkDestroyInstance)                                                                           \
    X(vkEnumeratePhysicalDevices)                                                                  \
    X(vkGetPhysicalDeviceProperties)                                                               \
    X(vkGetPhysicalDeviceProperties2)                                                              \
    X(vkGetPhysicalDeviceMemoryProperties)                                                         \
    X(vkGetPhysicalDeviceMemoryProperties2)                                                        \
    X(vkGetPhysicalDeviceFeatures2)                                                                \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                                    \
    X(vkEnumerateDeviceExtensionProperties)                                                        \
    X(vkCreateDevice)                                                                              \
    X(vkGetDeviceProcAddr)

#define TMMU_VK_DEVICE_FUNCTIONS(X)                                                                \
    X(vkDestroyDevice)                                                                             \
    X(vkGetDeviceQueue)                                                                            \
    X(vkCreateBuffer)                                                                              \
    X(vkDestroyBuffer)                                                                             \
    X(vkGetBufferMemoryRequirements)                                                               \
    X(vkAllocateMemory)                                                                            \
    X(vkFreeMemory)                                                                                \
    X(vkBindBufferMemory)                                                                          \
    X(vkMapMemory)                                                                                 \
    X(vkUnmapMemory)                                                                               \
    X(vkGetBufferDeviceAddress)                                                                    \
    X(vkCreateShaderModule)                                                                        \
    X(vkDestroyShaderModule)                                                                       \
    X(vkCreatePipelineLayout)                                                                      \
    X(vkDestroyPipelineLayout)                                                                     \
    X(vkCreateComputePipelines)                                                                    \
    X(vkDestroyPipeline)                                                                           \
    X(vkCreateCommandPool)                                                                         \
    X(vkDestroyCommandPool)                                                                        \
    X(vkAllocateCommandBuffers)                                                                    \
    X(vkFreeCommandBuffers)                                                                        \
    X(vkResetCommandBuffer)                                                                        \
    X(vkBeginCommandBuffer)                                                                        \
    X(vkEndCommandBuffer)                                                                          \
    X(vkCmdBindPipeline)                                                                           \
    X(vkCmdPushConstants)                                                                          \
    X(vkCmdDispatch)                                                                               \
    X(vkCmdPipelineBarrier)                                                                        \
    X(vkCmdCopyBuffer)                                                                             \
    X(vkCmdFillBuffer)                                                                             \
    X(vkCmdWriteTimestamp)                                                                         \
    X(vkCmdResetQueryPool)                                                                         \
    X(vkCreateQueryPool)                                                                           \
    X(vkDestroyQueryPool)                                                                          \
    X(vkGetQueryPoolResults)                                                                       \
    X(vkCreateFence)                                                                               \
    X(vkDestroyFence)                                                                              \
    X(vkResetFences)                                                                               \
    X(vkWaitForFences)                                                                             \
    X(vkQueueSubmit)                                                                               \
    X(vkDeviceWaitIdle)

struct VulkanFns {
#define TMMU_VK_MEMBER(name) PFN_##name name = nullptr;
    TMMU_VK_INSTANCE_FUNCTIONS(TMMU_VK_MEMBER)
    TMMU_VK_DEVICE_FUNCTIONS(TMMU_VK_MEMBER)
#undef TMMU_VK_MEMBER
};

// DEVICE_ERROR "<what>: <VkResult>" unless r is VK_SUCCESS.
void check_vk(VkResult r, const std::string& what);

class VulkanContext;

// Where a buffer lives: Device memory for everything kernels touch, Host memory (mapped,
// coherent) for what the host writes before a step or reads after it.
enum class MemoryKind { Device, Host };

// A VkBuffer with its own memory and device address, freed with it. Device buffers may be
// read and written by kernels and by copies; host buffers stay mapped at mapped().
class Buffer {
  public:
    Buffer() = default;
    Buffer(VulkanContext& context, uint64_t bytes, MemoryKind kind, const std::string& name);
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&& other) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer();

    VkBuffer handle() const { return buffer_; }
    uint64_t bytes() const { return bytes_; }
    uint64_t address() const { return address_; } // 0 for an empty buffer
    void* mapped() const { return mapped_; }      // host buffers only

  private:
    void release();
    VulkanContext* context_ = nullptr;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    uint64_t bytes_ = 0, allocated_ = 0, address_ = 0;
    void* mapped_ = nullptr;
};

class VulkanContext {
  public:
    // The first device that can run the backend (in vkEnumeratePhysicalDevices order, so the
    // ICD pinned by VK_DRIVER_FILES is the one tests get). DEVICE_ERROR saying why when none.
    static std::unique_ptr<VulkanContext> open();
    VulkanContext(const VulkanContext&) = delete;
    VulkanContext& operator=(const VulkanContext&) = delete;
    ~VulkanContext();

    const VulkanFns& fn() const { return fn_; }
    VkDevice device() const { return device_; }
    VkCommandPool command_pool() const { return pool_; }
    const std::string& description() const { return description_; }
    uint64_t max_allocation_bytes() const { return max_allocation_; }
    uint32_t timestamp_bits() const { return timestamp_bits_; } // 0: no timestamps
    uint32_t subgroup_size() const { return subgroup_size_; }   // compute shaders' lanes
    bool half_storage() const { return half_storage_; } // f16 in storage buffers (f16 weights)
    double timestamp_period_ns() const { return timestamp_period_ns_; }

    // Submits one recorded command buffer and waits for it; DEVICE_ERROR naming `what`.
    void submit_and_wait(VkCommandBuffer commands, const std::string& what);
    // Device memory this process holds: the driver's heap usage (VK_EXT_memory_budget) where it
    // reports one, else the bytes of every live allocation the backend made.
    uint64_t memory_in_use() const;

    // Buffer bookkeeping.
    uint32_t memory_type(MemoryKind kind, uint32_t allowed_types) const;
    void allocated(int64_t bytes) { allocated_bytes_ += bytes; }

  private:
    VulkanContext() = default;
    VulkanFns fn_;
    VkInstance instance_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::string description_;
    uint64_t max_allocation_ = 0;
    uint32_t timestamp_bits_ = 0, subgroup_size_ = 0;
    double timestamp_period_ns_ = 0;
    bool memory_budget_ = false, half_storage_ = false;
    int64_t allocated_bytes_ = 0;
    VkPhysicalDeviceMemoryProperties memory_{};
};

} // namespace tmmu::vulkan
