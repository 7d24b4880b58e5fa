#pragma once
// Text helpers shared by the report writers: UTF-8 decoding that never fails, and escaping for
// XML/HTML markup, CSV fields and JSON strings.
#include <string>
#include <string_view>

namespace tmmu::sessions::report {

// Calls fn(code point) for each character; a malformed byte sequence yields U+FFFD.
template <class Fn>
void for_each_code_point(std::string_view s, Fn&& fn);

// Markup text and attribute values: & < > " ' escaped, control characters (other than tab and
// newline) dropped and malformed UTF-8 replaced, so the result always parses as XML.
std::string xml_escape(std::string_view s);
// RFC 4180: quoted (with "" for ") when the field holds , " CR or LF.
std::string csv_field(std::string_view s);
// A JSON string literal with its quotes; malformed UTF-8 replaced.
std::string json_string(std::string_view s);
// A coordinate for SVG/PDF output: fixed two decimals, trailing zeros trimmed ("12.5", "3").
std::string coord(double v);

template <class Fn>
void for_each_code_point(std::string_view s, Fn&& fn) {
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        int extra = c < 0x80           ? 0
                    : (c >> 5) == 0x6  ? 1
                    : (c >> 4) == 0xE  ? 2
                    : (c >> 3) == 0x1E ? 3
                                       : -1;
        char32_t cp = extra == 0 ? c : extra == 1 ? c & 0x1F : extra == 2 ? c & 0x0F : c & 0x07;
        bool ok = extra >= 0 && i + size_t(extra) < s.size();
        for (int k = 1; ok && k <= extra; ++k) {
            unsigned char cc = static_cast<unsigned char>(s[i + size_t(k)]);
            ok = (cc & 0xC0) == 0x80;
            cp = (cp << 6) | (cc & 0x3F);
        }
        // Overlong forms, surrogates and values past U+10FFFF are malformed too.
        static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
        if (ok && extra > 0)
            ok = cp >= kMin[extra] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
        if (!ok) {
            fn(char32_t(0xFFFD));
            ++i;
            continue;
        }
        fn(cp);
        i += size_t(extra) + 1;
    }
}

void append_utf8(std::string& out, char32_t cp);

} // namespace tmmu::sessions::report
