#include "io/file_io.h"

#include "core/failure.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <random>
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

std::string read_file_head(const std::string& path, size_t bytes) {
    std::ifstream in(path, std::ios::binary);
    std::string head(bytes, '\0');
    in.read(head.data(), std::streamsize(bytes));
    head.resize(size_t(std::max<std::streamsize>(in.gcount(), 0)));
    return head;
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

// The descriptor of this process that `p` names (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, /proc/<our pid>/fd/N), or -1. Such a path is written through the descriptor
// itself: reopening it would start a file at offset 0 (losing what `>>` or earlier output put
// there), and its link text ("pipe:[1234]") is no path at all.
int own_descriptor(const fs::path& p) {
    const std::string s = p.lexically_normal().string();
    if (s == "/dev/stdout") return STDOUT_FILENO;
    if (s == "/dev/stderr") return STDERR_FILENO;
    for (const std::string& dir :
         {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
          std::string("/proc/thread-self/fd/"), fmt::format("/proc/{}/fd/", ::getpid())}) {
        if (!s.starts_with(dir)) continue;
        const std::string digits = s.substr(dir.size());
        if (digits.empty() || digits.size() > 9 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
            return -1;
        return std::stoi(digits);
    }
    return -1;
}

// Where a write to `path` goes once symbolic links are followed.
struct OutputTarget {
    std::string path;   // the final target (a dangling link's missing target is created)
    int fd = -1;        // >= 0: a descriptor of this process, written directly
    bool magic = false; // a /proc link of another process: only the kernel can follow it
};

OutputTarget resolve_output(const std::string& path) {
    fs::path p = path;
    for (int hops = 0; hops < 40; ++hops) { // loops end with ELOOP like the kernel's own lookup
        if (int fd = own_descriptor(p); fd >= 0) return {p.string(), fd};
        if (p.lexically_normal().string().starts_with("/proc/")) return {path, -1, true};
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return {p.string()};
        std::error_code ec;
        fs::path target = fs::read_symlink(p, ec);
        if (ec) io_fail(path, "cannot follow the link", ec.value());
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    io_fail(path, "cannot follow the link", ELOOP);
}

void write_descriptor(int fd, const std::string& name, std::string_view bytes) {
    // What was printed before comes first, and must have arrived too.
    if (std::fflush(stdout) != 0) io_fail("stdout", "write failed", errno);
    if (int err = write_all(fd, bytes)) io_fail(name, "write failed", err);
}

// For what cannot be replaced: a device, a FIFO, another process's descriptor. Only a regular
// file is truncated (O_TRUNC means nothing to the others).
void write_in_place(const std::string& path, std::string_view bytes, bool truncate) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (truncate ? O_TRUNC : 0));
    if (fd < 0) io_fail(path, "cannot write", errno);
    int err = write_all(fd, bytes);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) io_fail(path, "write failed", err);
}

// A new temp file beside `path` with a random name, created exclusively and never through a
// link (O_EXCL | O_NOFOLLOW): a file or link planted at a guessable name is never written.
std::pair<int, std::string> create_temp_beside(const std::string& path) {
    std::random_device random;
    for (int tries = 0; tries < 100; ++tries) {
        std::string tmp = fmt::format("{}.tmp.{:08x}{:08x}", path, random(), random());
        int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) return {fd, tmp};
        if (errno != EEXIST) io_fail(path, "cannot write", errno);
    }
    io_fail(path, "cannot create a temp file", EEXIST);
}

// Invariant: `path` always holds either its old content or the complete new content. The
// bytes go to a fresh temp file in the same directory, are flushed to disk, then renamed over
// path.
void write_replacing(const std::string& path, std::string_view bytes, const struct stat* old) {
    auto [fd, tmp] = create_temp_beside(path);
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
    if (is_stdout_path(path)) return write_descriptor(STDOUT_FILENO, "stdout", bytes);
    const OutputTarget target = resolve_output(path);
    if (target.fd >= 0) return write_descriptor(target.fd, path, bytes);
    struct stat st {};
    if (::stat(target.path.c_str(), &st) != 0) {
        if (errno != ENOENT || target.magic) io_fail(path, "cannot write", errno);
        write_replacing(target.path, bytes, nullptr);
    } else if (S_ISDIR(st.st_mode)) {
        fail(FailureCode::IoError, target.path, "is a directory, not a file");
    } else if (S_ISREG(st.st_mode) && !target.magic) {
        write_replacing(target.path, bytes, &st);
    } else {
        write_in_place(target.path, bytes, S_ISREG(st.st_mode));
    }
}

} // namespace tmmu
