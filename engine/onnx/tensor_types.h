#pragma once
// Types and shapes of an ONNX graph's values, by name, from initializers, inputs, outputs and
// inferred value_info; a subgraph's table falls back to its enclosing scope for captured names.
// Unknown dims are collected across scopes (UnboundDims) rather than thrown one by one, so the
// error lists the unbound names and where they are used.
#include "onnx/model_reading.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tmmu::onnx {

struct TensorType {
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
};

class UnboundDims {
  public:
    void add(const std::string& what, std::string where) {
        unbound_[what].push_back(std::move(where));
    }
    bool empty() const { return unbound_.empty(); }
    // "'N' (used by 'x' dim 0, 'y' dim 0); an unnamed dim (used by 'z' dim 1)", at most a few
    // places per name, and eight of the names inference made up ('unk__3') after the others.
    std::string text() const;

  private:
    std::map<std::string, std::vector<std::string>> unbound_; // what -> where used
};

class TypeTable {
  public:
    // scope: "" for the main graph, "body 'b' of node 'Loop#3'" for a subgraph.
    TypeTable(const lib::GraphProto& g, const std::map<std::string, int64_t>& dims,
              UnboundDims& unbound, const TypeTable* outer, std::string scope);

    std::optional<TensorType> of(const std::string& name) const;

  private:
    const lib::TypeProto* find(const std::string& name) const;
    [[noreturn]] void negative_dim(const std::string& name, int axis, int64_t dim) const;
    std::string place(const std::string& name) const;

    const std::map<std::string, int64_t>& dims_;
    UnboundDims& unbound_;
    const TypeTable* outer_;
    std::string scope_;
    std::unordered_map<std::string, const lib::NodeProto*> producers_; // by output name
    std::unordered_map<std::string, TensorType> initializers_;
    std::unordered_map<std::string, const lib::TypeProto*> types_;
};

} // namespace tmmu::onnx
