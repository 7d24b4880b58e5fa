#pragma once
// Where two lazy traces (lazy_trace_json) part: what a replay that differs from its recording
// reports beside the two hashes, so a person sees the first event that changed instead of only
// that something did.
#include <string>

namespace tmmu::sessions {

// What the two traces compared are called in the words below.
struct TraceNames {
    std::string first = "the recording", second = "the replay";
};

// The first event, else the first plan, where `first` and `second` differ, in words
// ("event 37 (g12:n0): op was \"matmul\", is \"add\"": was in `first`, is in `second`; at most
// three fields named), or where the shorter one ends ("the replay ends after 12 events, the
// recording has 15"). "" when their events and plans agree. A text that is not a lazy trace, or
// an entry that is not an object, is named as such instead: a stored row may have been altered.
std::string first_trace_difference(const std::string& first, const std::string& second,
                                   const TraceNames& names = {});

// What differs between two runs of a program (recorded and replayed, or two recordings) by
// their trace hashes and errors ("" when none): "identical: the same trace hash", or
// "DIFFERENT: the trace hashes differ" and so on.
std::string trace_verdict(const std::string& hash_a, const std::string& hash_b,
                          const std::string& failure_a, const std::string& failure_b);

} // namespace tmmu::sessions
