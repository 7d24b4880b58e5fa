#include "backends/vulkan/vulkan_device.h"

#include "backends/vulkan/vulkan_loader.h"
#include "core/units.h"

#include <fmt/format.h>

namespace tmmu::vulkan {
namespace {

// Driver versions are vendor-encoded: NVIDIA packs 10.8.8.6 bits, the rest (Mesa among them)
// follow VK_MAKE_VERSION.
std::string driver_version_text(uint32_t vendor, uint32_t v) {
    if (vendor == 0x10DE)
        return fmt::format("{}.{}.{}.{}", v >> 22, (v >> 14) & 0xFF, (v >> 6) & 0xFF, v & 0x3F);
    return version_text(v);
}

DeviceType type_of(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return DeviceType::Integrated;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return DeviceType::Discrete;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return DeviceType::Virtual;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return DeviceType::Cpu;
    default:
        return DeviceType::Other;
    }
}

// The instance-level entry points the probe uses.
struct InstanceFns {
    PFN_vkDestroyInstance destroy = nullptr;
    PFN_vkEnumeratePhysicalDevices enumerate = nullptr;
    PFN_vkGetPhysicalDeviceProperties properties = nullptr;
    PFN_vkGetPhysicalDeviceProperties2 properties2 = nullptr;
    PFN_vkGetPhysicalDeviceMemoryProperties memory = nullptr;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties queues = nullptr;
};

// Owns a VkInstance: destroyed when it goes out of scope, whatever the probe found.
class Instance {
  public:
    Instance(VkInstance handle, PFN_vkGetInstanceProcAddr gipa) : handle_(handle) {
        auto get = [&](const char* name) { return gipa(handle_, name); };
        fns_.destroy = reinterpret_cast<PFN_vkDestroyInstance>(get("vkDestroyInstance"));
        fns_.enumerate =
            reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(get("vkEnumeratePhysicalDevices"));
        fns_.properties = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(
            get("vkGetPhysicalDeviceProperties"));
        fns_.properties2 = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
            get("vkGetPhysicalDeviceProperties2"));
        fns_.memory = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
            get("vkGetPhysicalDeviceMemoryProperties"));
        fns_.queues = reinterpret_cast<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
            get("vkGetPhysicalDeviceQueueFamilyProperties"));
    }
    ~Instance() {
        if (fns_.destroy) fns_.destroy(handle_, nullptr);
    }
    Instance(const Instance&) = delete;
    Instance& operator=(const Instance&) = delete;

    VkInstance handle() const { return handle_; }
    const InstanceFns& fns() const { return fns_; }
    bool complete() const {
        return fns_.destroy && fns_.enumerate && fns_.properties && fns_.memory && fns_.queues;
    }

  private:
    VkInstance handle_;
    InstanceFns fns_;
};

VulkanDeviceInfo device_info(const InstanceFns& fn, VkPhysicalDevice pd, uint32_t index) {
    VulkanDeviceInfo d;
    d.index = index;
    VkPhysicalDeviceProperties props{};
    fn.properties(pd, &props);
    d.name = props.deviceName;
    d.type = type_of(props.deviceType);
    d.vendor_id = props.vendorID;
    d.device_id = props.deviceID;
    d.api_version = props.apiVersion;
    d.api_version_text = version_text(props.apiVersion);
    d.driver_version = props.driverVersion;
    d.driver_version_text = driver_version_text(props.vendorID, props.driverVersion);
    d.timestamp_period_ns = props.limits.timestampPeriod;
    // Driver properties are core in 1.2; older devices keep only the encoded version.
    if (fn.properties2 && props.apiVersion >= VK_API_VERSION_1_2) {
        VkPhysicalDeviceDriverProperties driver{};
        driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
        VkPhysicalDeviceProperties2 props2{};
        props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        props2.pNext = &driver;
        fn.properties2(pd, &props2);
        d.driver_id = static_cast<uint32_t>(driver.driverID);
        d.driver_name = driver.driverName;
        d.driver_info = driver.driverInfo;
    }
    VkPhysicalDeviceMemoryProperties memory{};
    fn.memory(pd, &memory);
    for (uint32_t h = 0; h < memory.memoryHeapCount; ++h)
        if (memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            d.device_local_bytes += memory.memoryHeaps[h].size;
    uint32_t families = 0;
    fn.queues(pd, &families, nullptr);
    std::vector<VkQueueFamilyProperties> queue_props(families);
    fn.queues(pd, &families, queue_props.data());
    // The first compute family with timestamps, else the first compute family.
    for (uint32_t q = 0; q < families; ++q) {
        const VkQueueFamilyProperties& f = queue_props[q];
        if (!(f.queueFlags & VK_QUEUE_COMPUTE_BIT) || f.queueCount == 0) continue;
        if (!d.compute_queue || (d.timestamp_valid_bits == 0 && f.timestampValidBits > 0)) {
            d.compute_queue = true;
            d.compute_queue_family = q;
            d.timestamp_valid_bits = f.timestampValidBits;
        }
    }
    return d;
}

} // namespace

const char* device_type_name(DeviceType type) {
    switch (type) {
    case DeviceType::Integrated:
        return "integrated";
    case DeviceType::Discrete:
        return "discrete";
    case DeviceType::Virtual:
        return "virtual";
    case DeviceType::Cpu:
        return "cpu";
    case DeviceType::Other:
        break;
    }
    return "other";
}

VulkanProbe probe_vulkan() {
    VulkanProbe probe;
    const Loader& l = loader();
    if (!l.get_instance_proc) {
        probe.unavailable_reason = l.error;
        return probe;
    }
    const PFN_vkGetInstanceProcAddr gipa = l.get_instance_proc;
    // vkEnumerateInstanceVersion is 1.1: a loader without it is 1.0, too old for compute here.
    auto enumerate_version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
        gipa(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (enumerate_version) enumerate_version(&loader_version);
    probe.loader_version = version_text(loader_version);
    if (loader_version < VK_API_VERSION_1_1) {
        probe.unavailable_reason =
            fmt::format("the Vulkan loader is {}; 1.1 or later is needed", probe.loader_version);
        return probe;
    }
    auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
    if (!create) {
        probe.unavailable_reason = "the Vulkan loader has no vkCreateInstance";
        return probe;
    }
    VkInstance handle = VK_NULL_HANDLE;
    if (const VkResult r = create_instance(create, &handle); r != VK_SUCCESS) {
        probe.unavailable_reason = "vkCreateInstance failed: " + result_text(r);
        return probe;
    }
    const Instance instance(handle, gipa);
    if (!instance.complete()) {
        probe.unavailable_reason = "the Vulkan instance lacks a 1.0 entry point";
        return probe;
    }
    const InstanceFns& fn = instance.fns();
    uint32_t count = 0;
    if (const VkResult r = fn.enumerate(instance.handle(), &count, nullptr); r != VK_SUCCESS) {
        probe.unavailable_reason = "vkEnumeratePhysicalDevices failed: " + result_text(r);
        return probe;
    }
    std::vector<VkPhysicalDevice> physical(count);
    // VK_INCOMPLETE: a device went away between the two calls; list the ones returned.
    if (const VkResult r = fn.enumerate(instance.handle(), &count, physical.data());
        r != VK_SUCCESS && r != VK_INCOMPLETE) {
        probe.unavailable_reason = "vkEnumeratePhysicalDevices failed: " + result_text(r);
        return probe;
    }
    physical.resize(count);
    keep_loaded_modules();
    for (uint32_t i = 0; i < count; ++i)
        probe.devices.push_back(device_info(fn, physical[i], i));
    if (probe.devices.empty()) {
        probe.unavailable_reason = "no physical device";
        return probe;
    }
    for (const VulkanDeviceInfo& d : probe.devices)
        if (d.compute_queue) return probe;
    probe.unavailable_reason =
        fmt::format("no device with a compute queue ({} device{})", count, count == 1 ? "" : "s");
    return probe;
}

std::vector<VulkanDeviceInfo> vulkan_devices() {
    return probe_vulkan().devices;
}

std::string vulkan_unavailable_reason() {
    return probe_vulkan().unavailable_reason;
}

std::string describe(const VulkanDeviceInfo& d) {
    std::string line =
        fmt::format("{}, {}, API {}", d.name, device_type_name(d.type), d.api_version_text);
    if (!d.driver_name.empty())
        line += fmt::format(", driver {} {}", d.driver_name, d.driver_info);
    else
        line += fmt::format(", driver version {}", d.driver_version_text);
    line += fmt::format(", {} device-local", format_bytes(d.device_local_bytes));
    if (!d.compute_queue)
        line += ", no compute queue";
    else if (d.timestamp_valid_bits > 0)
        line += fmt::format(", compute queue (family {}, {}-bit timestamps)",
                            d.compute_queue_family, d.timestamp_valid_bits);
    else
        line += fmt::format(", compute queue (family {}, no timestamps)", d.compute_queue_family);
    return line;
}

} // namespace tmmu::vulkan
