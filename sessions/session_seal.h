#pragma once
// The seals of a session row: SHA-256 over what list, show, replay and export rely on, stored
// in the row when it is recorded. A change made behind tmmu's back (sqlite3, a disk error)
// then shows as "altered" wherever the row is read. Title, notes and tags are the user's to
// edit (tmmu session edit) and are not sealed; a seal guards against accidents and careless
// edits, not against someone who recomputes it.
#include "session_store.h"

#include "encoding/sha256.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tmmu::sessions {

// Each field as its length (8 bytes, little-endian) then its bytes, after a domain label, so
// no two different rows hash the same bytes ("ab","c" vs "a","bc"). Every sealed table
// (sessions, lazy traces) builds its seal with it.
class SealWriter {
  public:
    explicit SealWriter(std::string_view domain) { field(domain); }
    SealWriter& field(std::string_view bytes);
    SealWriter& number(uint64_t v) { return field(std::to_string(v)); }
    std::string finish();

  private:
    Sha256 h_;
};

// Over the listed fields: created, source path, mode, strategy, plan hash, peak and lower
// bound. Cheap, so every listing checks it.
std::string summary_seal(const SessionSummary& s);

// Over everything else show, replay and export read (program version, the model text and
// request, the options as stored JSON, IR hash, metrics, the checkpoint bytes, from schema 6
// the source file's hash and ONNX bindings where set, and from schema 9 the iterations as
// stored JSON where set) and the summary seal. The stored texts are sealed as they are, so a
// change that parses to the same values still breaks the seal.
std::string content_seal(const Session& s, std::string_view options_json,
                         std::string_view iterations_json);

} // namespace tmmu::sessions
