#pragma once
// A node's attributes as short text for the details panel: "axis = 1", "pads = [1, 1, 1, 1]",
// "value = int64[4] {1, 3, -1, 8}", "body = graph 'loop_body', 9 nodes".
#include "onnx/model_reading.h"

#include <string>
#include <utility>
#include <vector>

namespace tmmu::onnx {

std::vector<std::pair<std::string, std::string>> attribute_texts(const lib::NodeProto& n);

} // namespace tmmu::onnx
