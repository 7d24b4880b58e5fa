#version 460
#include "common.glsl"

// One workgroup per row. LayerNorm: (x - mean) / sqrt(var + eps) * gamma + beta, the variance
// from a second pass over the row. RMSNorm (beta 0): x / sqrt(mean(x^2) + eps) * gamma.
layout(push_constant) uniform Push {
    Floats x;
    Floats gamma;
    Floats beta;
    Floats dst;
    uint width;
    float eps;
    uint layer; // 1: LayerNorm, 0: RMSNorm
} pc;

void main() {
    const uint row = gl_WorkGroupID.x * pc.width;
    const uint t = gl_LocalInvocationIndex;
    float mean = 0;
    if (pc.layer != 0) {
        float s = 0;
        for (uint e = t; e < pc.width; e += THREADS)
            s += pc.x.v[row + e];
        mean = group_sum(s) / float(pc.width);
    }
    float q = 0;
    for (uint e = t; e < pc.width; e += THREADS) {
        const float d = pc.x.v[row + e] - mean;
        q += d * d;
    }
    const float inv = 1.0 / sqrt(group_sum(q) / float(pc.width) + pc.eps);
    for (uint e = t; e < pc.width; e += THREADS) {
        const float y = (pc.x.v[row + e] - mean) * inv * pc.gamma.v[e];
        pc.dst.v[row + e] = pc.layer != 0 ? y + pc.beta.v[e] : y;
    }
}
