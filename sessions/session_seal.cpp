#include "session_seal.h"

#include "session_source.h"

#include "core/digest.h"

#include <cstdint>

namespace tmmu::sessions {

SealWriter& SealWriter::field(std::string_view bytes) {
    uint8_t len[8];
    for (int i = 0; i < 8; ++i)
        len[i] = uint8_t(uint64_t(bytes.size()) >> (8 * i));
    h_.update(len, sizeof len);
    h_.update(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    return *this;
}

std::string SealWriter::finish() {
    return to_hex(h_.finish());
}

std::string summary_seal(const SessionSummary& s) {
    return SealWriter("tmmu session summary v1")
        .field(s.created)
        .field(s.source_path)
        .field(s.mode)
        .field(s.strategy)
        .field(s.plan_hash)
        .number(s.peak_bytes)
        .number(s.lower_bound)
        .finish();
}

std::string content_seal(const Session& s, std::string_view options_json,
                         std::string_view iterations_json) {
    const std::string_view checkpoint(reinterpret_cast<const char*>(s.checkpoint.data()),
                                      s.checkpoint.size());
    SealWriter seal("tmmu session content v1");
    seal.field(summary_seal(s.summary))
        .field(s.program_version)
        .number(s.input.is_problem ? 1 : 0)
        .field(s.input.model_text)
        .number(s.input.request.batch)
        .number(s.input.request.seq)
        .field(options_json)
        .field(s.ir_hash)
        .field(s.metrics_json)
        .field(checkpoint);
    // Schema 6's fields join only when set: rows recorded before keep their seals, and a row
    // whose hash or bindings were blanked afterwards no longer matches its own.
    if (!s.input.source_sha256.empty() || s.input.onnx)
        seal.field(s.input.source_sha256).field(bindings_json(s.input));
    // Schema 9's likewise: a run over iterations seals them, and blanking them breaks the seal.
    if (!iterations_json.empty()) seal.field(iterations_json);
    return seal.finish();
}

} // namespace tmmu::sessions
