#pragma once
// A small command-line parser: `--name value`, `--name=value`, boolean `--flag`, positionals.
// Unknown options are errors, so typos never pass silently.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tmmu::cli {

class Args {
  public:
    Args(std::vector<std::string> argv) : rest_(std::move(argv)) {}

    // A single-valued option; giving it twice is an error.
    std::optional<std::string> value(std::string_view name);
    std::vector<std::string> values(std::string_view name); // repeated option
    bool flag(std::string_view name);
    uint64_t number(std::string_view name, uint64_t fallback);
    // A count that must be at least 1 when given (0 is refused, not read as "no limit").
    std::optional<uint64_t> count(std::string_view name);
    // The remaining positionals; throws INVALID_ARGUMENT for any option not consumed and for a
    // count outside [min, max].
    std::vector<std::string> positionals(size_t min, size_t max);

  private:
    std::optional<std::string> take_first(std::string_view name);
    std::vector<std::string> rest_;
};

} // namespace tmmu::cli
