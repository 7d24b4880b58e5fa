// tmmu: the command line over libtmmu.
#include "commands.h"

#include "core/failure.h"
#include "interrupt.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <string_view>
#include <system_error>

namespace {

constexpr const char* kUsage = R"(usage: tmmu COMMAND [options]   (tmmu COMMAND --help for details)

commands:
  plan [MODEL]       plan tensor memory and print a summary (default: bundled GPT-2 small)
  validate FILE      check a model (IR JSON, config, CSV) or a plan checkpoint
  gen gpt2|llama CONFIG --out FILE   expand a transformer config into native IR JSON
  bench              benchmark every strategy on the shared instances and random problems
  strategies         list the offset strategies
  session list|show|replay|edit|delete|diff   recorded planning runs (plan --record);
                     session runs|run|replay-run   recorded model runs (run --record)
  export ID --format html|pdf|csv|json|chrome-trace   a recorded session as a report or data
  compile [CONFIG]   a transformer config as the runtime's execution plan (instructions,
                     registers, liveness); validate reads the plan back
  run [CONFIG]       execute it on a backend (cpu, vulkan, cuda): prefill, greedy decode, timings,
                     parity
  bench-run [CONFIG] a backend's runs against what its device can do (bandwidth, matrix
                     rate, launches per token)
  devices            the backends (cpu, vulkan, cuda), this machine's devices for each, and
                     why one cannot run
  lazy run PROGRAM   run a lazy program (JSON statements over tensors) on the token/effect
                     engine: reads, trace events, plans, steps and memory
  lazy traces|replay ID   lazy traces recorded by lazy run --record; replay compares hashes
  --version          the version; help (or --help) this list

Exit status: 0 success; 1 the plans or traces differ (session replay, diff, lazy replay); 2 usage error;
3 internal error (a bug in tmmu: please report it); 10 + failure code otherwise (see README).
Ctrl+C cancels long work: CANCELLED, exit status 19.
)";

int run_command(std::string_view command, tmmu::cli::Args& args) {
    using namespace tmmu::cli;
    if (command == "plan") return cmd_plan(args);
    if (command == "validate") return cmd_validate(args);
    if (command == "gen") return cmd_gen(args);
    if (command == "bench") return cmd_bench(args);
    if (command == "strategies") return cmd_strategies(args);
    if (command == "session") return cmd_session(args);
    if (command == "export") return cmd_export(args);
    if (command == "compile") return cmd_compile(args);
    if (command == "run") return cmd_run(args);
    if (command == "bench-run") return cmd_bench_run(args);
    if (command == "devices") return cmd_devices(args);
    if (command == "lazy") return cmd_lazy(args);
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
}

// What is still buffered for stdout must arrive too: a reader that went away (`tmmu plan | head
// -1`), a full disk or a closed descriptor fails the command, not just the last fputs.
void flush_stdout() {
    // A failed earlier flush leaves the error flag set and the buffer empty.
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
        tmmu::fail(tmmu::FailureCode::IoError, "stdout",
                   fmt::format("write failed: {}", std::strerror(errno != 0 ? errno : EIO)));
}

int report(const tmmu::Failure& f) {
    fmt::print(stderr, "tmmu: {}\n", f.what());
    return tmmu::failure_exit_status(f.code());
}

int internal_error(std::string_view what) {
    fmt::print(stderr, "tmmu: internal error: {}\n", what);
    return tmmu::kInternalErrorExitStatus;
}

bool is_output_error(const std::error_code& code) {
    return code == std::errc::broken_pipe || code == std::errc::no_space_on_device ||
           code == std::errc::io_error || code == std::errc::bad_file_descriptor;
}

} // namespace

int main(int argc, char** argv) {
    using namespace tmmu::cli;
    if (argc < 2) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    std::string_view command = argv[1];
    install_interrupt_handlers();
    // A closed pipe is an IO_ERROR naming the output (exit 16), not a silent death by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    Args args(std::vector<std::string>(argv + 2, argv + argc));
    try {
        const int status = run_command(command, args);
        flush_stdout();
        return status;
    } catch (const tmmu::Failure& f) {
        return report(f);
    } catch (const std::system_error& e) {
        // fmt::print throws this when stdout cannot take what is printed.
        if (!is_output_error(e.code())) return internal_error(e.what());
        return report(tmmu::Failure(tmmu::FailureCode::IoError, "stdout",
                                    fmt::format("write failed: {}", e.code().message())));
    } catch (const std::exception& e) {
        return internal_error(e.what());
    } catch (...) {
        return internal_error("an exception that is not a std::exception");
    }
}
