#pragma once
// Offset-assignment problems as CSV (the minimalloc format, /work/shared/data/dsa/README.md):
// a header row naming the columns, then one buffer per row.
//   id, lower, upper, size   required; lower inclusive, upper exclusive
//   buffer, start, end       the older spelling, with an inclusive end (read as end + 1)
//   alignment                optional power of two, 1 when absent or empty
//   pinned                   optional offset the planner must keep
//   offset                   optional placement that came with the file: a baseline, not a pin
//   gaps                     accepted and ignored
// Columns may come in any order; names are case-insensitive. Fields may be double-quoted.
// Buffer index = row order.
#include "plan/offset_problem.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu {

struct DsaProblem {
    OffsetProblem problem;
    std::vector<std::string> ids;
    std::vector<std::optional<uint64_t>> given_offsets; // the file's offset column, per buffer
};

// Throws IO_ERROR when the file cannot be read, else as parse_dsa_csv with origin = path.
DsaProblem load_dsa_csv(const std::string& path);
// Throws INVALID_IR_SHAPES at "<origin>:<line>" for a malformed header or row, e.g.
// "column 'size': expected an unsigned integer, got 'x'", upper <= lower, a duplicate id.
DsaProblem parse_dsa_csv(std::string_view text, std::string_view origin);
// Writes id,lower,upper,size, then alignment and pinned when any buffer needs them, then offset
// (offsets when given, else the problem's given_offsets when any). parse_dsa_csv reads it back
// to the same problem. Throws INVALID_ARGUMENT on mismatched sizes or an id with a line break.
std::string write_dsa_csv(const DsaProblem& dsa, const std::vector<uint64_t>* offsets);

} // namespace tmmu
