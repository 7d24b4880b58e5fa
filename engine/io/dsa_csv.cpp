#include "io/dsa_csv.h"

#include "core/checked.h"
#include "core/failure.h"
#include "encoding/utf8.h"
#include "io/file_io.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <map>

namespace tmmu {

namespace {

enum Column : size_t { Id, Lower, Upper, End, Size, Alignment, Pinned, Offset, Gaps, kColumns };

// Accepted header names, lower case.
constexpr std::array<std::pair<std::string_view, Column>, 11> kNames = {{
    {"id", Id},
    {"buffer", Id},
    {"lower", Lower},
    {"start", Lower},
    {"upper", Upper},
    {"end", End},
    {"size", Size},
    {"alignment", Alignment},
    {"pinned", Pinned},
    {"offset", Offset},
    {"gaps", Gaps},
}};

constexpr size_t kAbsent = SIZE_MAX;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// Splits one CSV record; double-quoted fields may hold commas and "" for a quote.
std::vector<std::string> split_fields(std::string_view line, const std::string& where) {
    std::vector<std::string> fields;
    size_t i = 0;
    while (true) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            ++i;
        std::string field;
        if (i < line.size() && line[i] == '"') {
            for (++i;; ++i) {
                if (i >= line.size())
                    fail(FailureCode::InvalidIrShapes, where,
                         "unterminated quoted field; expected a closing '\"'");
                if (line[i] != '"') {
                    field += line[i];
                } else if (i + 1 < line.size() && line[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    ++i;
                    break;
                }
            }
            while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
                ++i;
            if (i < line.size() && line[i] != ',')
                fail(FailureCode::InvalidIrShapes, where,
                     fmt::format("unexpected text after a quoted field at column {}", i + 1));
        } else {
            size_t comma = std::min(line.find(',', i), line.size());
            field = std::string(trim(line.substr(i, comma - i)));
            i = comma;
        }
        fields.push_back(std::move(field));
        if (i >= line.size()) return fields;
        ++i; // the comma
    }
}

struct Header {
    std::array<size_t, kColumns> at; // field index of each column, kAbsent when missing
    std::vector<std::string> names;  // as spelled in the file
};

Header parse_header(std::string_view line, const std::string& where) {
    Header h;
    h.at.fill(kAbsent);
    h.names = split_fields(line, where);
    for (size_t f = 0; f < h.names.size(); ++f) {
        std::string lower = h.names[f];
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return char(std::tolower(c)); });
        auto it = std::find_if(kNames.begin(), kNames.end(),
                               [&](const auto& n) { return n.first == lower; });
        if (it == kNames.end())
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("unknown column '{}'; expected id, lower, upper, size, alignment, "
                             "pinned, offset, gaps (or buffer, start, end)",
                             h.names[f]));
        if (h.at[it->second] != kAbsent)
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("column '{}' repeats column '{}'", h.names[f],
                             h.names[h.at[it->second]]));
        h.at[it->second] = f;
    }
    if (h.at[Upper] != kAbsent && h.at[End] != kAbsent)
        fail(FailureCode::InvalidIrShapes, where,
             "both 'upper' (exclusive) and 'end' (inclusive) given; expected one of them");
    for (auto [col, label] : {std::pair{Id, "id"}, {Lower, "lower"}, {Size, "size"}})
        if (h.at[col] == kAbsent)
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("no '{}' column; expected a header like id,lower,upper,size", label));
    if (h.at[Upper] == kAbsent && h.at[End] == kAbsent)
        fail(FailureCode::InvalidIrShapes, where,
             "no 'upper' column; expected a header like id,lower,upper,size");
    return h;
}

struct RowReader {
    const Header& header;
    const std::vector<std::string>& fields;
    const std::string& where;

    bool has(Column c) const { return header.at[c] != kAbsent && !fields[header.at[c]].empty(); }

    uint64_t number(Column c) const {
        const std::string& text = fields[header.at[c]];
        uint64_t value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size())
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("column '{}': expected an unsigned integer, got '{}'",
                             header.names[header.at[c]], text));
        return value;
    }
    std::optional<uint64_t> optional_number(Column c) const {
        return has(c) ? std::optional<uint64_t>(number(c)) : std::nullopt;
    }
};

Buffer read_buffer(const RowReader& row) {
    Buffer b;
    b.begin = row.number(Lower);
    if (row.header.at[Upper] != kAbsent) {
        b.end = row.number(Upper);
        if (b.end <= b.begin)
            fail(FailureCode::InvalidIrShapes, row.where,
                 fmt::format("upper {} is not after lower {}; expected upper > lower (upper is "
                             "exclusive)",
                             b.end, b.begin));
    } else {
        uint64_t last = row.number(End);
        if (last < b.begin)
            fail(FailureCode::InvalidIrShapes, row.where,
                 fmt::format("end {} is before start {}; expected end >= start (end is inclusive)",
                             last, b.begin));
        b.end = checked_add(last, 1, row.where + " column 'end'");
    }
    if (b.end > kMaxTimeStep) // checked here so that validate and plan agree
        fail(FailureCode::InvalidIrShapes, row.where,
             fmt::format("lifetime ends at {}; time steps beyond 2^32 - 1 are not supported",
                         b.end));
    b.size = row.number(Size);
    if (row.has(Alignment)) {
        b.alignment = row.number(Alignment);
        if (!is_power_of_two(b.alignment))
            fail(FailureCode::InvalidIrShapes, row.where,
                 fmt::format("column '{}': alignment {} is not a power of two",
                             row.header.names[row.header.at[Alignment]], b.alignment));
    }
    b.pinned = row.optional_number(Pinned);
    return b;
}

} // namespace

DsaProblem parse_dsa_csv(std::string_view text, std::string_view origin) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3); // UTF-8 byte order mark
    DsaProblem out;
    std::optional<Header> header;
    std::map<std::string, size_t, std::less<>> line_of_id;
    size_t line_no = 0;
    for (size_t pos = 0; pos < text.size();) {
        size_t nl = std::min(text.find('\n', pos), text.size());
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trim(line).empty()) continue;
        const std::string where = fmt::format("{}:{}", origin, line_no);
        if (!header) {
            header = parse_header(line, where);
            continue;
        }
        std::vector<std::string> fields = split_fields(line, where);
        if (fields.size() != header->names.size())
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("{} fields; expected {} as in the header", fields.size(),
                             header->names.size()));
        const RowReader row{*header, fields, where};
        const std::string& id = fields[header->at[Id]];
        if (id.empty()) fail(FailureCode::InvalidIrShapes, where, "empty id; expected a name");
        // Ids are text in every plan, hash and checkpoint (CBOR text strings are UTF-8).
        if (!is_valid_utf8(id))
            fail(FailureCode::InvalidIrShapes, where,
                 "the id is not UTF-8 text; save the file as UTF-8");
        if (auto [it, fresh] = line_of_id.emplace(id, line_no); !fresh)
            fail(FailureCode::InvalidIrShapes, where,
                 fmt::format("duplicate id '{}', first used on line {}", id, it->second));
        out.problem.buffers.push_back(read_buffer(row));
        out.ids.push_back(id);
        out.given_offsets.push_back(row.optional_number(Offset));
    }
    if (!header)
        fail(FailureCode::InvalidIrShapes, fmt::format("{}:1", origin),
             "empty file; expected a header row like id,lower,upper,size");
    return out;
}

DsaProblem load_dsa_csv(const std::string& path) {
    return parse_dsa_csv(read_text_file(path), path);
}

namespace {

std::string quoted_id(const std::string& id, size_t i) {
    if (id.find_first_of("\r\n") != std::string::npos)
        fail(FailureCode::InvalidArgument, fmt::format("buffer {} id", i),
             "id holds a line break; CSV ids must be on one line");
    bool plain =
        !id.empty() && id.find_first_of(",\"") == std::string::npos && trim(id).size() == id.size();
    if (plain) return id;
    std::string out = "\"";
    for (char c : id)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

} // namespace

std::string write_dsa_csv(const DsaProblem& dsa, const std::vector<uint64_t>* offsets) {
    const auto& buffers = dsa.problem.buffers;
    if (dsa.ids.size() != buffers.size())
        fail(FailureCode::InvalidArgument, "write_dsa_csv ids",
             fmt::format("{} ids for {} buffers; expected one per buffer", dsa.ids.size(),
                         buffers.size()));
    if (!dsa.given_offsets.empty() && dsa.given_offsets.size() != buffers.size())
        fail(FailureCode::InvalidArgument, "write_dsa_csv given_offsets",
             fmt::format("{} given offsets for {} buffers; expected none or one per buffer",
                         dsa.given_offsets.size(), buffers.size()));
    if (offsets && offsets->size() != buffers.size())
        fail(FailureCode::InvalidArgument, "write_dsa_csv offsets",
             fmt::format("{} offsets for {} buffers; expected one per buffer", offsets->size(),
                         buffers.size()));
    auto any = [&](auto pred) { return std::any_of(buffers.begin(), buffers.end(), pred); };
    const bool aligned = any([](const Buffer& b) { return b.alignment != 1; });
    const bool pinned = any([](const Buffer& b) { return b.pinned.has_value(); });
    const bool given = std::any_of(dsa.given_offsets.begin(), dsa.given_offsets.end(),
                                   [](const auto& o) { return o.has_value(); });
    const bool offset_column = offsets || given;
    std::string out = "id,lower,upper,size";
    if (aligned) out += ",alignment";
    if (pinned) out += ",pinned";
    if (offset_column) out += ",offset";
    out += '\n';
    for (size_t i = 0; i < buffers.size(); ++i) {
        const Buffer& b = buffers[i];
        out += fmt::format("{},{},{},{}", quoted_id(dsa.ids[i], i), b.begin, b.end, b.size);
        if (aligned) out += fmt::format(",{}", b.alignment);
        if (pinned) out += b.pinned ? fmt::format(",{}", *b.pinned) : std::string(",");
        if (offsets)
            out += fmt::format(",{}", (*offsets)[i]);
        else if (offset_column)
            out +=
                dsa.given_offsets[i] ? fmt::format(",{}", *dsa.given_offsets[i]) : std::string(",");
        out += '\n';
    }
    return out;
}

} // namespace tmmu
