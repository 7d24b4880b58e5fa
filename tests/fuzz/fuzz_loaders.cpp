// A seeded mutation fuzzer for everything tmmu reads from a file: model files (IR JSON,
// transformer configs, offset-problem CSVs, ONNX models, through load_model's detection),
// checkpoints and sessions databases, lazy programs (parsed, and run when small). Each input is a
// mutated seed; the loader must accept it or throw tmmu::Failure naming where. Any other exception
// is a finding; a crash is one too, caught by ASan/UBSan in the sanitized build (the input is in
// --current when it happens).
//
//   tmmu-fuzz-loaders --resources DIR --corpus DIR [--seconds S] [--iterations N] [--seed S]
//                     [--current FILE]
//
// Inputs in --corpus (named <kind>-*.bin: model, checkpoint, sessions, lazy) run first, every time:
// they are what earlier runs found, kept so the bugs stay fixed. Exit 0 when nothing was found.
#include "session_store.h"

#include "core/failure.h"
#include "io/checkpoint.h"
#include "io/file_io.h"
#include "lazy/program.h"
#include "source/model_source.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace tmmu;

namespace {

enum class Kind { Model, Checkpoint, Sessions, LazyProgram };
constexpr Kind kKinds[] = {Kind::Model, Kind::Checkpoint, Kind::Sessions, Kind::LazyProgram};

const char* kind_name(Kind k) {
    switch (k) {
    case Kind::Model:
        return "model";
    case Kind::Checkpoint:
        return "checkpoint";
    case Kind::Sessions:
        return "sessions";
    case Kind::LazyProgram:
        return "lazy";
    }
    return "?";
}

struct Options {
    std::string resources, corpus, current = "fuzz-current.bin", scratch;
    double seconds = 20;
    uint64_t iterations = UINT64_MAX;
    uint64_t seed = 1;
};

// Bigger graphs than this are loaded but not planned, so one input cannot take the whole run.
constexpr size_t kMaxPlannedItems = 5000;

void load_and_plan_model(const std::string& path) {
    ModelRequest request;
    request.mode = Mode::Training;
    request.batch = 1;
    request.seq = 8; // transformer configs expand small
    LoadedModel m = load_model(path, request);
    const size_t items = m.graph ? m.graph->tensors.size() : m.problem->problem.buffers.size();
    if (items > kMaxPlannedItems) return;
    PlanOptions options;
    options.strategy = "greedy-size";
    for (Mode mode : {Mode::Inference, Mode::Training})
        (void)plan_model(m, mode, options, Progress{});
}

// A checkpoint that decodes must survive a round trip with the same plan hash, and the file
// reader (which `tmmu validate` uses) must agree with the decoder on the same bytes.
void decode_checkpoint_file(const std::string& path) {
    const Plan p = read_checkpoint_file(path);
    const std::vector<uint8_t> again = encode_checkpoint(p);
    if (decode_checkpoint(again.data(), again.size()).plan_hash != p.plan_hash)
        throw std::logic_error("checkpoint round trip changed the plan hash");
    const std::string bytes = read_text_file(path);
    if (decode_checkpoint(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()).plan_hash !=
        p.plan_hash)
        throw std::logic_error("the file reader and the decoder disagree");
}

// Plain writes: the inputs are scratch, so write_output's fsync would only slow the fuzzing.
void write_plain(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

// Statements a program executes, repeats multiplied out (saturating).
uint64_t executed_statements(const std::vector<lazy::Statement>& body) {
    uint64_t n = 0;
    for (const lazy::Statement& st : body) {
        const uint64_t inner = st.kind == lazy::StatementKind::Repeat
                                   ? st.count * executed_statements(st.body)
                                   : 1 + executed_statements(st.body);
        n = std::min<uint64_t>(n + inner, UINT32_MAX);
    }
    return n;
}

// Parses; runs too when the program is small (a mutated repeat count can ask for millions of
// steps), to the end or to the engine's named error.
void load_and_run_lazy_program(const std::string& path) {
    const lazy::LazyProgram program = lazy::load_lazy_program(path);
    if (executed_statements(program.program) > 2000) return;
    const lazy::ProgramRun run = lazy::run_lazy_program_to_failure(program);
    if (!run.failure.empty() && run.failure.find(" at ") == std::string::npos)
        throw std::logic_error("a lazy program failed naming no place: " + run.failure);
}

void open_sessions(const std::string& path) {
    sessions::SessionStore store(path, sessions::StoreAccess::ExistingOnly);
    for (const sessions::SessionSummary& s : store.list())
        (void)store.load(s.id);
}

struct Outcome {
    bool accepted = false; // loaded (and planned, replayed...) without a failure
    std::string finding;   // what went wrong beyond a proper refusal; "" when nothing
};

// Runs one input through its loader.
Outcome try_input(Kind kind, const std::string& bytes, const Options& o) {
    const std::string path =
        (fs::path(o.scratch) / fmt::format("input.{}", kind_name(kind))).string();
    try {
        fs::remove(path);
        fs::remove(path + "-wal");
        fs::remove(path + "-shm");
        write_plain(path, bytes);
        switch (kind) {
        case Kind::Model:
            load_and_plan_model(path);
            break;
        case Kind::Checkpoint:
            decode_checkpoint_file(path);
            break;
        case Kind::Sessions:
            open_sessions(path);
            break;
        case Kind::LazyProgram:
            load_and_run_lazy_program(path);
            break;
        }
    } catch (const Failure& f) {
        if (f.where().empty())
            return {false, fmt::format("a Failure naming no place: {}", f.what())};
        return {};
    } catch (const std::exception& e) {
        return {false, fmt::format("not a tmmu::Failure: {}", e.what())};
    }
    return {true, {}};
}

// The byte-level mutations, each small; tokens aim at number parsing and structure.
class Mutator {
  public:
    explicit Mutator(uint64_t seed) : rng_(seed) {}

    std::string mutate(const std::string& seed, const std::vector<std::string>& others) {
        std::string s = seed;
        const int n = 1 + int(below(4));
        for (int i = 0; i < n; ++i)
            mutate_once(s, others);
        return s;
    }

  private:
    uint64_t below(uint64_t n) { return n ? rng_() % n : 0; }

    void mutate_once(std::string& s, const std::vector<std::string>& others) {
        static const char* kTokens[] = {"1e400",
                                        "18446744073709551616",
                                        "18446744073709551615",
                                        "-1",
                                        "4294967296",
                                        "0",
                                        "null",
                                        "[]",
                                        "{}",
                                        "\"\"",
                                        "NaN",
                                        ",",
                                        "\n",
                                        "\"id\"",
                                        "true",
                                        "9999999999"};
        static const char kBytes[] = {'\0', '\xff', '0', '9', '"', ',', '\n', '-', '[', '{', ':'};
        const size_t at = below(s.size() + 1);
        switch (below(8)) {
        case 0: // flip a bit
            if (!s.empty()) s[at % s.size()] = char(s[at % s.size()] ^ (1 << below(8)));
            break;
        case 1: // an interesting byte
            if (!s.empty()) s[at % s.size()] = kBytes[below(sizeof kBytes)];
            break;
        case 2: // delete a range
            s.erase(at, 1 + below(16));
            break;
        case 3: { // duplicate a range
            const std::string chunk = s.substr(at, 1 + below(32));
            s.insert(below(s.size() + 1), chunk);
            break;
        }
        case 4: // insert a token
            s.insert(at, kTokens[below(std::size(kTokens))]);
            break;
        case 5: { // replace a run of digits by a token
            size_t d = s.find_first_of("0123456789", at);
            if (d == std::string::npos) break;
            size_t e = s.find_first_not_of("0123456789", d);
            s.replace(d, (e == std::string::npos ? s.size() : e) - d,
                      kTokens[below(std::size(kTokens))]);
            break;
        }
        case 6: { // splice with another seed of the same kind
            const std::string& other = others[below(others.size())];
            s = s.substr(0, at) + other.substr(std::min(other.size(), below(other.size() + 1)));
            break;
        }
        default: // truncate
            s.resize(at);
            break;
        }
    }

    std::mt19937_64 rng_;
};

std::string read_all(const std::string& path) {
    return read_text_file(path);
}

// Seeds: the bundled models and a small CSV, and a checkpoint and a sessions database made
// here from the bundled example (so they always match this build's formats).
std::map<Kind, std::vector<std::string>> make_seeds(const Options& o) {
    std::map<Kind, std::vector<std::string>> seeds;
    const fs::path models = fs::path(o.resources) / "models";
    for (const char* f :
         {"examples/linear_chain.json", "examples/residual_blocks.json",
          "examples/views_and_inplace.json", "gpt2-small.json", "tinyllama-1.1b.json"})
        seeds[Kind::Model].push_back(read_all((models / f).string()));
    seeds[Kind::Model].push_back("id,lower,upper,size,alignment,offset\na,0,3,40,8,\nb,1,9,40,8,"
                                 "\nc,0,9,40,1,\nd,9,21,24,8,0\n");
    // ONNX models from Debian's libonnx-testdata when it is installed (the README's test command
    // installs it): control flow, a folded shape chain, views, attributes of every kind.
    const fs::path onnx = "/usr/share/libonnx-testdata/data/node";
    for (const char* f :
         {"test_if", "test_scan9_sum", "test_loop11", "test_reshape_extended_dims",
          "test_layer_normalization_4d_axis1_expanded", "test_conv_with_strides_padding"})
        if (fs::exists(onnx / f / "model.onnx"))
            seeds[Kind::Model].push_back(read_all((onnx / f / "model.onnx").string()));
    ModelRequest request;
    request.mode = Mode::Training;
    const LoadedModel m =
        load_model((models / "examples/views_and_inplace.json").string(), request);
    const Plan plan = plan_model(m, request.mode, PlanOptions{}, Progress{});
    const std::vector<uint8_t> ckpt = encode_checkpoint(plan);
    seeds[Kind::Checkpoint].emplace_back(ckpt.begin(), ckpt.end());
    const std::string db = (fs::path(o.scratch) / "seed.db").string();
    {
        sessions::SessionStore store(db);
        store.record(
            {sessions::input_from_model(m, request, PlanOptions{}), plan, "seed", "n", {"t"}});
    }
    seeds[Kind::Sessions].push_back(read_all(db));
    for (const char* f : {"mlp-training.json", "view-mutation.json", "saved-tensor-mutation.json",
                          "shared-base.json", "mlp-dropout.json", "checkpointed-mlp.json",
                          "transformer-block.json", "compiled-mlp.json"})
        seeds[Kind::LazyProgram].push_back(
            read_all((fs::path(o.resources) / "programs" / f).string()));
    return seeds;
}

bool parse_options(int argc, char** argv, Options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--resources")
            o.resources = value;
        else if (key == "--corpus")
            o.corpus = value;
        else if (key == "--current")
            o.current = value;
        else if (key == "--seconds")
            o.seconds = std::stod(value);
        else if (key == "--iterations")
            o.iterations = std::stoull(value);
        else if (key == "--seed")
            o.seed = std::stoull(value);
        else
            return false;
    }
    return argc % 2 == 1 && !o.resources.empty();
}

// The scratch directory goes, whatever ends the run (a seed that fails to build included).
struct ScratchDir {
    std::string path;
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

int fuzz(const Options& o) {
    int findings = 0;
    std::map<Kind, uint64_t> tried, accepted;
    auto run = [&](Kind kind, const std::string& bytes, const std::string& label) {
        write_plain(o.current, bytes); // a crash leaves the culprit here
        const Outcome r = try_input(kind, bytes, o);
        ++tried[kind];
        accepted[kind] += r.accepted;
        if (r.finding.empty()) return;
        ++findings;
        fmt::print(stderr, "FINDING ({} input, {}): {}\n  the input is in {}\n", kind_name(kind),
                   label, r.finding, o.current);
    };
    size_t kept = 0;
    if (!o.corpus.empty() && fs::is_directory(o.corpus))
        for (const auto& e : fs::directory_iterator(o.corpus))
            for (Kind kind : kKinds)
                if (e.path().filename().string().rfind(std::string(kind_name(kind)) + "-", 0) ==
                    0) {
                    run(kind, read_all(e.path().string()), e.path().filename().string());
                    ++kept;
                }
    const auto seeds = make_seeds(o);
    Mutator mutator(o.seed);
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::duration<double>(o.seconds);
    uint64_t i = 0;
    for (; i < o.iterations && std::chrono::steady_clock::now() < deadline && findings < 10; ++i) {
        const Kind kind = kKinds[i % std::size(kKinds)];
        const std::vector<std::string>& pool = seeds.at(kind);
        const std::string input = mutator.mutate(pool[(i / std::size(kKinds)) % pool.size()], pool);
        run(kind, input, fmt::format("seed {} iteration {}", o.seed, i));
    }
    fmt::print("{} kept and {} mutated inputs in {:.1f} s, {} findings\n", kept, i,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
               findings);
    for (Kind kind : kKinds)
        fmt::print("  {:<10} {:>7} tried, {:>7} accepted\n", kind_name(kind), tried[kind],
                   accepted[kind]);
    if (findings)
        fmt::print("Keep each finding: copy it into tests/fuzz/corpus/<kind>-<name>.bin, fix the "
                   "loader, and it runs first from then on.\n");
    return findings ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    bool usable = false;
    try {
        usable = parse_options(argc, argv, o);
    } catch (const std::exception&) { // a number that does not parse
    }
    if (!usable) {
        std::fputs("usage: tmmu-fuzz-loaders --resources DIR [--corpus DIR] [--seconds S] "
                   "[--iterations N] [--seed S] [--current FILE]\n",
                   stderr);
        return 2;
    }
    o.scratch = (fs::temp_directory_path() / fmt::format("tmmu-fuzz-{}", ::getpid())).string();
    const ScratchDir scratch{o.scratch};
    try {
        fs::create_directories(o.scratch);
        return fuzz(o);
    } catch (const std::exception& e) {
        fmt::print(stderr, "tmmu-fuzz-loaders: {}\n", e.what());
        return 3;
    }
}
