#version 460
#include "common.glsl"

// One workgroup per row: its k and v into its slot's cache (slot s at cache + s * stride
// bytes: K then V, each [max_seq][kv_width]) at the row's position.
layout(push_constant) uniform Push {
    Floats k;
    Floats v;
    uint64_t cache;
    uint64_t stride;
    Uints slots;
    Uints positions;
    uint kv_width;
    uint max_seq;
} pc;

void main() {
    const uint r = gl_WorkGroupID.x;
    Floats keys = Floats(pc.cache + uint64_t(pc.slots.v[r]) * pc.stride);
    const uint values = pc.max_seq * pc.kv_width;
    const uint at = pc.positions.v[r] * pc.kv_width;
    for (uint e = gl_LocalInvocationIndex; e < pc.kv_width; e += THREADS) {
        keys.v[at + e] = pc.k.v[r * pc.kv_width + e];
        keys.v[values + at + e] = pc.v.v[r * pc.kv_width + e];
    }
}
