// SGD and AdamW as in-place updates under NoGrad: each parameter update is one base_store and
// one base_commit, threaded on tokGlobal, so mark_step runs them even if nothing reads them.
#include "lazy/engine.h"

#include <cmath>

namespace tmmu::lazy {

void Sgd::step(Engine& e) {
    Engine::NoGrad no_grad(e);
    for (const Tensor& p : params_) {
        const Tensor g = e.grad(p);
        if (g.valid()) e.sub_(p, e.mul(g, lr_));
    }
}

void AdamW::step(Engine& e) {
    Engine::NoGrad no_grad(e);
    ++t_;
    if (m_.empty())
        for (const Tensor& p : params_) {
            // Optimizer state outlives any tidy scope the first step runs in.
            m_.push_back(e.full(e.info(p).shape, 0.0f));
            v_.push_back(e.full(e.info(p).shape, 0.0f));
            e.keep(m_.back());
            e.keep(v_.back());
        }
    const float c1 = 1.0f - std::pow(o_.beta1, static_cast<float>(t_));
    const float c2 = 1.0f - std::pow(o_.beta2, static_cast<float>(t_));
    for (size_t i = 0; i < params_.size(); ++i) {
        const Tensor& p = params_[i];
        const Tensor g = e.grad(p);
        if (!g.valid()) continue;
        e.mul_(p, 1.0f - o_.lr * o_.weight_decay); // decoupled weight decay
        e.mul_(m_[i], o_.beta1);
        e.add_(m_[i], e.mul(g, 1.0f - o_.beta1));
        e.mul_(v_[i], o_.beta2);
        e.add_(v_[i], e.mul(e.mul(g, g), 1.0f - o_.beta2));
        const Tensor denom = e.add(e.sqrt(e.mul(v_[i], 1.0f / c2)), o_.eps);
        e.sub_(p, e.div(e.mul(m_[i], o_.lr / c1), denom));
    }
}

} // namespace tmmu::lazy
