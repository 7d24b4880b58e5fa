#pragma once
// The Vulkan loader, opened at run time (dlopen of libvulkan.so.1) so that a build with the
// Vulkan backend still starts on a machine without one, and the small helpers every Vulkan file
// shares. The module is compiled with VK_NO_PROTOTYPES: every entry point comes from here.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

namespace tmmu::vulkan {

struct Loader {
    PFN_vkGetInstanceProcAddr get_instance_proc = nullptr; // null: error says why
    std::string error;
};
// Opened once and kept for the process: ICDs (Mesa's among them) register process-exit
// handlers, so unloading them before exit is not safe.
const Loader& loader();

// Keeps every shared object now loaded (the drivers the loader opened for an instance among
// them) mapped for the rest of the process, though the loader closes drivers when the instance
// is destroyed: Mesa's leave allocations behind, and while a driver stays mapped its globals
// keep them reachable (no leak report at exit), and later instances reuse it.
void keep_loaded_modules();

// vkCreateInstance for API 1.2 (the loader's own entry point, already checked
// to exist), with no layers or extensions: headless compute needs none.
VkResult create_instance(PFN_vkCreateInstance create, VkInstance* instance);

std::string version_text(uint32_t v); // "1.3.239"
std::string result_text(VkResult r);  // "VK_ERROR_DEVICE_LOST", "VkResult -13"

} // namespace tmmu::vulkan
