#include "onnx/node_attributes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tmmu::onnx {
namespace {

constexpr int kShownValues = 8; // longer lists end in "... (N values)"

template <typename List>
std::string list_text(const List& values) {
    const int n = values.size();
    const int shown = std::min(n, kShownValues);
    std::string text = fmt::format("[{}", fmt::join(values.begin(), values.begin() + shown, ", "));
    return text + (n > shown ? fmt::format(", ... ({} values)]", n) : "]");
}

std::string quoted(const std::string& s) {
    return s.size() <= 64 ? fmt::format("'{}'", s) : fmt::format("'{}...'", s.substr(0, 61));
}

std::string tensor_text(const lib::TensorProto& t) {
    std::string type = lib::TensorProto_DataType_Name(lib::TensorProto_DataType(t.data_type()));
    std::transform(type.begin(), type.end(), type.begin(), ::tolower);
    std::string text = fmt::format("{}[{}]", type, fmt::join(t.dims(), "x"));
    if (t.int64_data_size() > 0) text += " " + list_text(t.int64_data());
    if (t.int32_data_size() > 0) text += " " + list_text(t.int32_data());
    if (t.float_data_size() > 0) text += " " + list_text(t.float_data());
    return text;
}

std::string graph_text(const lib::GraphProto& g) {
    return fmt::format("graph '{}', {} nodes", g.name(), g.node_size());
}

std::string value_text(const lib::AttributeProto& a) {
    switch (a.type()) {
    case lib::AttributeProto::INT:
        return std::to_string(a.i());
    case lib::AttributeProto::FLOAT:
        return fmt::format("{:g}", a.f());
    case lib::AttributeProto::STRING:
        return quoted(a.s());
    case lib::AttributeProto::TENSOR:
        return tensor_text(a.t());
    case lib::AttributeProto::GRAPH:
        return graph_text(a.g());
    case lib::AttributeProto::INTS:
        return list_text(a.ints());
    case lib::AttributeProto::FLOATS:
        return list_text(a.floats());
    case lib::AttributeProto::STRINGS:
        return fmt::format("{} strings", a.strings_size());
    case lib::AttributeProto::GRAPHS:
        return fmt::format("{} graphs", a.graphs_size());
    default:
        return lib::AttributeProto_AttributeType_Name(a.type());
    }
}

} // namespace

std::vector<std::pair<std::string, std::string>> attribute_texts(const lib::NodeProto& n) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const lib::AttributeProto& a : n.attribute())
        out.emplace_back(a.name(), value_text(a));
    return out;
}

} // namespace tmmu::onnx
