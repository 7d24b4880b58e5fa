#pragma once
// Which part of a model's schedule runs: the IR's phases (forward, backward, optimizer) decide
// which nodes a mode executes, so the mode belongs to the IR; liveness, the planner, model
// generators and loaders all take it from here.
#include <cstdint>
#include <optional>
#include <string_view>

namespace tmmu {

// inference: forward nodes only; saved_for_backward is ignored.
// forward:   forward nodes only; saved_for_backward tensors are retained to the last step,
//            because the backward pass that reads them runs after this one.
// training:  all nodes (forward, backward, optimizer); saved_for_backward tensors live through
//            their last backward consumer. The seed calls this mode "backward".
enum class Mode : uint8_t { Inference, Forward, Training };

std::string_view mode_name(Mode m);
// "none" where there is no mode (offset-assignment problems): the one spelling of "no mode" in
// every output, text and JSON alike (the CBOR checkpoint, read back by tmmu, keeps null).
std::string_view mode_name(const std::optional<Mode>& m);
std::optional<Mode> parse_mode(std::string_view s); // also accepts "backward" for training

} // namespace tmmu
