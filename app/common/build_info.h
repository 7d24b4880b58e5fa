#pragma once
// What this build was configured with (the optional parts are built only when their
// dependencies were found), for Help > About and anyone asking why a feature is missing.
#include <string>
#include <vector>

namespace tmmu::app {

struct BuildOption {
    std::string name; // "GUI", "Vulkan", "CUDA", "ONNX"
    bool built = false;
    std::string why_not; // empty when built: what configure did not find
};

// The optional parts, in that order.
std::vector<BuildOption> build_options();

} // namespace tmmu::app
