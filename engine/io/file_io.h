#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

// Whole-file reads. Failures throw IO_ERROR naming the path and the system's reason.
std::string read_text_file(const std::string& path);

// Writes `bytes` where the user pointed, never destroying what is there:
// - "-" is standard output;
// - a symbolic link is followed, and its final target is written as below;
// - a regular file, or a path that does not exist yet, is written crash-safely: a temp file in
//   the same directory, flushed to disk, then renamed over it (keeping the old file's mode);
// - a device or FIFO is opened and written in place, since renaming over it would
//   replace it by a regular file (`--checkpoint /dev/null` must not turn /dev/null into one);
// - a directory is an IO_ERROR.
// Every short or failed write (a full disk, /dev/full, a closed pipe) throws IO_ERROR.
void write_output(const std::string& path, std::string_view bytes);

// The standard-output marker that every output option accepts.
inline bool is_stdout_path(std::string_view path) {
    return path == "-";
}

} // namespace tmmu
