#pragma once
#include "args.h"
#include "plan_choices.h"

#include "models/transformer_config.h"
#include "plan/planner.h"
#include "plan/replan.h"
#include "runtime/run_record.h"
#include "source/model_source.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace tmmu::cli {

int cmd_plan(Args& args);
int cmd_validate(Args& args);
int cmd_gen(Args& args);
int cmd_bench(Args& args);
int cmd_bench_run(Args& args);
int cmd_strategies(Args& args);
int cmd_session(Args& args);
int cmd_export(Args& args);  // cmd_export.cpp
int cmd_compile(Args& args); // cmd_compile.cpp
int cmd_run(Args& args);     // cmd_run.cpp
int cmd_devices(Args& args); // cmd_devices.cpp
int cmd_lazy(Args& args);    // cmd_lazy.cpp

// `tmmu lazy traces`, `replay ID`, `diff A B` and `export ID` on the sessions database `db`
// (cmd_lazy_traces.cpp); `tmmu lazy` dispatches to them and prints their help.
extern const char* const kLazyTracesHelp;
extern const char* const kLazyReplayHelp;
extern const char* const kLazyDiffHelp;
extern const char* const kLazyExportHelp;
int lazy_traces(const std::string& db, size_t limit, const std::optional<std::string>& json_out);
int lazy_replay(const std::string& db, const std::string& id_text);
int lazy_diff(const std::string& db, const std::string& a_text, const std::string& b_text);
int lazy_export(const std::string& db, const std::string& id_text, const std::string& out);

// `plan --record [--title T] [--tag X]... [--notes N] [--sessions PATH]` (cmd_session.cpp).
struct RecordOptions {
    bool record = false;
    std::string title, notes;
    std::vector<std::string> tags;
    std::optional<std::string> sessions; // database path; default_sessions_path() otherwise
};
RecordOptions record_options_from(Args& args);
// --sessions PATH, else default_sessions_path().
std::string sessions_db_path(const std::optional<std::string>& given);
// A positive session id; InvalidArgument naming ID otherwise.
int64_t parse_session_id(const std::string& text);
// Records the run when asked, with its iterations for a run over them; returns the new
// session's id.
std::optional<int64_t> record_if_asked(const RecordOptions& rec, const LoadedModel& model,
                                       const ModelRequest& request, const PlanOptions& options,
                                       const Plan& plan,
                                       std::optional<IterationHistory> iterations = std::nullopt);

// Shared option handling: --mode --batch --seq, and --strategy --budget --arena --align --route
// --replay-token (turned into PlanOptions by app::make_plan_options once the model is loaded).
// --mode, --batch and --seq, and which of them were given: they apply only to some models.
struct RequestChoice {
    ModelRequest request;
    const char* given_mode = nullptr;    // "--mode" when given
    const char* given_shape = nullptr;   // "--batch" or "--seq" when given
    const char* given_binding = nullptr; // "--dim", "--input-shape" or "--no-aliasing" when given
};
RequestChoice model_request_from(Args& args);
// InvalidArgument for an option the loaded model cannot use: --mode on an offset problem,
// --batch or --seq on anything but a transformer config, --dim on a model without symbolic or
// dynamic dimensions, --input-shape and --no-aliasing on anything but an ONNX model.
void check_request_applies(const RequestChoice& choice, const LoadedModel& model);

// Whether one of the named output options is "-" (standard output). Two of them would
// interleave on one stream, so that is InvalidArgument naming the second.
struct OutputOption {
    const char* name;
    const std::optional<std::string>& path;
};
bool sends_one_output_to_stdout(std::initializer_list<OutputOption> outputs);
app::PlanChoices plan_choices_from(Args& args);
// The optional CONFIG argument of the runtime commands (default: the bundled GPT-2 small);
// INVALID_ARGUMENT naming the file when it is no GPT-2, Llama, Mistral or Qwen2 config.json.
struct ConfigFile {
    std::string path, text;
    TransformerConfig config;
};
ConfigFile config_argument(Args& args, const char* command);

// A run as `tmmu run` prints it (cmd_run.cpp).
void print_run(const runtime::RunRecord& run);
// Runs a recorded run again and prints "identical" or the first step that differs; returns the
// exit status (1 when they differ).
int replay_run(const runtime::RunRecord& recorded, const Progress& progress);

} // namespace tmmu::cli
