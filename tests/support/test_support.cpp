#include "test_support.h"

#include <fstream>
#include <sstream>

namespace tmmu::test {

std::optional<Failure> capture_failure(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const Failure& f) {
        return f;
    }
    return std::nullopt;
}

std::optional<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

OffsetProblem random_problem(uint32_t seed, size_t n, uint64_t horizon, uint64_t max_size,
                             bool aligned) {
    std::mt19937_64 rng(seed);
    static constexpr uint64_t kAlign[] = {1, 8, 64, 256};
    OffsetProblem p;
    p.buffers.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        Buffer b;
        b.begin = rng() % horizon;
        uint64_t max_len = std::max<uint64_t>(1, horizon / 8);
        b.end = b.begin + 1 + rng() % max_len;
        b.size = 1 + rng() % max_size;
        b.alignment = aligned ? kAlign[rng() % 4] : 1;
        p.buffers.push_back(b);
    }
    return p;
}

} // namespace tmmu::test
