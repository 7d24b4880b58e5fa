#include "runtime/safetensors.h"

#include "core/failure.h"

#include <bit>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace tmmu::runtime {

namespace {

struct Entry {
    std::string dtype;
    std::vector<uint64_t> shape;
    uint64_t begin = 0, end = 0;
};

[[noreturn]] void bad(const std::string& where, const std::string& message) {
    fail(FailureCode::InvalidIrShapes, where, message);
}

std::map<std::string, Entry> read_header(const std::string& header, const std::string& path,
                                         uint64_t data_bytes) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(header);
    } catch (const nlohmann::json::exception& e) {
        bad(path, fmt::format("the safetensors header is not JSON: {}", e.what()));
    }
    if (!doc.is_object()) bad(path, "the safetensors header is not a JSON object");
    std::map<std::string, Entry> out;
    for (const auto& [name, t] : doc.items()) {
        if (name == "__metadata__") continue;
        const std::string where = fmt::format("{} tensor '{}'", path, name);
        try {
            Entry e{t.at("dtype").get<std::string>(), t.at("shape").get<std::vector<uint64_t>>(),
                    t.at("data_offsets").at(0).get<uint64_t>(),
                    t.at("data_offsets").at(1).get<uint64_t>()};
            if (e.begin > e.end || e.end > data_bytes)
                bad(where, fmt::format("bytes [{}, {}) lie outside the {} data bytes", e.begin,
                                       e.end, data_bytes));
            out[name.rfind("transformer.", 0) == 0 ? name.substr(12) : name] = std::move(e);
        } catch (const nlohmann::json::exception& e) {
            bad(where, fmt::format("expected dtype, shape and data_offsets: {}", e.what()));
        }
    }
    return out;
}

float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0)
        return std::bit_cast<float>(sign) + (sign ? -1.0f : 1.0f) * float(mant) * 0x1p-24f;
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

// Converts one tensor's bytes into f32 at `out`.
void convert(const Entry& e, const char* data, float* out, uint64_t elements,
             const std::string& where) {
    const uint64_t size = e.dtype == "F32" ? 4 : (e.dtype == "F16" || e.dtype == "BF16") ? 2 : 0;
    if (size == 0) bad(where, fmt::format("dtype {} is not read (F32, F16 and BF16 are)", e.dtype));
    if (e.end - e.begin != elements * size)
        bad(where,
            fmt::format("{} bytes for {} elements of {}", e.end - e.begin, elements, e.dtype));
    const char* src = data + e.begin;
    for (uint64_t i = 0; i < elements; ++i) {
        if (size == 4) {
            std::memcpy(&out[i], src + 4 * i, 4);
            continue;
        }
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = e.dtype == "BF16" ? std::bit_cast<float>(uint32_t(h) << 16) : half_to_float(h);
    }
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(FailureCode::IoError, path, fmt::format("cannot open: {}", std::strerror(errno)));
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

WeightStore load_safetensors(const ExecutionPlan& plan, const std::string& path) {
    const std::string bytes = read_file(path);
    uint64_t header_len = 0;
    if (bytes.size() >= 8) std::memcpy(&header_len, bytes.data(), 8);
    if (bytes.size() < 8 || header_len > bytes.size() - 8)
        bad(path, fmt::format("not a safetensors file: a header of {} bytes in a file of {}",
                              header_len, bytes.size()));
    const uint64_t data_at = 8 + header_len;
    const auto entries = read_header(bytes.substr(8, header_len), path, bytes.size() - data_at);
    WeightStore w = zeroed_weights(plan);
    for (size_t i = 0; i < plan.weights.size(); ++i) {
        const WeightDesc& d = plan.weights[i];
        const std::string where = fmt::format("{} tensor '{}'", path, d.name);
        const auto it = entries.find(d.name);
        if (it == entries.end()) bad(where, "missing: the model's plan needs it");
        const std::vector<uint64_t> want(d.view.shape.begin(), d.view.shape.begin() + d.view.rank);
        if (it->second.shape != want)
            bad(where, fmt::format("shape [{}], the model needs [{}]",
                                   fmt::join(it->second.shape, ", "), fmt::join(want, ", ")));
        convert(it->second, bytes.data() + data_at, w.data.data() + w.offset[i], d.view.elements(),
                where);
    }
    return w;
}

} // namespace tmmu::runtime
