#pragma once
// Model annotations: what a source knows beyond the graph (ONNX today; empty for the other
// sources), kept beside the graph rather than in it so plans, hashes and the IR stay
// source-neutral. Views show them; plan_model puts the notes first in the plan's notes.
#include <string>
#include <utility>
#include <vector>

namespace tmmu {

struct ModelAnnotations {
    struct Input {
        std::string name;
        std::vector<std::string> dims; // as declared: "3", a symbolic name "N", or "?" (unnamed)
    };
    // [tensor index][dim]: the symbolic name the dim was bound from, "" for a fixed dim; an
    // empty vector for a tensor without symbolic dims (and no rows at all for other sources).
    std::vector<std::vector<std::string>> dim_names;
    // [node index]: (attribute name, value as text) in the file's order.
    std::vector<std::vector<std::pair<std::string, std::string>>> node_attributes;
    std::vector<Input> inputs;              // graph inputs, initializers left out
    std::vector<std::string> symbolic_dims; // every symbolic name the file uses, sorted
    std::vector<std::string> notes;         // the loader's decisions: "'y' is a view of 'x' ..."
};

} // namespace tmmu
