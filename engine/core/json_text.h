#pragma once
// JSON text for files and reports that carry the user's own strings (file names, titles, ids):
// bytes that are not UTF-8 become U+FFFD. nlohmann's dump throws on them instead, which turned
// a path with a Latin-1 byte into an internal error where a report or a recording was asked for.
#include <string>

namespace tmmu {

// `indent` as nlohmann's dump: -1 for one line.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

} // namespace tmmu
