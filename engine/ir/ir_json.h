#pragma once
// The native model format: "tmmu-ir" JSON, version 1. Documented in resources/docs/ir-format.md
// and described by resources/schema/tmmu-ir.schema.json.
//
// Loading is strict: unknown or duplicate keys, wrong types, dangling ids and out-of-range
// numbers fail with INVALID_IR_SHAPES naming the JSON location (e.g.
// "tensors[12] ('h0.q').dtype"); the loaded graph is then passed through finalize_graph(), so a
// returned Graph is always finalized.
#include "ir/graph.h"

#include <string>
#include <string_view>

namespace tmmu {

inline constexpr std::string_view kIrFormatName = "tmmu-ir";
inline constexpr int kIrFormatVersion = 1;

// Reads and loads a file. IO_ERROR names the path when it cannot be read. A graph without a
// "name" is named after the file's stem. Failure locations are prefixed with the path.
Graph load_ir_file(const std::string& path);

// Loads JSON text. `origin` (a file name, "<clipboard>", ...) prefixes failure locations; syntax
// errors are reported at "<origin>:line:col".
Graph load_ir_string(std::string_view json, std::string_view origin);

// Pretty, deterministic JSON (one tensor or node per line; fields at their defaults omitted).
// load_ir_string(save_ir_json(g)) gives back the same tensors, nodes and execution order.
// Throws INVALID_ARGUMENT when g holds out-of-range indices (finalize it first).
std::string save_ir_json(const Graph& g);

// save_ir_json() written to a file; IO_ERROR names the path when it cannot be written.
void save_ir_file(const Graph& g, const std::string& path);

// Cheap sniff for format detection: a JSON object mentioning "tmmu-ir" near its start.
bool looks_like_ir_json(std::string_view text);

} // namespace tmmu
