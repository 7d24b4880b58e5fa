// Normalized IR identity and abstract caching keys of compiled regions (seed 004, 8.1-8.5).
#include "lazy/compiled.h"
#include "lazy/engine_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>

namespace tmmu::lazy {
namespace {

// Numbers things by first appearance, so the same structure gives the same numbers whatever ids
// the run handed out.
class FirstSeen {
  public:
    size_t operator()(uint64_t id) { return ids_.emplace(id, ids_.size()).first->second; }

  private:
    std::map<uint64_t, size_t> ids_;
};

// 8.2.1: an f32 as its IEEE-754 bit pattern, bytes little-endian (so -0.0 and 0.0, and NaN
// payloads, are different keys).
std::string f32_bits(float x) {
    const auto u = std::bit_cast<uint32_t>(x);
    return fmt::format("{:02x}{:02x}{:02x}{:02x}", u & 0xff, (u >> 8) & 0xff, (u >> 16) & 0xff,
                       u >> 24);
}

class Normalizer {
  public:
    Normalizer(const EngineState& s, const std::vector<Node>& body, const BodyFacts& facts)
        : s_(s), body_(body), facts_(facts) {}

    std::string text() {
        std::string out = "tmmu-compiled-region 1\n";
        for (uint32_t k = 0; k < body_.size(); ++k)
            out += node(k);
        std::vector<std::string> escaping;
        for (ValueId v : facts_.escaping)
            escaping.push_back(ref(v)); // in creation order
        out += fmt::format("escapes {}\n", fmt::join(escaping, " "));
        out += fmt::format("arguments {}\nstate {}\n", fmt::join(arguments_, " "),
                           fmt::join(state_, " "));
        return out;
    }

  private:
    const EngineState& s_;
    const std::vector<Node>& body_;
    const BodyFacts& facts_;
    FirstSeen args_, tokens_, locs_, bases_, slots_;
    std::vector<std::string> arguments_; // inputSigAbstract: each argument's type and shape
    std::vector<std::string> state_;     // StateIfaceSigOrdered: slot, role, base slot, access

    std::string ref(ValueId v) {
        if (const auto p = facts_.position.find(v); p != facts_.position.end()) {
            const Node& n = body_[p->second];
            const auto o = std::find(n.outputs.begin(), n.outputs.end(), v) - n.outputs.begin();
            return fmt::format("%{}.{}", p->second, o);
        }
        const Value& val = s_.values.at(v);
        if (val.token) return fmt::format("t{}", tokens_(v));
        const size_t before = arguments_.size();
        const size_t a = args_(v);
        if (a == before) arguments_.push_back(fmt::format("f32{}", shape_text(val.shape)));
        return fmt::format("a{}", a);
    }

    std::string state(const Node& n) {
        std::string out;
        if (n.loc) {
            const LocRec& l = s_.locs.at(n.loc);
            const size_t slot = locs_(n.loc);
            out += fmt::format(" S{}", slot);
            state_.push_back(fmt::format("S{}:{}:B{}:{}", slot, loc_role_name(l.role),
                                         bases_(l.base), op_name(n.op)));
        }
        if (n.base) out += fmt::format(" B{}", bases_(n.base));
        if (n.slot) out += fmt::format(" P{}", slots_(n.slot));
        return out;
    }

    std::string node(uint32_t k) {
        const Node& n = body_[k];
        std::vector<std::string> in, out;
        for (ValueId v : n.inputs)
            in.push_back(ref(v));
        for (ValueId v : n.outputs) {
            const Value& val = s_.values.at(v);
            out.push_back(val.token ? "tok" : fmt::format("f32{}", shape_text(val.shape)));
        }
        std::string line = fmt::format("{} {}({}) -> {}", k, op_name(n.op), fmt::join(in, ","),
                                       fmt::join(out, ","));
        if (!n.dims.empty() || n.keepdim)
            line +=
                fmt::format(" dims=[{}]{}", fmt::join(n.dims, ","), n.keepdim ? " keepdim" : "");
        if (n.op == Op::View || n.op == Op::StridedScatter)
            line += fmt::format(" view={}+{}:{}", shape_text(n.view.shape), n.view.offset,
                                fmt::join(n.view.strides, ","));
        if (n.op == Op::SumTo || n.op == Op::Expand) line += " to=" + shape_text(n.shape);
        // The scalar specialization schema: a one-element constant (a learning rate, a bias
        // correction) is a dynamic scalar, its value data of the call (a fused kernel reads it
        // from the call's own node), so a new value reuses the variant; a larger constant is
        // specialized by value.
        if (n.op == Op::Constant && n.data.size() == 1) line += " scalar=dynamic";
        if (n.op == Op::Constant && n.data.size() > 1) {
            line += " bits=";
            for (float x : n.data)
                line += f32_bits(x);
        }
        line += state(n);
        if (n.materialize) line += " materialize";
        if (n.op == Op::LocInvalidate) line += fmt::format(" tombstone={}", n.tombstone);
        return line + "\n";
    }
};

} // namespace

std::string normalized_body(const EngineState& s, const std::vector<Node>& body,
                            const BodyFacts& facts) {
    return Normalizer(s, body, facts).text();
}

std::string argument_binding(const EngineState& s, std::span<const Tensor> args) {
    FirstSeen bases;
    std::vector<std::string> bound;
    for (const Tensor& a : args) {
        if (!a.valid()) {
            bound.emplace_back("absent");
            continue;
        }
        const TensorRec& t = s.tensors.at(a.id());
        std::string b = fmt::format("B{}", bases(t.base));
        if (t.view && *t.view != identity_view(s.bases.at(t.base).shape))
            b += fmt::format(":{}+{}:{}", shape_text(t.view->shape), t.view->offset,
                             fmt::join(t.view->strides, ","));
        bound.push_back(std::move(b));
    }
    return fmt::format("binding {}\n", fmt::join(bound, " "));
}

} // namespace tmmu::lazy
