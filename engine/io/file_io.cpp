#include "io/file_io.h"

#include "core/failure.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace tmmu {

std::string read_text_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        fail(FailureCode::IoError, path, "is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(FailureCode::IoError, path, fmt::format("cannot open: {}", std::strerror(errno)));
    std::ostringstream s;
    s << in.rdbuf();
    if (in.bad()) fail(FailureCode::IoError, path, "read failed");
    return s.str();
}

// Invariant: `path` always holds either its old content or the complete new content. The
// bytes go to a temp file unique to this process, are flushed to disk, then renamed over path.
void write_file_atomic(const std::string& path, std::string_view bytes) {
    std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail(FailureCode::IoError, path, fmt::format("cannot write: {}", std::strerror(errno)));
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            std::string why = std::strerror(errno);
            ::close(fd);
            std::remove(tmp.c_str());
            fail(FailureCode::IoError, path, fmt::format("write failed: {}", why));
        }
        p += n;
        left -= size_t(n);
    }
    bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        fail(FailureCode::IoError, path, fmt::format("cannot replace: {}", why));
    }
}

} // namespace tmmu
