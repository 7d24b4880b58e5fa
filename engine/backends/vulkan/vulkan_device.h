#pragma once
// Vulkan device discovery: what `tmmu backends` and the studio list. The
// loader is opened at run time (dlopen of libvulkan.so.1), so a build with the Vulkan backend
// still starts on a machine without one: "no Vulkan loader" is an answer like any other. No
// Vulkan header here: code that only lists devices needs none.
#include <cstdint>
#include <string>
#include <vector>

namespace tmmu::vulkan {

enum class DeviceType { Other, Integrated, Discrete, Virtual, Cpu };
// "other", "integrated", "discrete", "virtual", "cpu".
const char* device_type_name(DeviceType type);

struct VulkanDeviceInfo {
    uint32_t index = 0; // in vkEnumeratePhysicalDevices order
    std::string name;   // VkPhysicalDeviceProperties::deviceName
    DeviceType type = DeviceType::Other;
    uint32_t vendor_id = 0, device_id = 0;
    uint32_t api_version = 0;     // VK_MAKE_API_VERSION encoded
    std::string api_version_text; // "1.3.230"
    // VkPhysicalDeviceDriverProperties (devices of API 1.2 and later); empty otherwise.
    uint32_t driver_id = 0;      // VkDriverId, 0 when unknown
    std::string driver_name;     // "llvmpipe", "NVIDIA"
    std::string driver_info;     // "Mesa 22.3.6 (LLVM 15.0.6)"
    uint32_t driver_version = 0; // vendor-encoded
    std::string driver_version_text;
    uint64_t device_local_bytes = 0; // sum of the DEVICE_LOCAL heaps
    bool compute_queue = false;      // some queue family has VK_QUEUE_COMPUTE_BIT
    uint32_t compute_queue_family = 0;
    uint32_t timestamp_valid_bits = 0; // of that family; 0: no timestamps on it
    float timestamp_period_ns = 0;     // VkPhysicalDeviceLimits::timestampPeriod
    bool timestamps() const { return compute_queue && timestamp_valid_bits > 0; }
};

// One look at the machine: the loader's version, every physical device, and why none can run
// compute work (empty when one can). Creates a VkInstance (API 1.2 asked for, 1.1 at least),
// destroys it before returning; never throws for a missing loader, driver or device.
struct VulkanProbe {
    std::string loader_version; // "1.3.239"; empty without a loader
    std::vector<VulkanDeviceInfo> devices;
    std::string unavailable_reason;
};
VulkanProbe probe_vulkan();

std::vector<VulkanDeviceInfo> vulkan_devices();
// Empty when a device with a compute queue exists; otherwise why not, in words: "no Vulkan
// loader (libvulkan.so.1: ...)", "vkCreateInstance failed: VK_ERROR_INCOMPATIBLE_DRIVER (no
// ICD)", "no physical device", "no device with a compute queue (2 devices)", ...
std::string vulkan_unavailable_reason();

// One line: "llvmpipe (LLVM 15.0.6, 256 bits), cpu, API 1.3.230, driver llvmpipe Mesa ...".
std::string describe(const VulkanDeviceInfo& device);

} // namespace tmmu::vulkan
