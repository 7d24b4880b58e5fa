#pragma once
// Where two lazy traces (lazy_trace_json) part: what a replay that differs from its recording
// reports beside the two hashes, so a person sees the first event that changed instead of only
// that something did.
#include <string>

namespace tmmu::sessions {

// The first event, else the first plan, where `recorded` and `replayed` differ, in words
// ("event 37 (g12:n0): op was \"matmul\", is \"add\""; at most three fields named), or where the
// shorter one ends. "" when their events and plans agree. A text that is not a lazy trace, or
// an entry that is not an object, is named as such instead: a stored row may have been altered.
std::string first_trace_difference(const std::string& recorded, const std::string& replayed);

} // namespace tmmu::sessions
