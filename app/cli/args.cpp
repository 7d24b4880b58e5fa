#include "args.h"

#include "core/failure.h"

#include <charconv>
#include <fmt/format.h>

namespace tmmu::cli {

std::optional<std::string> Args::take_first(std::string_view name) {
    for (size_t i = 0; i < rest_.size(); ++i) {
        const std::string& a = rest_[i];
        if (a == name) {
            if (i + 1 >= rest_.size())
                fail(FailureCode::InvalidArgument, std::string(name), "expects a value");
            std::string v = rest_[i + 1];
            rest_.erase(rest_.begin() + long(i), rest_.begin() + long(i) + 2);
            return v;
        }
        if (a.size() > name.size() && a.compare(0, name.size(), name) == 0 &&
            a[name.size()] == '=') {
            std::string v = a.substr(name.size() + 1);
            rest_.erase(rest_.begin() + long(i));
            return v;
        }
    }
    return std::nullopt;
}

std::optional<std::string> Args::value(std::string_view name) {
    std::optional<std::string> v = take_first(name);
    if (v && take_first(name))
        fail(FailureCode::InvalidArgument, std::string(name), "given more than once");
    return v;
}

std::vector<std::string> Args::values(std::string_view name) {
    std::vector<std::string> all;
    while (auto v = take_first(name))
        all.push_back(*v);
    return all;
}

bool Args::flag(std::string_view name) {
    for (size_t i = 0; i < rest_.size(); ++i)
        if (rest_[i] == name) {
            rest_.erase(rest_.begin() + long(i));
            return true;
        }
    return false;
}

namespace {

uint64_t parse_unsigned(std::string_view name, const std::string& text) {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size())
        fail(FailureCode::InvalidArgument, std::string(name),
             fmt::format("expects an unsigned integer, got '{}'", text));
    return n;
}

} // namespace

uint64_t Args::number(std::string_view name, uint64_t fallback) {
    auto v = value(name);
    return v ? parse_unsigned(name, *v) : fallback;
}

std::optional<uint64_t> Args::count(std::string_view name) {
    auto v = value(name);
    if (!v) return std::nullopt;
    const uint64_t n = parse_unsigned(name, *v);
    if (n == 0)
        fail(FailureCode::InvalidArgument, std::string(name),
             "expects a count of at least 1, got 0 (leave it out for no limit)");
    return n;
}

std::vector<std::string> Args::positionals(size_t min, size_t max) {
    for (const auto& a : rest_)
        if (a.size() > 1 && a[0] == '-')
            fail(FailureCode::InvalidArgument, a, "unknown option (see --help)");
    if (rest_.size() < min || rest_.size() > max)
        fail(FailureCode::InvalidArgument, "arguments",
             fmt::format("expected {} to {} positional arguments, got {} (see --help)", min, max,
                         rest_.size()));
    return rest_;
}

} // namespace tmmu::cli
