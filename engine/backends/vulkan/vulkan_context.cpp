#include "backends/vulkan/vulkan_context.h"

#include "backends/vulkan/vulkan_device.h"
#include "core/failure.h"

#include <cstring>
#include <fmt/format.h>
#include <utility>
#include <vector>

namespace tmmu::vulkan {

void check_vk(VkResult r, const std::string& what) {
    if (r != VK_SUCCESS) fail(FailureCode::DeviceError, what, result_text(r));
}

namespace {

// What the backend's shaders need of a device, or why this one lacks it (empty: it has it).
struct Suitability {
    std::string missing;
    uint32_t queue_family = 0;
    uint32_t timestamp_bits = 0;
    uint32_t subgroup_size = 0;
    bool half_storage = false; // storageBuffer16BitAccess: f16 weights
};

Suitability suitability(const VulkanFns& fn, VkPhysicalDevice pd) {
    Suitability s;
    VkPhysicalDeviceProperties props{};
    fn.vkGetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) {
        s.missing = fmt::format("API {} (1.2 needed)", version_text(props.apiVersion));
        return s;
    }
    VkPhysicalDeviceVulkan11Features v11{};
    v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    VkPhysicalDeviceVulkan12Features v12{};
    v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    v12.pNext = &v11;
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &v12;
    fn.vkGetPhysicalDeviceFeatures2(pd, &features);
    s.half_storage = v11.storageBuffer16BitAccess;
    if (!v12.bufferDeviceAddress) s.missing = "no bufferDeviceAddress";
    if (!features.features.shaderInt64) s.missing = "no shaderInt64";
    VkPhysicalDeviceSubgroupProperties subgroups{};
    subgroups.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    VkPhysicalDeviceProperties2 props2{};
    props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props2.pNext = &subgroups;
    fn.vkGetPhysicalDeviceProperties2(pd, &props2);
    if (!(subgroups.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) ||
        !(subgroups.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT))
        s.missing = "no subgroup shuffles in compute shaders";
    s.subgroup_size = subgroups.subgroupSize;
    uint32_t families = 0;
    fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, nullptr);
    std::vector<VkQueueFamilyProperties> queues(families);
    fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, queues.data());
    bool found = false;
    for (uint32_t q = 0; q < families; ++q) {
        if (!(queues[q].queueFlags & VK_QUEUE_COMPUTE_BIT) || queues[q].queueCount == 0) continue;
        if (!found || (s.timestamp_bits == 0 && queues[q].timestampValidBits > 0)) {
            found = true;
            s.queue_family = q;
            s.timestamp_bits = queues[q].timestampValidBits;
        }
    }
    if (!found) s.missing = "no compute queue";
    return s;
}

bool has_extension(const VulkanFns& fn, VkPhysicalDevice pd, const char* name) {
    uint32_t count = 0;
    fn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> all(count);
    fn.vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, all.data());
    for (const VkExtensionProperties& e : all)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

} // namespace

std::unique_ptr<VulkanContext> VulkanContext::open() {
    const VulkanProbe probe = probe_vulkan(); // the devices' descriptions, and why none runs
    if (!probe.unavailable_reason.empty())
        fail(FailureCode::DeviceError, "vulkan", probe.unavailable_reason);
    const PFN_vkGetInstanceProcAddr gipa = loader().get_instance_proc;
    std::unique_ptr<VulkanContext> c(new VulkanContext);
    // The probe found vkCreateInstance and a device: this loader has both.
    auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
    check_vk(create_instance(create, &c->instance_), "vkCreateInstance");
#define TMMU_VK_LOAD(name)                                                                         \
    c->fn_.name = reinterpret_cast<PFN_##name>(gipa(c->instance_, #name));                         \
    if (!c->fn_.name) fail(FailureCode::DeviceError, "vulkan", "the instance lacks " #name);
    TMMU_VK_INSTANCE_FUNCTIONS(TMMU_VK_LOAD)
#undef TMMU_VK_LOAD
    keep_loaded_modules();

    uint32_t count = 0;
    check_vk(c->fn_.vkEnumeratePhysicalDevices(c->instance_, &count, nullptr),
             "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> physical(count);
    check_vk(c->fn_.vkEnumeratePhysicalDevices(c->instance_, &count, physical.data()),
             "vkEnumeratePhysicalDevices");
    std::vector<std::string> reasons;
    Suitability chosen;
    for (uint32_t i = 0; i < count && !c->physical_; ++i) {
        const Suitability s = suitability(c->fn_, physical[i]);
        const std::string name = i < probe.devices.size() ? probe.devices[i].name : "device";
        if (!s.missing.empty()) {
            reasons.push_back(fmt::format("{}: {}", name, s.missing));
            continue;
        }
        c->physical_ = physical[i];
        chosen = s;
        c->description_ = i < probe.devices.size() ? describe(probe.devices[i]) : name;
    }
    if (!c->physical_)
        fail(FailureCode::DeviceError, "vulkan",
             fmt::format("no device can run the backend ({})", fmt::join(reasons, "; ")));
    c->memory_budget_ = has_extension(c->fn_, c->physical_, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    c->timestamp_bits_ = chosen.timestamp_bits;
    c->subgroup_size_ = chosen.subgroup_size;
    c->half_storage_ = chosen.half_storage;

    VkPhysicalDeviceMaintenance3Properties maintenance3{};
    maintenance3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    VkPhysicalDeviceProperties2 props{};
    props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props.pNext = &maintenance3;
    c->fn_.vkGetPhysicalDeviceProperties2(c->physical_, &props);
    c->max_allocation_ = maintenance3.maxMemoryAllocationSize;
    c->timestamp_period_ns_ = props.properties.limits.timestampPeriod;
    c->fn_.vkGetPhysicalDeviceMemoryProperties(c->physical_, &c->memory_);

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{};
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = chosen.queue_family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan11Features v11{};
    v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    v11.storageBuffer16BitAccess = c->half_storage_ ? VK_TRUE : VK_FALSE;
    VkPhysicalDeviceVulkan12Features v12{};
    v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    v12.pNext = &v11;
    v12.bufferDeviceAddress = VK_TRUE;
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &v12;
    features.features.shaderInt64 = VK_TRUE;
    const char* budget = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    VkDeviceCreateInfo device{};
    device.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    device.pNext = &features;
    device.queueCreateInfoCount = 1;
    device.pQueueCreateInfos = &queue;
    device.enabledExtensionCount = c->memory_budget_ ? 1 : 0;
    device.ppEnabledExtensionNames = &budget;
    check_vk(c->fn_.vkCreateDevice(c->physical_, &device, nullptr, &c->device_), "vkCreateDevice");
#define TMMU_VK_LOAD(name)                                                                         \
    c->fn_.name = reinterpret_cast<PFN_##name>(c->fn_.vkGetDeviceProcAddr(c->device_, #name));     \
    if (!c->fn_.name) fail(FailureCode::DeviceError, "vulkan", "the device lacks " #name);
    TMMU_VK_DEVICE_FUNCTIONS(TMMU_VK_LOAD)
#undef TMMU_VK_LOAD
    c->fn_.vkGetDeviceQueue(c->device_, chosen.queue_family, 0, &c->queue_);
    VkCommandPoolCreateInfo pool{};
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = chosen.queue_family;
    check_vk(c->fn_.vkCreateCommandPool(c->device_, &pool, nullptr, &c->pool_),
             "vkCreateCommandPool");
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    check_vk(c->fn_.vkCreateFence(c->device_, &fence, nullptr, &c->fence_), "vkCreateFence");
    return c;
}

VulkanContext::~VulkanContext() {
    if (device_ && fn_.vkDestroyDevice) { // every device entry point was loaded
        fn_.vkDeviceWaitIdle(device_);
        if (fence_) fn_.vkDestroyFence(device_, fence_, nullptr);
        if (pool_) fn_.vkDestroyCommandPool(device_, pool_, nullptr);
        fn_.vkDestroyDevice(device_, nullptr);
    }
    if (instance_ && fn_.vkDestroyInstance) fn_.vkDestroyInstance(instance_, nullptr);
}

void VulkanContext::submit_and_wait(VkCommandBuffer commands, const std::string& what) {
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    check_vk(fn_.vkQueueSubmit(queue_, 1, &submit, fence_), what + " (vkQueueSubmit)");
    check_vk(fn_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX),
             what + " (vkWaitForFences)");
    check_vk(fn_.vkResetFences(device_, 1, &fence_), what + " (vkResetFences)");
}

uint64_t VulkanContext::memory_in_use() const {
    if (!memory_budget_) return uint64_t(allocated_bytes_);
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{};
    budget.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
    VkPhysicalDeviceMemoryProperties2 props{};
    props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
    props.pNext = &budget;
    fn_.vkGetPhysicalDeviceMemoryProperties2(physical_, &props);
    uint64_t used = 0;
    for (uint32_t h = 0; h < props.memoryProperties.memoryHeapCount; ++h)
        if (props.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            used += budget.heapUsage[h];
    return used;
}

uint32_t VulkanContext::memory_type(MemoryKind kind, uint32_t allowed_types) const {
    // Device: device-local first. Host: mapped and coherent, cached where offered (the logits
    // are read back from it).
    const VkMemoryPropertyFlags need =
        kind == MemoryKind::Device
            ? 0
            : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    const VkMemoryPropertyFlags want = kind == MemoryKind::Device
                                           ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                                           : VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    int best = -1;
    for (uint32_t t = 0; t < memory_.memoryTypeCount; ++t) {
        const VkMemoryPropertyFlags flags = memory_.memoryTypes[t].propertyFlags;
        if (!(allowed_types & (1u << t)) || (flags & need) != need) continue;
        if (best < 0 || ((flags & want) && !(memory_.memoryTypes[best].propertyFlags & want)))
            best = int(t);
    }
    if (best < 0)
        fail(FailureCode::DeviceError, "vulkan",
             kind == MemoryKind::Device ? "no memory type for device buffers"
                                        : "no host-visible, coherent memory type");
    return uint32_t(best);
}

Buffer::Buffer(VulkanContext& context, uint64_t bytes, MemoryKind kind, const std::string& name)
    : context_(&context), bytes_(bytes) {
    const VulkanFns& fn = context.fn();
    const VkDevice device = context.device();
    if (bytes > context.max_allocation_bytes())
        fail(FailureCode::DeviceError, name,
             fmt::format("{} bytes in one buffer, more than the device allocates at once ({})",
                         bytes, context.max_allocation_bytes()));
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = bytes == 0 ? 4 : bytes; // an empty register file still gets a valid buffer
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check_vk(fn.vkCreateBuffer(device, &info, nullptr, &buffer_), name + " (vkCreateBuffer)");
    VkMemoryRequirements req{};
    fn.vkGetBufferMemoryRequirements(device, buffer_, &req);
    VkMemoryAllocateFlagsInfo flags{};
    flags.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO;
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &flags;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = context.memory_type(kind, req.memoryTypeBits);
    if (const VkResult r = fn.vkAllocateMemory(device, &alloc, nullptr, &memory_);
        r != VK_SUCCESS) {
        release();
        fail(FailureCode::DeviceError, name,
             fmt::format("allocating {} bytes: {}", req.size, result_text(r)));
    }
    allocated_ = req.size;
    context.allocated(int64_t(allocated_));
    check_vk(fn.vkBindBufferMemory(device, buffer_, memory_, 0), name + " (vkBindBufferMemory)");
    if (kind == MemoryKind::Host)
        check_vk(fn.vkMapMemory(device, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_),
                 name + " (vkMapMemory)");
    VkBufferDeviceAddressInfo at{};
    at.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO;
    at.buffer = buffer_;
    address_ = fn.vkGetBufferDeviceAddress(device, &at);
}

Buffer::Buffer(Buffer&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      buffer_(std::exchange(other.buffer_, VK_NULL_HANDLE)),
      memory_(std::exchange(other.memory_, VK_NULL_HANDLE)), bytes_(std::exchange(other.bytes_, 0)),
      allocated_(std::exchange(other.allocated_, 0)), address_(std::exchange(other.address_, 0)),
      mapped_(std::exchange(other.mapped_, nullptr)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
    if (this != &other) {
        release();
        context_ = std::exchange(other.context_, nullptr);
        buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
        memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
        bytes_ = std::exchange(other.bytes_, 0);
        allocated_ = std::exchange(other.allocated_, 0);
        address_ = std::exchange(other.address_, 0);
        mapped_ = std::exchange(other.mapped_, nullptr);
    }
    return *this;
}

Buffer::~Buffer() {
    release();
}

void Buffer::release() {
    if (!context_) return;
    const VulkanFns& fn = context_->fn();
    if (buffer_) fn.vkDestroyBuffer(context_->device(), buffer_, nullptr);
    if (memory_) fn.vkFreeMemory(context_->device(), memory_, nullptr); // unmaps too
    context_->allocated(-int64_t(allocated_));
    context_ = nullptr;
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    allocated_ = 0;
}

} // namespace tmmu::vulkan
