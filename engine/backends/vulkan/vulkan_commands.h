#pragma once
// Command buffers, timestamp queries and uploads: what the Vulkan program and the bandwidth
// measurement record and submit.
#include "backends/vulkan/vulkan_context.h"

#include <string>
#include <vector>

namespace tmmu::vulkan {

// A primary command buffer from the context's pool, freed with it; recorded again by begin().
class CommandBuffer {
  public:
    explicit CommandBuffer(const VulkanContext& context);
    CommandBuffer(const CommandBuffer&) = delete;
    CommandBuffer& operator=(const CommandBuffer&) = delete;
    ~CommandBuffer();
    VkCommandBuffer get() const { return commands_; }
    void begin();
    void end();
    void copy(const Buffer& from, uint64_t from_offset, const Buffer& to, uint64_t to_offset,
              uint64_t bytes);
    // Makes the writes of `from` stages visible to the `accessed` kinds of `to` stages.
    void barrier(VkPipelineStageFlags from, VkAccessFlags written, VkPipelineStageFlags to,
                 VkAccessFlags accessed);
    // Everything before finishes and is visible to everything after (memory checks: fills
    // between kernels).
    void full_barrier();
    // Fills [offset, offset + bytes) of `buffer` with `word` repeated (both multiples of 4).
    void fill(const Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word);

  private:
    const VulkanContext& context_;
    VkCommandBuffer commands_ = VK_NULL_HANDLE;
};

// Copies host bytes into a device buffer through a host staging buffer, a chunk at a time.
void upload(VulkanContext& context, const void* data, uint64_t bytes, const Buffer& to,
            uint64_t to_offset, const std::string& what);

// `count` timestamps (seed 002 A8: device time per instruction).
class QueryPool {
  public:
    QueryPool(const VulkanContext& context, uint32_t count);
    QueryPool(const QueryPool&) = delete;
    QueryPool& operator=(const QueryPool&) = delete;
    ~QueryPool();
    VkQueryPool get() const { return pool_; }
    // Seconds from timestamp i to i + 1, for every i, once the submission has finished.
    std::vector<double> intervals() const;

  private:
    const VulkanContext& context_;
    VkQueryPool pool_ = VK_NULL_HANDLE;
    uint32_t count_;
};

} // namespace tmmu::vulkan
