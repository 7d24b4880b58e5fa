// Running a lazy program (program.h) on a fresh engine, and its outputs as JSON. Each statement
// tells the engine where it is (set_site) before it runs, so the trace's events and every error
// name the statement, and the repeat iterations around it.
#include "lazy/program.h"

#include "core/failure.h"
#include "core/json_text.h"
#include "core/splitmix.h"
#include "encoding/sha256.h"
#include "lazy/lazy_error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <charconv>
#include <cmath>
#include <map>
#include <variant>

namespace tmmu::lazy {
namespace {

std::vector<float> initial_values(const TensorInit& init, int64_t count) {
    const auto n = static_cast<size_t>(count);
    std::vector<float> out(n, init.fill);
    switch (init.kind) {
    case TensorInit::Kind::Values:
        return init.values;
    case TensorInit::Kind::Fill:
        return out;
    case TensorInit::Kind::Arange:
        for (size_t i = 0; i < n; ++i)
            out[i] = static_cast<float>(double(init.start) + double(i) * double(init.step));
        return out;
    case TensorInit::Kind::Uniform: {
        // The top 24 bits of each draw as u in [0, 1) (exact in a float), then
        // low + (high - low) * u in double, rounded to f32 once.
        uint64_t state = init.seed;
        const double low = init.low, span = double(init.high) - double(init.low);
        for (size_t i = 0; i < n; ++i) {
            const double u = double(splitmix64(state) >> 40) * 0x1p-24;
            out[i] = static_cast<float>(low + span * u);
        }
        return out;
    }
    }
    return out;
}

using Optimizer = std::variant<Sgd, AdamW>;

class Runner {
  public:
    Runner(EngineOptions options, const ReadCallback& on_read, const Progress& progress)
        : options_(options), e_(options), on_read_(on_read), progress_(progress) {}

    ProgramRun run(const LazyProgram& p) {
        block(p.program, {});
        return result();
    }

    // The run so far after a failure: its trace up to the error, and the error.
    ProgramRun run_to_failure(const LazyProgram& p) {
        try {
            block(p.program, {});
        } catch (const Failure& f) {
            if (f.code() == FailureCode::Cancelled) throw;
            ProgramRun r = result();
            r.failure = f.what();
            r.failure_code = f.code();
            return r;
        }
        return result();
    }

  private:
    ProgramRun result() {
        ProgramRun r;
        r.eager = options_.eager;
        r.checkpoint = options_.checkpoint;
        r.compile = options_.compile;
        r.reads = std::move(reads_);
        r.trace = e_.trace();
        r.stats = e_.stats();
        r.trace_hash = trace_hash(r.trace);
        r.result_hash = reads_hash(r.reads);
        return r;
    }

    const EngineOptions options_;
    Engine e_;
    const ReadCallback& on_read_;
    const Progress& progress_;
    std::map<std::string, Tensor> tensors_;
    std::map<std::string, Optimizer> optimizers_;
    std::map<std::string, CompiledFn> compiled_;             // by the compile statement's path
    const std::vector<uint64_t>* call_iterations_ = nullptr; // the compiled call being staged
    std::vector<HostRead> reads_;

    // " (iteration 3)", " (iterations 2, 1)" inside nested repeats, "" outside any.
    static std::string iteration_text(const std::vector<uint64_t>& iterations) {
        if (iterations.empty()) return "";
        return fmt::format(" (iteration{} {})", iterations.size() > 1 ? "s" : "",
                           fmt::join(iterations, ", "));
    }

    void block(const std::vector<Statement>& body, const std::vector<uint64_t>& iterations) {
        for (const Statement& s : body) {
            const std::string site = s.path + iteration_text(iterations);
            progress_.check_cancel(site);
            e_.set_site(site);
            try {
                execute(s, site, iterations);
            } catch (const LazyFailure&) {
                throw;
            } catch (const Failure& f) {
                // An op refusing its operands (shapes that do not broadcast, a slice out of
                // range) is the program's fault, not the command line's: the file's code.
                if (f.code() != FailureCode::InvalidArgument) throw;
                fail(FailureCode::InvalidIrShapes, site,
                     f.where() == site ? f.message() : f.where() + ": " + f.message());
            }
        }
    }

    // A name the loader saw bound, whose binding statement has not run (it sits in a repeat
    // of 0 iterations, say): the program's fault, named where it is used.
    template <class Map>
    static auto& bound(Map& map, const std::string& name, const std::string& site) {
        const auto it = map.find(name);
        if (it == map.end())
            fail(FailureCode::InvalidIrShapes, site,
                 fmt::format("\"{}\" is not bound yet: the statement that binds it has not run",
                             name));
        return it->second;
    }
    const Tensor& tensor(const std::string& name, const std::string& site) const {
        return bound(tensors_, name, site);
    }
    Tensor operand(const Operand& o, const std::string& site) {
        return o.tensor.empty() ? e_.full({}, o.number) : tensor(o.tensor, site);
    }
    std::vector<Tensor> tensors(const std::vector<std::string>& names, const std::string& site) {
        std::vector<Tensor> out;
        for (const std::string& n : names)
            out.push_back(tensor(n, site));
        return out;
    }

    void execute(const Statement& s, const std::string& site,
                 const std::vector<uint64_t>& iterations) {
        switch (s.kind) {
        case StatementKind::Tensor:
        case StatementKind::Param:
            return create(s);
        case StatementKind::Op:
            return op(s, site);
        case StatementKind::Grad:
            return grad(s, site);
        case StatementKind::Sgd:
        case StatementKind::AdamW:
            return optimizer(s, site);
        case StatementKind::Backward:
            return e_.backward(tensor(s.names[0], site));
        case StatementKind::Read:
            return read(s, site);
        case StatementKind::MarkStep:
            return e_.mark_step();
        case StatementKind::Step:
            return std::visit([&](auto& o) { o.step(e_); }, bound(optimizers_, s.names[0], site));
        case StatementKind::ZeroGrad:
            return zero_grad(s, site);
        case StatementKind::Repeat:
            for (uint64_t i = 1; i <= s.count; ++i) {
                std::vector<uint64_t> inner = iterations;
                inner.push_back(i);
                block(s.body, inner);
            }
            return;
        case StatementKind::Tidy:
            return tidy(s, site, iterations);
        case StatementKind::Checkpoint:
            (void)e_.checkpoint([&] {
                block(s.body, iterations);
                return Tensor();
            });
            return;
        case StatementKind::Compile:
            return call(s, iterations);
        case StatementKind::Dispose:
            return e_.dispose(tensor(s.names[0], site));
        case StatementKind::RetainGrad:
            return e_.retain_grad(tensor(s.names[0], site));
        case StatementKind::ManualSeed:
            return e_.manual_seed(s.seed);
        case StatementKind::Coercion:
            raise(LazyError::TensorHostCoercion, s.coerced_field + iteration_text(iterations),
                  fmt::format("\"{}\" is a tensor where a number is needed; a tensor never turns "
                              "into a host number by itself (read it to see its values)",
                              s.coerced_tensor));
        }
    }

    void create(const Statement& s) {
        const TensorInit& init = s.init;
        Tensor t;
        if (s.kind == StatementKind::Param)
            t = e_.parameter(s.shape, initial_values(init, element_count(s.shape)), s.let);
        else if (init.kind == TensorInit::Kind::Fill)
            t = e_.full(s.shape, init.fill, s.let);
        else
            t = e_.constant(s.shape, initial_values(init, element_count(s.shape)), s.let);
        tensors_.insert_or_assign(s.let, std::move(t));
    }

    // add and mul take a number directly, on either side; the others as a 0-d tensor.
    Tensor binary(const Statement& s, const std::string& site) {
        const Operand& a = s.args[0];
        const Operand& b = s.args[1];
        const bool scalar_form = (s.op == ProgramOp::Add || s.op == ProgramOp::Mul) &&
                                 (a.tensor.empty() != b.tensor.empty());
        if (scalar_form) {
            const Tensor& t = tensor(a.tensor.empty() ? b.tensor : a.tensor, site);
            const float x = a.tensor.empty() ? a.number : b.number;
            return s.op == ProgramOp::Add ? e_.add(t, x) : e_.mul(t, x);
        }
        return e_.binary(program_op_name(s.op), operand(a, site), operand(b, site));
    }

    Tensor pure(const Statement& s, const std::string& site) {
        if (s.op >= ProgramOp::Add && s.op <= ProgramOp::Ge) return binary(s, site);
        if (s.op == ProgramOp::Rand) return e_.rand(s.shape);
        const Tensor& a = tensor(s.args[0].tensor, site);
        if (s.op <= ProgramOp::Silu) return e_.unary(program_op_name(s.op), a);
        switch (s.op) {
        case ProgramOp::Matmul:
            return e_.matmul(a, tensor(s.args[1].tensor, site));
        case ProgramOp::Sum:
            return e_.sum(a, s.dims, s.keepdim);
        case ProgramOp::Mean:
            return e_.mean(a, s.dims, s.keepdim);
        case ProgramOp::Copy:
            return e_.copy(a);
        case ProgramOp::Dropout:
            return e_.dropout(a, s.p);
        case ProgramOp::Slice:
            // Without "end" the slice runs to the end of the dimension (slice_view clamps).
            return e_.slice(a, s.dim, s.start, s.end_given ? s.end : INT64_MAX, s.step);
        case ProgramOp::Transpose:
            return e_.transpose(a, s.dim0, s.dim1);
        default:
            return e_.reshape(a, s.shape);
        }
    }

    void in_place(const Statement& s, const std::string& site) {
        const Tensor& t = tensor(s.args[0].tensor, site);
        const Operand& x = s.args[1];
        switch (s.op) {
        case ProgramOp::AddInPlace:
            return e_.add_(t, operand(x, site));
        case ProgramOp::SubInPlace:
            return e_.sub_(t, operand(x, site));
        case ProgramOp::MulInPlace:
            return x.tensor.empty() ? e_.mul_(t, x.number) : e_.mul_(t, tensor(x.tensor, site));
        case ProgramOp::CopyInPlace:
            return e_.copy_(t, tensor(x.tensor, site));
        default:
            return e_.fill_(t, x.number);
        }
    }

    void op(const Statement& s, const std::string& site) {
        if (s.op >= ProgramOp::AddInPlace) return in_place(s, site);
        Tensor t = pure(s, site);
        e_.set_name(t, s.let);
        tensors_.insert_or_assign(s.let, std::move(t));
    }

    void grad(const Statement& s, const std::string& site) {
        Tensor g = e_.grad(tensor(s.names[0], site));
        if (!g.valid())
            fail(FailureCode::InvalidIrShapes, site,
                 fmt::format("\"{}\" has no grad here: no backward has reached it yet, or "
                             "zero_grad set it to null",
                             s.names[0]));
        tensors_.insert_or_assign(s.let, std::move(g));
    }

    void optimizer(const Statement& s, const std::string& site) {
        std::vector<Tensor> params = tensors(s.names, site);
        if (s.kind == StatementKind::Sgd)
            optimizers_.insert_or_assign(
                s.let, Optimizer(std::in_place_type<Sgd>, std::move(params), s.optimizer.lr));
        else
            optimizers_.insert_or_assign(
                s.let, Optimizer(std::in_place_type<AdamW>, std::move(params), s.optimizer));
    }

    void zero_grad(const Statement& s, const std::string& site) {
        const std::vector<Tensor> params =
            s.names_optimizer ? std::visit([](const auto& o) { return o.params(); },
                                           bound(optimizers_, s.names[0], site))
                              : tensors(s.names, site);
        e_.zero_grad(params, s.set_to_null);
    }

    void read(const Statement& s, const std::string& site) {
        for (const std::string& name : s.names) {
            const Tensor& t = tensor(name, site);
            std::vector<float> values = e_.read(t);
            reads_.push_back({name, site, e_.info(t).shape, std::move(values)});
            if (on_read_) on_read_(reads_.back());
        }
    }

    // One compiled function per compile statement, so each iteration of a repeat around it is
    // another call of the same function (a cache hit when the body stages the same way).
    void call(const Statement& s, const std::vector<uint64_t>& iterations) {
        auto [it, fresh] = compiled_.try_emplace(s.path);
        if (fresh)
            it->second = e_.compile(
                [this, &s](std::span<const Tensor>) {
                    block(s.body, *call_iterations_);
                    const std::string site = s.path + iteration_text(*call_iterations_);
                    e_.set_site(site);
                    return tensors(s.names, site);
                },
                s.function);
        call_iterations_ = &iterations;
        (void)e_.call(it->second);
    }

    void tidy(const Statement& s, const std::string& site,
              const std::vector<uint64_t>& iterations) {
        e_.tidy([&] {
            block(s.body, iterations);
            e_.set_site(site); // what the scope's end disposes is the tidy statement's doing
            for (const std::string& name : s.names)
                e_.keep(tensor(name, site));
            return Tensor(); // escapes only through "keep"
        });
    }
};

using ordered_json = nlohmann::ordered_json;

// kNone as null, so a reader never mistakes it for an id.
ordered_json id_or_null(int64_t id) {
    return id == kNone ? ordered_json() : ordered_json(id);
}

ordered_json ids(const std::vector<int64_t>& v) {
    ordered_json out = ordered_json::array();
    for (int64_t id : v)
        out.push_back(id_or_null(id));
    return out;
}

// The shortest decimal that reads back as the same f32 ("0.1", not 0.10000000149011612);
// NaN and infinities, which JSON cannot hold, as null.
ordered_json value_json(float v) {
    if (!std::isfinite(v)) return nullptr;
    const std::string text = fmt::format("{}", v);
    double d = 0;
    std::from_chars(text.data(), text.data() + text.size(), d); // not strtod: no locale
    return d;
}

ordered_json read_json(const HostRead& r) {
    ordered_json values = ordered_json::array();
    for (float v : r.values)
        values.push_back(value_json(v));
    return {{"name", r.name}, {"site", r.site}, {"shape", r.shape}, {"values", values}};
}

ordered_json event_json(const TraceEvent& e) {
    return {{"index", e.index},
            {"plan", id_or_null(e.plan)},
            {"key", e.key},
            {"kind", event_kind_name(e.kind)},
            {"op", e.op},
            {"site", e.site},
            {"tokens_in", e.tokens_in},
            {"tokens_out", e.tokens_out},
            {"values_in", e.values_in},
            {"values_out", e.values_out},
            {"data_from", ids(e.data_from)},
            {"token_from", ids(e.token_from)},
            {"loc", id_or_null(e.loc)},
            {"loc_version", e.loc_version},
            {"loc_logical_version", e.loc_logical_version},
            {"base", id_or_null(e.base)},
            {"base_commit", e.base_commit},
            {"storage", id_or_null(e.storage)},
            {"bytes", e.bytes},
            {"detail", e.detail}};
}

ordered_json plan_json(const PlanRecord& p) {
    return {{"index", p.index},
            {"reason", p.reason},
            {"first_event", p.first_event},
            {"end_event", p.end_event},
            {"ops", p.ops},
            {"pool_bytes", p.pool_bytes},
            {"live_peak_bytes", p.live_peak_bytes},
            {"planned_bytes", p.planned_bytes},
            {"buffers", p.buffers}};
}

} // namespace

Digest reads_hash(const std::vector<HostRead>& reads) {
    Sha256 h;
    for (const HostRead& r : reads) {
        std::string line = fmt::format("{} {} ", r.name, shape_text(r.shape));
        for (float v : r.values)
            line += fmt::format("{:08x}", std::bit_cast<uint32_t>(v));
        line += "\n";
        h.update(reinterpret_cast<const uint8_t*>(line.data()), line.size());
    }
    return h.finish();
}

ProgramRun run_lazy_program(const LazyProgram& program, EngineOptions options,
                            const ReadCallback& on_read, const Progress& progress) {
    return Runner(options, on_read, progress).run(program);
}

ProgramRun run_lazy_program_to_failure(const LazyProgram& program, EngineOptions options,
                                       const ReadCallback& on_read, const Progress& progress) {
    return Runner(options, on_read, progress).run_to_failure(program);
}

std::string program_run_json(const LazyProgram& program, const ProgramRun& run) {
    const EngineStats& s = run.stats;
    ordered_json reads = ordered_json::array();
    for (const HostRead& r : run.reads)
        reads.push_back(read_json(r));
    const ordered_json j = {{"format", "tmmu-lazy-run"},
                            {"version", 1},
                            {"program", program.name},
                            {"eager", run.eager},
                            {"checkpoint_policy", checkpoint_policy_name(run.checkpoint)},
                            {"compile", run.compile},
                            {"statements", program.statement_count},
                            {"events", s.events},
                            {"plans", s.plans},
                            {"steps", s.steps},
                            {"pool_peak_bytes", s.pool_peak_bytes},
                            {"planned_peak_bytes", s.planned_peak_bytes},
                            {"buffers_allocated", s.buffers_allocated},
                            {"buffers_reused", s.buffers_reused},
                            {"finalized", s.finalized},
                            {"checkpoints", s.checkpoints},
                            {"recomputed_ops", s.recomputed_ops},
                            {"kernels", s.kernels},
                            {"compiled_calls", s.compiled_calls},
                            {"cache_hits", s.cache_hits},
                            {"cache_misses", s.cache_misses},
                            {"fused_groups", s.fused_groups},
                            {"fused_ops", s.fused_ops},
                            {"compiled_planned_bytes", s.compiled_planned_bytes},
                            {"result_hash", to_hex(run.result_hash)},
                            {"trace_hash", to_hex(run.trace_hash)},
                            {"reads", reads}};
    return json_text(j, 2) + "\n";
}

std::string lazy_trace_json(const LazyProgram& program, const ProgramRun& run) {
    ordered_json events = ordered_json::array(), plans = ordered_json::array();
    for (const TraceEvent& e : run.trace.events)
        events.push_back(event_json(e));
    for (const PlanRecord& p : run.trace.plans)
        plans.push_back(plan_json(p));
    const ordered_json j = {
        {"format", "tmmu-lazy-trace"},          {"version", 1},     {"program", program.name},
        {"trace_hash", to_hex(run.trace_hash)}, {"events", events}, {"plans", plans}};
    return json_text(j, 1) + "\n";
}

} // namespace tmmu::lazy
