#include "session_source.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "encoding/sha256.h"
#include "ir/dynamic_dims.h"
#include "ir/ir_json.h"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

namespace tmmu::sessions {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kHashChunk = size_t(1) << 20;

std::string shape_text(const std::vector<int64_t>& shape) {
    return fmt::format("{}", fmt::join(shape, "x"));
}

std::string short_hash(const std::string& hex) {
    return hex.substr(0, 16);
}

} // namespace

std::string file_sha256(const std::string& path) {
    std::error_code ec;
    if (path.empty() || !fs::is_regular_file(path, ec)) return {};
    std::ifstream in(path, std::ios::binary);
    if (!in) return {};
    Sha256 h;
    std::vector<char> buffer(kHashChunk);
    while (in) {
        in.read(buffer.data(), std::streamsize(buffer.size()));
        h.update(reinterpret_cast<const uint8_t*>(buffer.data()), size_t(in.gcount()));
    }
    if (in.bad()) return {};
    return to_hex(h.finish());
}

std::string bindings_json(const SessionInput& in) {
    if (!in.onnx) return {};
    // std::map keys are sorted and json objects sort theirs: one text per set of bindings.
    return json_text(json{{"dims", in.request.dims},
                          {"input_shapes", in.request.input_shapes},
                          {"aliasing", in.request.aliasing}});
}

void read_bindings_json(const std::string& text, SessionInput& in, const std::string& where) {
    if (text.empty()) return;
    try {
        const json j = json::parse(text);
        in.request.dims = j.at("dims").get<std::map<std::string, int64_t>>();
        in.request.input_shapes =
            j.at("input_shapes").get<std::map<std::string, std::vector<int64_t>>>();
        in.request.aliasing = j.at("aliasing").get<bool>();
        in.onnx = true;
    } catch (const json::exception& e) {
        fail(FailureCode::CorruptCheckpoint, where,
             fmt::format("stored ONNX bindings are not valid: {}", e.what()));
    }
}

std::string bindings_text(const SessionInput& in) {
    if (!in.onnx) return {};
    std::vector<std::string> parts;
    std::vector<std::string> dims, shapes;
    for (const auto& [name, value] : in.request.dims)
        dims.push_back(fmt::format("{}={}", name, value));
    for (const auto& [name, shape] : in.request.input_shapes)
        shapes.push_back(fmt::format("{}={}", name, shape_text(shape)));
    if (!dims.empty()) parts.push_back(fmt::format("dims {}", fmt::join(dims, ", ")));
    if (!shapes.empty()) parts.push_back(fmt::format("input shapes {}", fmt::join(shapes, ", ")));
    if (parts.empty()) parts.emplace_back("no bindings");
    parts.push_back(in.request.aliasing ? "aliasing on" : "aliasing off");
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::string stored_envelope_text(const SessionInput& in) {
    // save_ir_json writes the envelope before the tensors: no need to parse a graph without one.
    if (in.is_problem ||
        std::string_view(in.model_text).substr(0, 4096).find("\"shape_envelope\": ") ==
            std::string_view::npos)
        return {};
    try {
        return envelope_text(load_ir_string(in.model_text, "stored model"));
    } catch (const Failure& f) {
        return fmt::format("(the stored graph does not load: {})", f.what());
    }
}

SourceCheck check_source(const SessionInput& in) {
    SourceCheck c;
    const std::string& path = in.source_path;
    if (in.source_sha256.empty()) {
        c.line = "source model file not checked: no hash was recorded with this session "
                 "(recorded before tmmu kept one, or not from a file)";
        return c;
    }
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        c.state = SourceCheck::State::Missing;
        c.line = fmt::format("source model file {} is MISSING (recorded with SHA-256 {}...); the "
                             "stored graph was replayed",
                             path, short_hash(in.source_sha256));
        return c;
    }
    const std::string now = file_sha256(path);
    if (now.empty()) {
        c.state = SourceCheck::State::Missing;
        c.line = fmt::format("source model file {} cannot be read (recorded with SHA-256 {}...); "
                             "the stored graph was replayed",
                             path, short_hash(in.source_sha256));
    } else if (now != in.source_sha256) {
        c.state = SourceCheck::State::Changed;
        c.line = fmt::format("source model file {} CHANGED since recording (SHA-256 {}... then, "
                             "{}... now); the stored graph was replayed",
                             path, short_hash(in.source_sha256), short_hash(now));
    } else {
        c.state = SourceCheck::State::Unchanged;
        c.line = fmt::format("source model file {} unchanged since recording (SHA-256 {}...)", path,
                             short_hash(in.source_sha256));
    }
    return c;
}

} // namespace tmmu::sessions
