#pragma once
// Small f32 kernels for the CPU adapters. Reductions keep eight partial sums in a fixed order:
// the compiler may vectorise them, and the result is the same on every run.
#include <cmath>
#include <cstdint>

namespace tmmu::cpu {

inline float dot(const float* a, const float* b, uint64_t n) {
    float acc[8] = {};
    const uint64_t whole = n / 8 * 8;
    for (uint64_t i = 0; i < whole; i += 8)
        for (int k = 0; k < 8; ++k)
            acc[k] += a[i + k] * b[i + k];
    float tail = 0;
    for (uint64_t i = whole; i < n; ++i)
        tail += a[i] * b[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail;
}

// out[r][j] = sum_i x[r][i] * w[i][col0 + j] (+ bias[col0 + j]): a Conv1D weight [in, total].
inline void matmul_in_out(const float* x, const float* w, const float* bias, float* out,
                          uint64_t rows, uint64_t in, uint64_t total, uint64_t col0,
                          uint64_t cols) {
    for (uint64_t r = 0; r < rows; ++r) {
        float* o = out + r * cols;
        for (uint64_t j = 0; j < cols; ++j)
            o[j] = bias ? bias[col0 + j] : 0.0f;
        const float* xr = x + r * in;
        for (uint64_t i = 0; i < in; ++i) {
            const float xi = xr[i];
            const float* wi = w + i * total + col0;
            for (uint64_t j = 0; j < cols; ++j)
                o[j] += xi * wi[j];
        }
    }
}

// out[r][j] = dot(w[j], x[r]) (+ bias[j]): a Linear weight [out, in].
inline void matmul_out_in(const float* x, const float* w, float* out, uint64_t rows, uint64_t in,
                          uint64_t cols, const float* bias = nullptr) {
    for (uint64_t r = 0; r < rows; ++r)
        for (uint64_t j = 0; j < cols; ++j)
            out[r * cols + j] =
                bias ? dot(w + j * in, x + r * in, in) + bias[j] : dot(w + j * in, x + r * in, in);
}

inline float gelu_tanh(float x) {        // GPT-2's "gelu_new"
    const float k = 0.7978845608028654f; // sqrt(2 / pi)
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

inline float silu(float x) {
    return x / (1.0f + std::exp(-x));
}

} // namespace tmmu::cpu
