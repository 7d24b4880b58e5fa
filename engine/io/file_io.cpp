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
#include <sys/stat.h>
#include <unistd.h>

namespace tmmu {

namespace fs = std::filesystem;

std::string read_text_file(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) fail(FailureCode::IoError, path, "is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(FailureCode::IoError, path, fmt::format("cannot open: {}", std::strerror(errno)));
    std::ostringstream s;
    s << in.rdbuf();
    if (in.bad()) fail(FailureCode::IoError, path, "read failed");
    return s.str();
}

namespace {

[[noreturn]] void io_fail(const std::string& path, std::string_view what, int err) {
    fail(FailureCode::IoError, path, fmt::format("{}: {}", what, std::strerror(err)));
}

// Writes all of `bytes` to `fd`, retrying interrupted and partial writes; returns 0 or errno.
int write_all(int fd, std::string_view bytes) {
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;
        p += n;
        left -= size_t(n);
    }
    return 0;
}

// Follows symbolic links to the path that is finally written; a dangling link resolves to the
// missing target, which is then created. Loops end with ELOOP like the kernel's own lookup.
std::string resolve_links(const std::string& path) {
    fs::path p = path;
    for (int hops = 0; hops < 40; ++hops) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p.string();
        std::error_code ec;
        fs::path target = fs::read_symlink(p, ec);
        if (ec) io_fail(path, "cannot follow the link", ec.value());
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    io_fail(path, "cannot follow the link", ELOOP);
}

void write_in_place(const std::string& path, std::string_view bytes) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) io_fail(path, "cannot write", errno);
    int err = write_all(fd, bytes);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) io_fail(path, "write failed", err);
}

// Invariant: `path` always holds either its old content or the complete new content. The
// bytes go to a temp file unique to this process, are flushed to disk, then renamed over path.
void write_replacing(const std::string& path, std::string_view bytes, const struct stat* old) {
    std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) io_fail(path, "cannot write", errno);
    int err = write_all(fd, bytes);
    if (err == 0 && old && ::fchmod(fd, old->st_mode & 07777) != 0) err = errno;
    if (err == 0 && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
        std::remove(tmp.c_str());
        io_fail(path, "write failed", err);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        err = errno;
        std::remove(tmp.c_str());
        io_fail(path, "cannot replace", err);
    }
}

} // namespace

void write_output(const std::string& path, std::string_view bytes) {
    if (is_stdout_path(path)) {
        std::fflush(stdout); // what was printed before comes first
        if (int err = write_all(STDOUT_FILENO, bytes)) io_fail("stdout", "write failed", err);
        return;
    }
    const std::string target = resolve_links(path);
    struct stat st {};
    if (::stat(target.c_str(), &st) != 0) {
        if (errno != ENOENT) io_fail(target, "cannot write", errno);
        write_replacing(target, bytes, nullptr);
    } else if (S_ISDIR(st.st_mode)) {
        fail(FailureCode::IoError, target, "is a directory, not a file");
    } else if (S_ISREG(st.st_mode)) {
        write_replacing(target, bytes, &st);
    } else {
        write_in_place(target, bytes);
    }
}

} // namespace tmmu
