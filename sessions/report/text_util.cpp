#include "report/text_util.h"

#include <fmt/format.h>

namespace tmmu::sessions::report {

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

std::string xml_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for_each_code_point(s, [&](char32_t cp) {
        switch (cp) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            // XML 1.0 forbids C0 controls other than tab/LF/CR, and U+FFFE/U+FFFF.
            if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == '\r' || cp == 0xFFFE ||
                cp == 0xFFFF)
                return;
            append_utf8(out, cp);
        }
    });
    return out;
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for_each_code_point(s, [&](char32_t cp) {
        switch (cp) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (cp < 0x20)
                out += fmt::format("\\u{:04x}", uint32_t(cp));
            else
                append_utf8(out, cp);
        }
    });
    return out + "\"";
}

std::string coord(double v) {
    std::string s = fmt::format("{:.2f}", v);
    while (!s.empty() && s.back() == '0')
        s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    if (s == "-0") s = "0";
    return s;
}

} // namespace tmmu::sessions::report
