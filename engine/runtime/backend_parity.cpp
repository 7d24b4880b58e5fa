#include "runtime/backend_parity.h"

#include "runtime/generate.h"

#include <algorithm>
#include <fmt/format.h>

namespace tmmu::runtime {

namespace {

size_t argmax(std::span<const float> row) {
    return size_t(std::max_element(row.begin(), row.end()) - row.begin());
}

StepAgreement agreement(std::span<const float> reference, std::span<const float> candidate,
                        size_t vocab) {
    StepAgreement a;
    double error = 0, energy = 0;
    for (size_t i = 0; i < reference.size(); ++i) {
        const double d = double(candidate[i]) - reference[i];
        error += d * d;
        energy += double(reference[i]) * reference[i];
    }
    a.nmse = energy > 0 ? error / energy : error;
    for (size_t at = 0; at < reference.size(); at += vocab) {
        ++a.rows;
        if (argmax(reference.subspan(at, vocab)) == argmax(candidate.subspan(at, vocab)))
            ++a.same_argmax;
    }
    return a;
}

} // namespace

bool BackendParity::passes(double max_nmse, uint32_t allowed_misses) const {
    return worst_nmse <= max_nmse && rows - same_argmax <= allowed_misses;
}

BackendParity compare_backends(const TransformerConfig& config, const RunRequest& request,
                               const ExecutorFactory& reference, const ExecutorFactory& candidate,
                               const Progress& progress) {
    BackendParity p;
    std::vector<std::vector<float>> expected;
    GenerateHooks record;
    record.on_logits = [&](size_t, std::span<const float> rows) {
        expected.emplace_back(rows.begin(), rows.end());
    };
    p.reference = generate(config, request, reference, progress, record);
    GenerateHooks follow;
    follow.follow = &p.reference;
    follow.on_logits = [&](size_t step, std::span<const float> rows) {
        const StepAgreement a = agreement(expected.at(step), rows, config.vocab);
        if (a.nmse > p.worst_nmse || p.steps.empty()) {
            p.worst_nmse = std::max(p.worst_nmse, a.nmse);
            p.worst_step = step;
        }
        p.rows += a.rows;
        p.same_argmax += a.same_argmax;
        p.steps.push_back(a);
    };
    p.candidate = generate(config, request, candidate, progress, follow);
    return p;
}

std::string describe(const BackendParity& p) {
    if (p.steps.empty()) return "no steps compared";
    const StepPhase phase = p.reference.steps.at(p.worst_step).phase;
    return fmt::format("worst NMSE {:.2g} at step {} ({}), argmax {}/{} rows", p.worst_nmse,
                       p.worst_step, step_phase_name(phase), p.same_argmax, p.rows);
}

} // namespace tmmu::runtime
