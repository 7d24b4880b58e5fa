#pragma once
// A planning run over iterations (seed 000 II.H: tmmu plan --iteration, the studio's Plan > Run
// iterations) keeps its history in its session (schema 9): the binding of the plan it started
// from and every iteration as it was decided. The stored graph is bound as the plan in force
// after the last iteration, which is the session's plan; replay runs the iterations again from
// the start and checks each decision (replay.h).
#include "session_store.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tmmu::sessions {

// {"start": {name: value}, "iterations": [iterations_json rows]}: as the store and the session
// export keep a history.
nlohmann::ordered_json history_json(const IterationHistory& h);
// in.iterations as history_json text, one text per history (the content seal covers it); "" for
// a run without iterations.
std::string iterations_json(const SessionInput& in);
// The inverse of history_json. Throws CorruptCheckpoint naming `where` when `j` is not such a
// history (a field missing or mistyped, a digest that is not hex).
IterationHistory read_history_json(const nlohmann::json& j, const std::string& where);
// The inverse of iterations_json: sets in.iterations; "" leaves it empty. Throws
// CorruptCheckpoint naming `where` when the JSON does not parse or is not a history.
void read_iterations_json(const std::string& text, SessionInput& in, const std::string& where);
// Why `history` cannot be the history of `plan`, or "": a run over iterations has at least one,
// numbered from 0, and its plan is the one the last iteration ran on.
std::string iterations_problem(const std::optional<IterationHistory>& history, const Plan& plan);
// "3 iterations from batch=1, seq=128, 1 replan", then one iteration_text line per iteration;
// empty for a run without iterations. For show.
std::vector<std::string> iterations_lines(const SessionInput& in);
// "seq=1024: replanned onto plan 35e84fa111292eee (26.50 MiB)": one iteration, for reports.
std::string iteration_decision(const IterationOutcome& i);
// "3 iterations from batch=1, seq=128, 1 replan".
std::string history_text(const IterationHistory& h);

// What replaying the iterations decided against what was recorded.
struct IterationsReplay {
    std::vector<IterationOutcome> replayed;
    bool same = true;    // every iteration decided as recorded: all its recorded fields agree
    std::string verdict; // "3 iterations decided as recorded (1 replan)", or the first difference
};
// Compares a replayed run's decisions with the recorded ones.
IterationsReplay compare_iterations(const IterationHistory& recorded,
                                    std::vector<IterationOutcome> replayed);

} // namespace tmmu::sessions
