#include "build_info.h"

namespace tmmu::app {

std::vector<BuildOption> build_options() {
    return {
        {"GUI", TMMU_HAVE_GUI != 0, "configured with TMMU_BUILD_GUI=OFF"},
        {"Vulkan", TMMU_HAVE_VULKAN != 0, TMMU_VULKAN_NOT_BUILT},
        {"CUDA", TMMU_HAVE_CUDA != 0, TMMU_CUDA_NOT_BUILT},
        {"ONNX", TMMU_HAVE_ONNX != 0, TMMU_ONNX_NOT_BUILT},
    };
}

} // namespace tmmu::app
