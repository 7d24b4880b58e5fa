#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

// Whole-file reads and crash-safe writes (temp file in the same directory, then rename).
// Failures throw IO_ERROR naming the path and the system's reason.
std::string read_text_file(const std::string& path);
void write_file_atomic(const std::string& path, std::string_view bytes);

} // namespace tmmu
