#version 460
#include "common.glsl"

// dst[r][j] = bias[col0 + j] + dot(w[col0 + j], x[r]) for j < cols, w [out][in]. Workgroup
// (c, r) computes columns c, c + groups, ... of row r: each invocation sums a strided share of
// the dot product, then group_sum adds the shares in a fixed tree.
layout(push_constant) uniform Push {
    Floats x;
    Floats w;
    Floats bias; // 0: none
    Floats dst;
    uint in_width;
    uint col0;
    uint cols;
} pc;

void main() {
    const uint r = gl_WorkGroupID.y;
    const uint xr = r * pc.in_width;
    const bool has_bias = uint64_t(pc.bias) != 0;
    for (uint j = gl_WorkGroupID.x; j < pc.cols; j += gl_NumWorkGroups.x) {
        const uint wr = (pc.col0 + j) * pc.in_width;
        float s = 0;
        for (uint i = gl_LocalInvocationIndex; i < pc.in_width; i += THREADS)
            s += pc.w.v[wr + i] * pc.x.v[xr + i];
        const float total = group_sum(s);
        if (gl_LocalInvocationIndex == 0)
            pc.dst.v[r * pc.cols + j] = has_bias ? pc.bias.v[pc.col0 + j] + total : total;
    }
}
