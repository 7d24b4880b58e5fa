#include "lazy_trace_diff.h"

#include "core/units.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace tmmu::sessions {
namespace {

using nlohmann::ordered_json;

constexpr size_t kNamedFields = 3;
constexpr size_t kShownChars = 120; // of a value that is not an object (an altered row's)

std::string shown(const ordered_json& v) {
    std::string text = v.dump();
    if (text.size() > kShownChars) text = text.substr(0, kShownChars) + "...";
    return text;
}

// "op was \"matmul\", is \"add\"; detail was \"\", is \"fused\"" for the fields (in the
// recorded entry's order) whose values differ; fields only one side has count as null there.
// Entries that are not objects (a row altered behind tmmu's back) are shown whole.
std::string differing_fields(const ordered_json& was, const ordered_json& is) {
    if (!was.is_object() || !is.is_object())
        return fmt::format("was {}, is {}", shown(was), shown(is));
    std::string out;
    size_t named = 0, differing = 0;
    auto note = [&](const std::string& field, const ordered_json& a, const ordered_json& b) {
        if (a == b) return;
        if (++differing > kNamedFields) return;
        out += fmt::format("{}{} was {}, is {}", named++ ? "; " : "", field, shown(a), shown(b));
    };
    const ordered_json none;
    for (auto it = was.begin(); it != was.end(); ++it)
        note(it.key(), it.value(), is.contains(it.key()) ? is.at(it.key()) : none);
    for (auto it = is.begin(); it != is.end(); ++it)
        if (!was.contains(it.key())) note(it.key(), none, it.value());
    if (differing > named)
        out += fmt::format(" (and {})", count_of(differing - named, "more field"));
    return out;
}

// The first entry of `kind` ("event", "plan") where the two lists differ, or "".
std::string first_difference_in(const ordered_json& was, const ordered_json& is, const char* kind,
                                const TraceNames& names) {
    const size_t common = std::min(was.size(), is.size());
    for (size_t i = 0; i < common; ++i) {
        if (was[i] == is[i]) continue;
        const auto key = was[i].is_object() ? was[i].find("key") : was[i].end();
        const std::string label = key != was[i].end() && key->is_string()
                                      ? fmt::format(" ({})", key->get<std::string>())
                                      : std::string();
        return fmt::format("{} {}{}: {}", kind, i, label, differing_fields(was[i], is[i]));
    }
    if (was.size() == is.size()) return "";
    return was.size() > is.size() ? fmt::format("{} ends after {}, {} has {}", names.second,
                                                count_of(common, kind), names.first, was.size())
                                  : fmt::format("{} ends after {}, {} has {}", names.first,
                                                count_of(common, kind), names.second, is.size());
}

} // namespace

std::string first_trace_difference(const std::string& first, const std::string& second,
                                   const TraceNames& names) {
    const ordered_json was = ordered_json::parse(first, nullptr, false);
    const ordered_json is = ordered_json::parse(second, nullptr, false);
    const auto lists = [](const ordered_json& t) {
        return t.is_object() && t.contains("events") && t["events"].is_array() &&
               t.contains("plans") && t["plans"].is_array();
    };
    if (!lists(was)) return names.first + " is not a lazy trace";
    if (!lists(is)) return names.second + " is not a lazy trace";
    std::string d = first_difference_in(was["events"], is["events"], "event", names);
    return d.empty() ? first_difference_in(was["plans"], is["plans"], "plan", names) : d;
}

std::string trace_verdict(const std::string& hash_a, const std::string& hash_b,
                          const std::string& failure_a, const std::string& failure_b) {
    if (hash_a == hash_b && failure_a == failure_b)
        return failure_a.empty() ? "identical: the same trace hash"
                                 : "identical: the same trace hash and the same error";
    if (hash_a != hash_b && failure_a != failure_b)
        return "DIFFERENT: the trace hashes and the errors differ";
    return hash_a != hash_b ? "DIFFERENT: the trace hashes differ" : "DIFFERENT: the errors differ";
}

} // namespace tmmu::sessions
