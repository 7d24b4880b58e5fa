// `tmmu devices`: the backends this build has and the devices this machine offers them.
#include "commands.h"

#include "backend_registry.h"
#include "io/file_io.h"

#include <cstdio>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tmmu::cli {
namespace {

constexpr const char* kHelp = R"(usage: tmmu devices [--json OUT|-]

Lists every backend (cpu, vulkan, cuda): whether this build has it, whether this machine has a
device for it, each device on one line, whether `tmmu run --backend` can use it, and why not.
Always exits 0: a missing driver or device is an answer, not an error.
  --json OUT|-   write the inventory as JSON (resources/docs/outputs.md) to OUT or stdout
)";

std::string devices_json(const std::vector<app::BackendStatus>& all) {
    nlohmann::ordered_json backends = nlohmann::ordered_json::array();
    for (const app::BackendStatus& s : all) {
        nlohmann::ordered_json devices = nlohmann::ordered_json::array();
        for (const app::BackendDevice& d : s.devices)
            devices.push_back({{"name", d.name},
                               {"type", d.type},
                               {"memory_bytes", d.memory_bytes},
                               {"description", d.line}});
        auto or_null = [](const std::string& text) {
            return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
        };
        backends.push_back({{"name", s.name},
                            {"label", s.label},
                            {"built", s.built},
                            {"available", s.available},
                            {"runnable", s.runnable},
                            {"version", or_null(s.version)},
                            {"devices", devices},
                            {"unavailable_reason", or_null(s.unavailable_reason)},
                            {"not_runnable_reason", or_null(s.not_runnable_reason)}});
    }
    nlohmann::ordered_json j = {{"format", "tmmu-devices"}, {"version", 1}, {"backends", backends}};
    return j.dump(2) + "\n";
}

void print_devices(const std::vector<app::BackendStatus>& all) {
    for (const app::BackendStatus& s : all) {
        std::string state = s.built ? "built" : "not built";
        if (s.built) state += s.available ? ", available" : ", unavailable";
        if (s.available) state += s.runnable ? ", runnable" : ", not runnable";
        fmt::print("{:<7} {}\n", s.name, state);
        if (!s.version.empty()) fmt::print("  {}\n", s.version);
        for (size_t i = 0; i < s.devices.size(); ++i)
            fmt::print("  device {}: {}\n", i, s.devices[i].line);
        if (!s.available)
            fmt::print("  why unavailable: {}\n", s.unavailable_reason);
        else if (!s.runnable)
            fmt::print("  why not runnable: {}\n", s.not_runnable_reason);
    }
}

} // namespace

int cmd_devices(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    const auto json_out = args.value("--json");
    args.positionals(0, 0);
    const std::vector<app::BackendStatus> all = app::probe_backends();
    if (!json_out || *json_out != "-") print_devices(all);
    if (json_out) write_output(*json_out, devices_json(all));
    return 0;
}

} // namespace tmmu::cli
