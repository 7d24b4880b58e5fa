// tmmu: the command line over libtmmu.
#include "commands.h"

#include "core/failure.h"
#include "interrupt.h"

#include <cstdio>
#include <fmt/format.h>
#include <string_view>

namespace {

constexpr const char* kUsage = R"(usage: tmmu COMMAND [options]   (tmmu COMMAND --help for details)

commands:
  plan [MODEL]       plan tensor memory and print a summary (default: bundled GPT-2 small)
  validate FILE      check a model (IR JSON, config, CSV) or a plan checkpoint
  gen gpt2|llama CONFIG --out FILE   expand a transformer config into native IR JSON
  bench              benchmark every strategy on the shared instances and random problems
  strategies         list the offset strategies
  session list|show|replay|delete|diff   recorded planning runs (plan --record)
  export ID --format html|pdf|csv|json|chrome-trace   a recorded session as a report or data

Exit status: 0 success; 1 the plans differ (session replay, diff); 2 usage error;
3 internal error (a bug in tmmu: please report it); 10 + failure code otherwise (see README).
Ctrl+C cancels long work: CANCELLED, exit status 19.
)";

} // namespace

int main(int argc, char** argv) {
    using namespace tmmu::cli;
    if (argc < 2) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    std::string_view command = argv[1];
    install_interrupt_handlers();
    Args args(std::vector<std::string>(argv + 2, argv + argc));
    try {
        if (command == "plan") return cmd_plan(args);
        if (command == "validate") return cmd_validate(args);
        if (command == "gen") return cmd_gen(args);
        if (command == "bench") return cmd_bench(args);
        if (command == "strategies") return cmd_strategies(args);
        if (command == "session") return cmd_session(args);
        if (command == "export") return cmd_export(args);
        if (command == "--version") {
            fmt::print("tmmu {}\n", TMMU_VERSION);
            return 0;
        }
        if (command == "--help" || command == "-h" || command == "help") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        fmt::print(stderr, "tmmu: unknown command '{}'\n{}", command, kUsage);
        return 2;
    } catch (const tmmu::Failure& f) {
        fmt::print(stderr, "tmmu: {}\n", f.what());
        return tmmu::failure_exit_status(f.code());
    } catch (const std::exception& e) {
        fmt::print(stderr, "tmmu: internal error: {}\n", e.what());
        return tmmu::kInternalErrorExitStatus;
    } catch (...) {
        fmt::print(stderr, "tmmu: internal error: an exception that is not a std::exception\n");
        return tmmu::kInternalErrorExitStatus;
    }
}
