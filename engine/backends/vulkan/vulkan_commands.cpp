#include "backends/vulkan/vulkan_commands.h"

#include <algorithm>
#include <cstring>

namespace tmmu::vulkan {

namespace {
constexpr uint64_t kUploadChunk = uint64_t(64) << 20; // host staging per upload
} // namespace

CommandBuffer::CommandBuffer(const VulkanContext& context) : context_(context) {
    VkCommandBufferAllocateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    info.commandPool = context.command_pool();
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    check_vk(context.fn().vkAllocateCommandBuffers(context.device(), &info, &commands_),
             "vkAllocateCommandBuffers");
}

CommandBuffer::~CommandBuffer() {
    context_.fn().vkFreeCommandBuffers(context_.device(), context_.command_pool(), 1, &commands_);
}

void CommandBuffer::begin() {
    check_vk(context_.fn().vkResetCommandBuffer(commands_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    check_vk(context_.fn().vkBeginCommandBuffer(commands_, &info), "vkBeginCommandBuffer");
}

void CommandBuffer::end() {
    check_vk(context_.fn().vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
}

void CommandBuffer::copy(const Buffer& from, uint64_t from_offset, const Buffer& to,
                         uint64_t to_offset, uint64_t bytes) {
    const VkBufferCopy region{from_offset, to_offset, bytes};
    context_.fn().vkCmdCopyBuffer(commands_, from.handle(), to.handle(), 1, &region);
}

void CommandBuffer::barrier(VkPipelineStageFlags from, VkAccessFlags written,
                            VkPipelineStageFlags to, VkAccessFlags accessed) {
    VkMemoryBarrier b{};
    b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    b.srcAccessMask = written;
    b.dstAccessMask = accessed;
    context_.fn().vkCmdPipelineBarrier(commands_, from, to, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void CommandBuffer::full_barrier() {
    barrier(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
            VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
}

void CommandBuffer::fill(const Buffer& buffer, uint64_t offset, uint64_t bytes, uint32_t word) {
    context_.fn().vkCmdFillBuffer(commands_, buffer.handle(), offset, bytes, word);
}

void upload(VulkanContext& context, const void* data, uint64_t bytes, const Buffer& to,
            uint64_t to_offset, const std::string& what) {
    Buffer staging(context, std::min(bytes, kUploadChunk), MemoryKind::Host, what + " staging");
    CommandBuffer commands(context);
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t n = std::min(bytes - done, staging.bytes());
        std::memcpy(staging.mapped(), static_cast<const char*>(data) + done, n);
        commands.begin();
        commands.copy(staging, 0, to, to_offset + done, n);
        commands.end();
        context.submit_and_wait(commands.get(), what + " upload");
        done += n;
    }
}

QueryPool::QueryPool(const VulkanContext& context, uint32_t count)
    : context_(context), count_(count) {
    VkQueryPoolCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = count;
    check_vk(context.fn().vkCreateQueryPool(context.device(), &info, nullptr, &pool_),
             "vkCreateQueryPool");
}

QueryPool::~QueryPool() {
    context_.fn().vkDestroyQueryPool(context_.device(), pool_, nullptr);
}

std::vector<double> QueryPool::intervals() const {
    std::vector<uint64_t> ticks(count_);
    check_vk(context_.fn().vkGetQueryPoolResults(
                 context_.device(), pool_, 0, count_, ticks.size() * sizeof(uint64_t), ticks.data(),
                 sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    // Timestamps wrap at their valid bits: differences are taken modulo that width.
    const uint32_t bits = context_.timestamp_bits();
    const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    std::vector<double> seconds(count_ > 0 ? count_ - 1 : 0);
    for (uint32_t i = 0; i + 1 < count_; ++i)
        seconds[i] =
            double((ticks[i + 1] - ticks[i]) & mask) * context_.timestamp_period_ns() * 1e-9;
    return seconds;
}

} // namespace tmmu::vulkan
