#include "io/file_io.h"

#include "core/failure.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace tmmu {

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(FailureCode::IoError, path, fmt::format("cannot open: {}", std::strerror(errno)));
    std::ostringstream s;
    s << in.rdbuf();
    if (in.bad()) fail(FailureCode::IoError, path, "read failed");
    return s.str();
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            fail(FailureCode::IoError, path, fmt::format("cannot write: {}", std::strerror(errno)));
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.flush();
        if (!out) fail(FailureCode::IoError, path, "write failed (disk full?)");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        fail(FailureCode::IoError, path, fmt::format("cannot replace: {}", std::strerror(errno)));
    }
}

} // namespace tmmu
