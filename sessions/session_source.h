#pragma once
// What a session knows about the model file it was recorded from (schema 6): the file's SHA-256,
// so a replay can say whether the file changed or went missing since, and for an ONNX model the
// bindings that shaped its graph (symbolic dims, whole input shapes, aliasing). The stored
// canonical IR is what replays; the file is only hashed, never planned again.
#include "session_store.h"

#include <string>

namespace tmmu::sessions {

// The hex SHA-256 of a file's bytes, read in pieces (ONNX models run to gigabytes); empty when
// it is not a regular file that can be read (a model built in memory has no file).
std::string file_sha256(const std::string& path);

// An ONNX input's stored bindings as canonical JSON, {"aliasing":..,"dims":{..},
// "input_shapes":{..}} (keys sorted, so the same bindings always give the same bytes, which the
// content seal covers); "" for other models.
std::string bindings_json(const SessionInput& in);
// The inverse: sets in.onnx and the request's dims, input_shapes and aliasing; "" leaves them at
// their defaults. Throws CorruptCheckpoint naming `where` when the JSON does not parse.
void read_bindings_json(const std::string& text, SessionInput& in, const std::string& where);
// "dims N=2, unk__0=8; input shapes x=1x3x224x224; aliasing on", "no bindings; aliasing on"; ""
// for other models. For show and reports.
std::string bindings_text(const SessionInput& in);
// An IR graph with dynamic dimensions: its binding, envelope and replan policy as stored
// (envelope_text); "" for other models. Reads the stored graph only when its head declares a
// shape_envelope; a stored graph that does not load says so.
std::string stored_envelope_text(const SessionInput& in);

// The recorded model file against the file at source_path now.
struct SourceCheck {
    enum class State {
        NotRecorded, // recorded before schema 6, or without a readable file
        Unchanged,
        Changed,
        Missing,
    };
    State state = State::NotRecorded;
    std::string line; // one line for a replay's report; never empty
};
SourceCheck check_source(const SessionInput& in);

} // namespace tmmu::sessions
