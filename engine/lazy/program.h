#pragma once
// Lazy programs: "tmmu-lazy-program" JSON, version 1 (resources/docs/lazy-programs.md, schema in
// resources/schema/tmmu-lazy-program.schema.json). A program is a list of statements over named
// tensors (let bindings, ops, in-place updates, backward, reads, mark_step, optimizers, repeat,
// tidy) that drives the token/effect engine exactly as a C++ caller would, so the CLI, the
// tests and the studio can run the engine without writing C++.
//
// Loading is strict and checks everything it can before anything runs: unknown or duplicate
// keys, wrong types, unknown names, wrong arity, bad or overflowing shapes and value counts fail
// with INVALID_IR_SHAPES naming the statement and field ("program[7].body[2].args[1]"). What only
// running can tell (a shape mismatch inside an op, a rule of the engine) fails while running at
// the statement's site ("program[7].body[2] (iteration 3)").
#include "core/digest.h"
#include "core/failure.h"
#include "core/progress.h"
#include "lazy/engine.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::lazy {

inline constexpr std::string_view kLazyProgramFormat = "tmmu-lazy-program";
inline constexpr int kLazyProgramVersion = 1;

enum class StatementKind : uint8_t {
    Tensor,     // let NAME = a constant
    Param,      // let NAME = a parameter (a leaf that requires grad)
    Op,         // let NAME = op(args), or an in-place op
    Grad,       // let NAME = NAME's grad
    Sgd,        // let NAME = an SGD optimizer
    AdamW,      // let NAME = an AdamW optimizer
    Backward,   // backward from a scalar loss
    Read,       // host readback of tensors, recorded as results
    MarkStep,   // the step barrier
    Step,       // an optimizer's update
    ZeroGrad,   // an optimizer's (or a list of tensors') grads to zero or null
    Repeat,     // the body, count times
    Tidy,       // the body inside engine.tidy, keeping the named tensors
    Dispose,    // dispose tensors
    RetainGrad, // keep a non-leaf tensor's grad
    ManualSeed, // the RNG's seed, restarting its draws
    Checkpoint, // the body checkpointed: its saved values recomputed by backward
    Compile,    // the body as a compiled function's call (run plainly without --compile)
    Coercion,   // a tensor named where a number is needed: TensorHostCoercionError when reached
};

// The order matters: the runner tells the kinds apart by range (unary elementwise ops up to
// Silu, binary ones from Add to Ge, in-place ops from AddInPlace on).
enum class ProgramOp : uint8_t {
    // unary
    Neg,
    Exp,
    Log,
    Relu,
    Sigmoid,
    Tanh,
    Sqrt,
    Abs,
    Rsqrt,
    Sin,
    Cos,
    Floor,
    Ceil,
    Round,
    Gelu,
    Silu,
    // binary, broadcasting
    Add,
    Sub,
    Mul,
    Div,
    Maximum,
    Minimum,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    // matmul, reductions, a fresh copy
    Matmul,
    Sum,
    Mean,
    Copy,
    // random: a keyed uniform draw, inverted dropout
    Rand,
    Dropout,
    // views
    Slice,
    Transpose,
    Reshape,
    // in place: add_ sub_ mul_ copy_ fill_
    AddInPlace,
    SubInPlace,
    MulInPlace,
    CopyInPlace,
    FillInPlace,
};
// clang-format on
std::string_view program_op_name(ProgramOp op); // as programs spell it: "add_", "matmul"

// An op argument: a tensor by name, or a number (a scalar operand).
struct Operand {
    std::string tensor; // empty for a number
    float number = 0;
};

// How a tensor or parameter gets its values. Uniform draws are splitmix64-based, so the same
// seed gives the same values on every machine (lazy-programs.md says how).
struct TensorInit {
    enum class Kind : uint8_t { Values, Fill, Arange, Uniform } kind = Kind::Fill;
    std::vector<float> values; // Values
    float fill = 0;            // Fill (zeros: 0, ones: 1)
    float start = 0, step = 1; // Arange: start + i * step
    float low = 0, high = 1;   // Uniform: [low, high)
    uint64_t seed = 0;         // Uniform
};

struct Statement {
    StatementKind kind = StatementKind::MarkStep;
    std::string path; // "program[7]", "program[7].body[2]"
    std::string let;  // the name bound (Tensor, Param, Op, Grad, Sgd, AdamW)
    // Backward, Grad, Dispose, RetainGrad: one name; Read, ZeroGrad (tensors), Tidy (keep),
    // Compile (returns): the names; Step, ZeroGrad (optimizer): the optimizer; Sgd, AdamW: the
    // parameters.
    std::vector<std::string> names;
    bool names_optimizer = false; // ZeroGrad: names[0] is an optimizer

    Shape shape; // Tensor, Param, Rand; Reshape's target
    TensorInit init;

    ProgramOp op = ProgramOp::Add;
    std::vector<Operand> args;
    std::vector<int64_t> dims; // Sum, Mean (empty: all)
    bool keepdim = false;
    int64_t dim = 0, start = 0, end = 0, step = 1; // Slice (end defaults to the dim's size)
    bool end_given = false;
    int64_t dim0 = 0, dim1 = 1; // Transpose
    float p = 0;                // Dropout's probability
    uint64_t seed = 0;          // ManualSeed

    AdamWOptions optimizer;  // Sgd, AdamW (SGD reads only lr)
    bool set_to_null = true; // ZeroGrad

    uint64_t count = 0;          // Repeat
    std::vector<Statement> body; // Repeat, Tidy, Checkpoint, Compile
    std::string function;        // Compile: the compiled function's name ("returns": names)

    std::string coerced_field, coerced_tensor; // Coercion: where and which tensor
};

// A parsed program, not yet run.
struct LazyProgram {
    std::string name, description;
    std::string origin; // the file it came from ("" for text)
    std::vector<Statement> program;
    uint64_t statement_count = 0; // every statement, bodies included
};

// Reads and parses a file; IO_ERROR names the path when it cannot be read, parse failures are
// prefixed with it. A program without "name" is named after the file's stem.
LazyProgram load_lazy_program(const std::string& path);
// Parses JSON text; `where` (a file name, "<clipboard>") prefixes failure locations.
LazyProgram parse_lazy_program(std::string_view json, std::string where);
// Cheap sniff for format detection: a JSON object mentioning "tmmu-lazy-program" near its start.
bool looks_like_lazy_program(std::string_view text);

// A `read` statement's result.
struct HostRead {
    std::string name; // the tensor's name in the program
    std::string site; // the statement that read it
    Shape shape;
    std::vector<float> values;
};

struct ProgramRun {
    bool eager = false;                                        // run with EngineOptions::eager
    CheckpointPolicy checkpoint = CheckpointPolicy::Recompute; // EngineOptions::checkpoint
    bool compile = false;                                      // EngineOptions::compile
    std::vector<HostRead> reads;
    Trace trace;
    EngineStats stats;
    Digest trace_hash{};
    Digest result_hash{}; // every read: name, shape and each value's bits (reads_hash)
    // run_lazy_program_to_failure only: the error that stopped the program ("" when none).
    std::string failure;
    FailureCode failure_code = FailureCode::InvalidArgument;
};

// Runs the program on a fresh engine. Failures (the engine's named errors, a shape an op
// refuses) propagate as Failure naming the statement's site. `on_read`, when given, sees each
// read as it happens, so a caller can show what a program read before a later statement fails.
// `progress`'s cancel flag is polled before each statement: Failure(Cancelled) at its site.
using ReadCallback = std::function<void(const HostRead&)>;
ProgramRun run_lazy_program(const LazyProgram& program, EngineOptions options = {},
                            const ReadCallback& on_read = {}, const Progress& progress = {});

// The same, but a Failure while running ends the run instead of escaping: the result holds the
// trace up to the error and the error's text (the studio shows where a program broke a rule).
// Load errors cannot happen here: the program is already parsed. Cancellation still escapes:
// a run the user stopped is no result.
ProgramRun run_lazy_program_to_failure(const LazyProgram& program, EngineOptions options = {},
                                       const ReadCallback& on_read = {},
                                       const Progress& progress = {});

// SHA-256 over every read in order: its tensor's name, shape and values as f32 bit patterns. Runs
// with and without --compile, eager or lazy, must agree on it.
Digest reads_hash(const std::vector<HostRead>& reads);

// "recompute", "keep" (tmmu lazy run --checkpoint-policy), and back; nullopt for another name.
std::string_view checkpoint_policy_name(CheckpointPolicy p);
std::optional<CheckpointPolicy> checkpoint_policy_from(std::string_view name);

// `tmmu lazy run --json`: counters, the trace hash and every read (resources/docs/outputs.md).
std::string program_run_json(const LazyProgram& program, const ProgramRun& run);
// `tmmu lazy run --trace`: every event and plan record with all their fields.
std::string lazy_trace_json(const LazyProgram& program, const ProgramRun& run);

} // namespace tmmu::lazy
