#include "runtime/run_summary.h"

#include "core/units.h"
#include "runtime/opcode.h"

#include <fmt/format.h>

namespace tmmu::runtime {
namespace {

std::string ids_text(const std::vector<int32_t>& ids) {
    return fmt::format("{}", fmt::join(ids, " "));
}

std::string counters_text(const DispatchCounters& c) {
    std::string out;
    for (Opcode op : kAllOpcodes)
        if (c.per_opcode[uint8_t(op)])
            out += fmt::format("{}{} {}", out.empty() ? "" : ", ", opcode_name(op),
                               c.per_opcode[uint8_t(op)]);
    return fmt::format("{}; total {}", out, c.total);
}

// "multihead_attention 0.412 ms, ..., total 1.003 ms" (GPU backends only).
std::string device_time_text(const DispatchCounters& c, size_t steps) {
    std::string out;
    double total = 0;
    for (Opcode op : kAllOpcodes)
        if (const double s = c.device_seconds[uint8_t(op)]; s > 0 && steps > 0) {
            out += fmt::format("{}{} {:.3f} ms", out.empty() ? "" : ", ", opcode_name(op),
                               s * 1e3 / double(steps));
            total += s;
        }
    return out.empty() ? out : fmt::format("{}; total {:.3f} ms", out, total * 1e3 / double(steps));
}

// "; 75 kernel launches per step" (GPU backends only: the CPU launches nothing).
std::string launches_text(const DispatchCounters& c, size_t steps) {
    if (c.launches == 0 || steps == 0) return "";
    return fmt::format("; {:.4g} launches per step", double(c.launches) / double(steps));
}

} // namespace

std::string format_run(const RunRecord& rec) {
    const RunRequest& r = rec.request;
    const RunResult& g = rec.result;
    const RunRates rates = run_rates(g);
    std::string out =
        fmt::format("model      {} ({}), {}\n", rec.model, rec.config_path,
                    r.weights_path.empty() ? fmt::format("seeded random weights (seed {})", r.seed)
                                           : "weights from " + r.weights_path);
    out += fmt::format("backend    {} ({})\n", rec.backend, rec.device);
    for (size_t b = 0; b < g.prompt_ids.size(); ++b)
        out += fmt::format("sequence {} prompt    {}\n           generated {}\n", b,
                           ids_text(g.prompt_ids[b]), ids_text(g.generated_ids[b]));
    const size_t prompt_tokens = g.prompt_ids.empty() ? 0 : g.prompt_ids.front().size();
    out += fmt::format("prefill    {} tokens in {:.3f} s: {:.1f} tokens/s\n",
                       prompt_tokens * g.prompt_ids.size(), g.prefill_seconds,
                       rates.prefill_tokens_per_second);
    out += fmt::format("decode     {} steps x {} sequences: {:.1f} tokens/s; per step p50 "
                       "{:.2f} ms, p95 {:.2f} ms\n",
                       g.decode_step_seconds().size(), g.prompt_ids.size(),
                       rates.decode_tokens_per_second, rates.step_ms_p50, rates.step_ms_p95);
    out +=
        fmt::format("memory     weights {}, KV cache {}, registers {} (decode) and {} "
                    "(prefill)\n",
                    format_bytes(g.weight_bytes), format_bytes(g.kv_cache_bytes),
                    format_bytes(g.decode_register_bytes), format_bytes(g.prefill_register_bytes));
    if (const DeviceMemory& d = g.device_memory; d.planned_bytes != 0)
        out += fmt::format("device     planned {}, measured {} ({} overhead)\n",
                           format_bytes(d.planned_bytes), format_bytes(d.measured_bytes),
                           d.measured_bytes >= d.planned_bytes
                               ? "+" + format_bytes(d.measured_bytes - d.planned_bytes)
                               : "-" + format_bytes(d.planned_bytes - d.measured_bytes));
    if (r.counters) {
        const size_t decode_steps = g.decode_step_seconds().size();
        out += fmt::format("dispatches prefill: {}{}\n", counters_text(g.prefill_counters),
                           launches_text(g.prefill_counters, g.steps.size() - decode_steps));
        out += fmt::format("           decode:  {}{}\n", counters_text(g.decode_counters),
                           launches_text(g.decode_counters, decode_steps));
        if (const std::string t = device_time_text(g.decode_counters, decode_steps); !t.empty())
            out += fmt::format("device time per decode step: {}\n", t);
    }
    out += fmt::format("logits     sha256 {}\n", to_hex(g.logits_hash));
    if (rec.parity)
        out += fmt::format("parity     planned registers vs {}: {}\n", rec.parity->reference,
                           rec.parity->identical ? "bit-identical logits" : "DIFFERENT logits");
    return out;
}

std::string format_replay(const RunComparison& c, const RunResult& replayed) {
    if (c.identical)
        return fmt::format("identical: {} steps, logits sha256 {}\n", replayed.steps.size(),
                           to_hex(replayed.logits_hash));
    return fmt::format("DIFFERENT at {}\n", c.difference);
}

} // namespace tmmu::runtime
