#include "naive_transformer.h"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numbers>
#include <stdexcept>
#include <string>

namespace tmmu::test {

namespace {

using Matrix = std::vector<std::vector<double>>; // [rows][cols]

struct Model {
    const TransformerConfig& c;
    std::map<std::string, const float*> weights;

    const float* w(const std::string& name) const {
        auto it = weights.find(name);
        if (it == weights.end()) throw std::runtime_error("no weight " + name);
        return it->second;
    }
    bool gpt2() const { return c.family == TransformerConfig::Family::Gpt2; }
    std::string layer(uint64_t l, const std::string& stem) const {
        return gpt2() ? fmt::format("h.{}.{}", l, stem)
                      : fmt::format("model.layers.{}.{}", l, stem);
    }
};

// x [n][in] times w: [in][out] (GPT-2 Conv1D) or [out][in] (Linear, transposed).
Matrix times(const Matrix& x, const float* w, uint64_t in, uint64_t out, bool out_in,
             const float* bias = nullptr) {
    Matrix y(x.size(), std::vector<double>(out, 0.0));
    for (size_t r = 0; r < x.size(); ++r)
        for (uint64_t j = 0; j < out; ++j) {
            double s = bias ? bias[j] : 0.0;
            for (uint64_t i = 0; i < in; ++i)
                s += x[r][i] * (out_in ? w[j * in + i] : w[i * out + j]);
            y[r][j] = s;
        }
    return y;
}

Matrix norm(const Model& m, const Matrix& x, const std::string& stem) {
    Matrix y = x;
    const uint64_t e = m.c.hidden;
    const float* g = m.w(stem + ".weight");
    for (auto& row : y) {
        double mean = 0, sq = 0;
        if (m.gpt2()) {
            for (double v : row)
                mean += v;
            mean /= double(e);
        }
        for (double v : row)
            sq += (v - mean) * (v - mean);
        const double inv = 1.0 / std::sqrt(sq / double(e) + m.c.norm_eps);
        for (uint64_t i = 0; i < e; ++i)
            row[i] = (row[i] - mean) * inv * g[i] + (m.gpt2() ? m.w(stem + ".bias")[i] : 0.0);
    }
    return y;
}

// Pair i's turn rate: Hugging Face's RoPE initialisations, written out again here (not the
// runtime's rope.h), scaling included.
double frequency(const TransformerConfig& c, uint64_t i, uint64_t d) {
    const double base = std::pow(c.rope_theta, -2.0 * double(i) / double(d));
    const RopeScaling& s = c.rope_scaling;
    if (s.kind == RopeScaling::Kind::Linear) return base / s.factor;
    if (s.kind != RopeScaling::Kind::Llama3) return base;
    const double turn = 2.0 * std::numbers::pi / base; // positions per full turn
    const double trained = double(s.original_max_positions);
    if (turn > trained / s.low_freq_factor) return base / s.factor;
    if (turn < trained / s.high_freq_factor) return base;
    const double t =
        (trained / turn - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
    return base * (t + (1.0 - t) / s.factor);
}

void rope(std::vector<double>& v, uint64_t offset, uint64_t d, uint64_t pos,
          const TransformerConfig& c) {
    for (uint64_t i = 0; i < d / 2; ++i) {
        const double a = double(pos) * frequency(c, i, d);
        const double x = v[offset + i], y = v[offset + i + d / 2];
        v[offset + i] = x * std::cos(a) - y * std::sin(a);
        v[offset + i + d / 2] = y * std::cos(a) + x * std::sin(a);
    }
}

Matrix attention(const Model& m, const Matrix& h, uint64_t l) {
    const uint64_t E = m.c.hidden, H = m.c.n_head, KV = m.c.n_kv_head, D = m.c.head_dim();
    Matrix q, k, v;
    if (m.gpt2()) {
        const Matrix qkv = times(h, m.w(m.layer(l, "attn.c_attn.weight")), E, 3 * E, false,
                                 m.w(m.layer(l, "attn.c_attn.bias")));
        for (const auto& row : qkv) {
            q.emplace_back(row.begin(), row.begin() + long(E));
            k.emplace_back(row.begin() + long(E), row.begin() + long(2 * E));
            v.emplace_back(row.begin() + long(2 * E), row.end());
        }
    } else {
        // Qwen2's projections have biases.
        const auto bias = [&](const char* stem) {
            return m.c.qkv_bias ? m.w(m.layer(l, fmt::format("self_attn.{}.bias", stem))) : nullptr;
        };
        q = times(h, m.w(m.layer(l, "self_attn.q_proj.weight")), E, H * D, true, bias("q_proj"));
        k = times(h, m.w(m.layer(l, "self_attn.k_proj.weight")), E, KV * D, true, bias("k_proj"));
        v = times(h, m.w(m.layer(l, "self_attn.v_proj.weight")), E, KV * D, true, bias("v_proj"));
        for (size_t t = 0; t < h.size(); ++t) {
            for (uint64_t hd = 0; hd < H; ++hd)
                rope(q[t], hd * D, D, t, m.c);
            for (uint64_t hd = 0; hd < KV; ++hd)
                rope(k[t], hd * D, D, t, m.c);
        }
    }
    Matrix out(h.size(), std::vector<double>(H * D, 0.0));
    for (size_t t = 0; t < h.size(); ++t)
        for (uint64_t hd = 0; hd < H; ++hd) {
            const uint64_t kvh = hd / (H / KV);
            std::vector<double> p(t + 1);
            double top = -INFINITY, sum = 0;
            for (size_t j = 0; j <= t; ++j) {
                double s = 0;
                for (uint64_t i = 0; i < D; ++i)
                    s += q[t][hd * D + i] * k[j][kvh * D + i];
                p[j] = s / std::sqrt(double(D));
                top = std::max(top, p[j]);
            }
            for (double& x : p)
                sum += (x = std::exp(x - top));
            for (size_t j = 0; j <= t; ++j)
                for (uint64_t i = 0; i < D; ++i)
                    out[t][hd * D + i] += p[j] / sum * v[j][kvh * D + i];
        }
    if (m.gpt2())
        return times(out, m.w(m.layer(l, "attn.c_proj.weight")), E, E, false,
                     m.w(m.layer(l, "attn.c_proj.bias")));
    return times(out, m.w(m.layer(l, "self_attn.o_proj.weight")), H * D, E, true);
}

Matrix mlp(const Model& m, const Matrix& h, uint64_t l) {
    const uint64_t E = m.c.hidden, I = m.c.intermediate;
    if (m.gpt2()) {
        Matrix a = times(h, m.w(m.layer(l, "mlp.c_fc.weight")), E, I, false,
                         m.w(m.layer(l, "mlp.c_fc.bias")));
        for (auto& row : a)
            for (double& x : row)
                x = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        return times(a, m.w(m.layer(l, "mlp.c_proj.weight")), I, E, false,
                     m.w(m.layer(l, "mlp.c_proj.bias")));
    }
    Matrix g = times(h, m.w(m.layer(l, "mlp.gate_proj.weight")), E, I, true);
    const Matrix u = times(h, m.w(m.layer(l, "mlp.up_proj.weight")), E, I, true);
    for (size_t r = 0; r < g.size(); ++r)
        for (uint64_t i = 0; i < I; ++i)
            g[r][i] = g[r][i] / (1 + std::exp(-g[r][i])) * u[r][i];
    return times(g, m.w(m.layer(l, "mlp.down_proj.weight")), I, E, true);
}

void add(Matrix& x, const Matrix& y) {
    for (size_t r = 0; r < x.size(); ++r)
        for (size_t i = 0; i < x[r].size(); ++i)
            x[r][i] += y[r][i];
}

} // namespace

std::vector<std::vector<double>> naive_logits(const TransformerConfig& c,
                                              const runtime::ExecutionPlan& plan,
                                              const runtime::WeightStore& weights,
                                              const std::vector<int32_t>& tokens) {
    Model m{c, {}};
    for (size_t i = 0; i < plan.weights.size(); ++i)
        m.weights[plan.weights[i].name] = weights.at({uint32_t(i)});
    const uint64_t E = c.hidden;
    const float* table = m.w(m.gpt2() ? "wte.weight" : "model.embed_tokens.weight");
    Matrix x;
    for (size_t t = 0; t < tokens.size(); ++t) {
        std::vector<double> row(table + uint64_t(tokens[t]) * E,
                                table + (uint64_t(tokens[t]) + 1) * E);
        if (m.gpt2())
            for (uint64_t i = 0; i < E; ++i)
                row[i] += m.w("wpe.weight")[t * E + i];
        x.push_back(std::move(row));
    }
    for (uint64_t l = 0; l < c.n_layer; ++l) {
        add(x, attention(m, norm(m, x, m.layer(l, m.gpt2() ? "ln_1" : "input_layernorm")), l));
        add(x, mlp(m, norm(m, x, m.layer(l, m.gpt2() ? "ln_2" : "post_attention_layernorm")), l));
    }
    const Matrix f = norm(m, x, m.gpt2() ? "ln_f" : "model.norm");
    const float* head = c.tied_embeddings ? table : m.w("lm_head.weight");
    return times(f, head, E, c.vocab, true);
}

} // namespace tmmu::test
