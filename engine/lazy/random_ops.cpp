// Random ops: keyed uniform draws (keyed_rng.h) and the dropout built on them.
#include "core/failure.h"
#include "lazy/engine_state.h"
#include "lazy/entry.h"

#include <fmt/format.h>

namespace tmmu::lazy {

void Engine::manual_seed(uint64_t seed) {
    Entry entry(*s_, "manual_seed");
    s_->rng_seed = seed;
    s_->rng_next_draw = 0;
}

Tensor Engine::rand(const Shape& shape, std::string name) {
    Entry entry(*s_, "rand");
    s_->begin_emission();
    const RngKey key{s_->rng_seed, s_->rng_next_draw, 0};
    Node& n = s_->emit(Op::RandUniform, {}, {shape}, false);
    ++s_->rng_next_draw; // after emit, which refuses a shape too large: that draws nothing
    n.rng = key;
    n.detail = fmt::format("{} seed {} draw {} op {}", kRngAlgorithm, key.seed, key.draw, key.op);
    const ValueId v = n.outputs[0];
    const TensorId id = s_->new_tensor(s_->new_base(shape, v, name), std::nullopt);
    s_->tensors.at(id).name = std::move(name);
    if (s_->eager_now()) s_->force({v}, "eager");
    return wrap(id);
}

Tensor Engine::dropout(const Tensor& a, float p) {
    const Shape shape = info(a).shape; // checks the handle
    if (!(p >= 0.0f && p < 1.0f))
        fail(FailureCode::InvalidArgument, s_->site,
             fmt::format("dropout probability {} is outside [0, 1)", p));
    // u - p > 0 exactly when u > p: the difference of two floats in [0, 1) rounds to 0 only
    // when they are equal.
    const Tensor keep = unary_op(Op::Step, add(rand(shape), -p));
    return mul(mul(a, keep), 1.0f / (1.0f - p));
}

} // namespace tmmu::lazy
