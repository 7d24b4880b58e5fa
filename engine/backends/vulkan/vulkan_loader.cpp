#include "backends/vulkan/vulkan_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

namespace tmmu::vulkan {

std::string version_text(uint32_t v) {
    return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                       VK_API_VERSION_PATCH(v));
}

namespace {

const char* result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS:
        return "VK_SUCCESS";
    case VK_INCOMPLETE:
        return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
        return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
        return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
        return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return "VK_ERROR_INCOMPATIBLE_DRIVER (no ICD)";
    case VK_ERROR_DEVICE_LOST:
        return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_MEMORY_MAP_FAILED:
        return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_TOO_MANY_OBJECTS:
        return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_TIMEOUT:
        return "VK_TIMEOUT";
    default:
        return nullptr;
    }
}

} // namespace

std::string result_text(VkResult r) {
    const char* name = result_name(r);
    return name ? name : fmt::format("VkResult {}", static_cast<int>(r));
}

VkResult create_instance(PFN_vkCreateInstance create, VkInstance* instance) {
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "tmmu";
    app.pEngineName = "tmmu";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pApplicationInfo = &app;
    return create(&info, nullptr, instance);
}

const Loader& loader() {
    static const Loader l = [] {
        Loader out;
        void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* e = dlerror();
            out.error = fmt::format("no Vulkan loader ({})", e ? e : "libvulkan.so.1 not found");
            return out;
        }
        out.get_instance_proc =
            reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
        if (!out.get_instance_proc)
            out.error = "no Vulkan loader (libvulkan.so.1 has no vkGetInstanceProcAddr)";
        return out;
    }();
    return l;
}

void keep_loaded_modules() {
    dl_iterate_phdr(
        [](dl_phdr_info* module, size_t, void*) {
            if (module->dlpi_name && module->dlpi_name[0] != '\0')
                dlopen(module->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
            return 0;
        },
        nullptr);
}

} // namespace tmmu::vulkan
