#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

// Whole-file reads. Failures throw IO_ERROR naming the path and the system's reason.
std::string read_text_file(const std::string& path);
// Up to `bytes` from the start of a file, for detecting its format by content without reading a
// large file whole; "" when it cannot be read (the loader that follows names the error).
std::string read_file_head(const std::string& path, size_t bytes);

// Writes `bytes` where the user pointed, never destroying what is there:
// - "-" is standard output; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are written
//   through this process's own descriptor (appending where the shell's `>>` points, reaching
//   the pipe of a `>(...)`);
// - a symbolic link is followed, and its final target is written as below;
// - a regular file, or a path that does not exist yet, is written crash-safely: a temp file
//   with a random name in the same directory, flushed to disk, then renamed over it (keeping
//   the old file's mode);
// - a device, a FIFO or another process's /proc descriptor is opened and written in place,
//   since renaming over it would replace it by a regular file (`--checkpoint /dev/null` must
//   not turn /dev/null into one);
// - a directory is an IO_ERROR.
// Every short or failed write (a full disk, /dev/full, a closed pipe) throws IO_ERROR.
void write_output(const std::string& path, std::string_view bytes);

// The standard-output names that every output option accepts: "-" and /dev/stdout (which the
// CLI must count when it refuses two outputs on stdout).
inline bool is_stdout_path(std::string_view path) {
    return path == "-" || path == "/dev/stdout";
}

} // namespace tmmu
