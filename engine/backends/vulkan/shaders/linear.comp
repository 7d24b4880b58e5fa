#version 460
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#ifdef HALF_WEIGHTS // built twice: f32 weights, and f16 ones (HALF_WEIGHTS) summed in f32
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#ifdef HALF_WEIGHTS
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Weights { float16_t v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Weights { float v[]; };
#endif

// dst[r][j] = bias[col0 + j] + dot(w[col0 + j], x[r]) for j < cols, w [out][in]. A subgroup
// computes one column at a time: its lanes read the weight row side by side (i = lane, lane +
// subgroup size, ...), then a butterfly of shuffles adds the lanes' sums in a fixed order, so
// the same device gives the same bits on every run (no atomics, no barriers). Workgroup (c, r)
// serves row r; its subgroups take columns c * subgroups + s, then every groups * subgroups.
layout(push_constant) uniform Push {
    Floats x;
    Weights w;
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
    const uint lane = gl_SubgroupInvocationID, width = gl_SubgroupSize;
    const uint step = gl_NumWorkGroups.x * gl_NumSubgroups;
    for (uint j = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; j < pc.cols; j += step) {
        const uint wr = (pc.col0 + j) * pc.in_width;
        float s = 0;
        for (uint i = lane; i < pc.in_width; i += width)
            s += float(pc.w.v[wr + i]) * pc.x.v[xr + i];
        for (uint m = width / 2; m > 0; m >>= 1)
            s += subgroupShuffleXor(s, m);
        if (lane == 0)
            pc.dst.v[r * pc.cols + j] = has_bias ? pc.bias.v[pc.col0 + j] + s : s;
    }
}
