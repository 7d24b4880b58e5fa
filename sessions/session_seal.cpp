#include "session_seal.h"

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

std::string content_seal(const Session& s, std::string_view options_json) {
    const std::string_view checkpoint(reinterpret_cast<const char*>(s.checkpoint.data()),
                                      s.checkpoint.size());
    return SealWriter("tmmu session content v1")
        .field(summary_seal(s.summary))
        .field(s.program_version)
        .number(s.input.is_problem ? 1 : 0)
        .field(s.input.model_text)
        .number(s.input.request.batch)
        .number(s.input.request.seq)
        .field(options_json)
        .field(s.ir_hash)
        .field(s.metrics_json)
        .field(checkpoint)
        .finish();
}

} // namespace tmmu::sessions
