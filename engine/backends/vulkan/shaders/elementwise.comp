#version 460
#include "common.glsl"

// Grid-stride elementwise kernels over n floats: a + b, GELU (tanh form, in place), or
// silu(gate) * up (in place in gate).
layout(push_constant) uniform Push {
    Floats a;
    Floats b;
    Floats dst;
    uint n;
    uint op; // 0: add, 1: gelu_tanh, 2: silu_mul
} pc;

float gelu_tanh(float x) {
    const float k = 0.7978845608028654; // sqrt(2 / pi)
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

void main() {
    const uint stride = gl_NumWorkGroups.x * THREADS;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        const float x = pc.a.v[i];
        if (pc.op == 0)
            pc.dst.v[i] = x + pc.b.v[i];
        else if (pc.op == 1)
            pc.dst.v[i] = gelu_tanh(x);
        else
            pc.dst.v[i] = x / (1.0 + exp(-x)) * pc.b.v[i];
    }
}
