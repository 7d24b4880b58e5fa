#version 460
#include "common.glsl"

// Causal softmax attention, one workgroup per (row, query head) over positions 0..position of
// the row's slot (grouped: head h reads kv head h / (heads / kv_heads)). The scores live in
// `scores` (max_seq floats per row and head), so the cache length has no on-chip limit.
layout(push_constant) uniform Push {
    Floats q;
    uint64_t cache;
    uint64_t stride;
    Uints slots;
    Uints positions;
    Floats dst;
    SharedFloats scores;
    uint heads;
    uint kv_heads;
    uint head_dim;
    uint max_seq;
    float scale; // 1 / sqrt(head_dim)
} pc;

#define MAX_HEAD_DIM 256
shared float query[MAX_HEAD_DIM];

void main() {
    const uint r = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationIndex;
    const uint last = pc.positions.v[r];
    const uint kv_width = pc.kv_heads * pc.head_dim;
    const uint64_t keys = pc.cache + uint64_t(pc.slots.v[r]) * pc.stride +
                          4ul * uint64_t((h / (pc.heads / pc.kv_heads)) * pc.head_dim);
    Floats key_at = Floats(keys);
    Floats value_at = Floats(keys + 4ul * uint64_t(pc.max_seq) * uint64_t(kv_width));
    const uint row_head = (r * pc.heads + h) * pc.head_dim;
    const uint score0 = (r * pc.heads + h) * pc.max_seq;
    for (uint i = t; i < pc.head_dim; i += THREADS)
        query[i] = pc.q.v[row_head + i];
    barrier();
    float top = -1.0 / 0.0;
    for (uint p = t; p <= last; p += THREADS) {
        float s = 0;
        for (uint i = 0; i < pc.head_dim; ++i)
            s += query[i] * key_at.v[p * kv_width + i];
        s *= pc.scale;
        pc.scores.v[score0 + p] = s;
        top = max(top, s);
    }
    top = group_max(top);
    float sum = 0;
    for (uint p = t; p <= last; p += THREADS) {
        const float e = exp(pc.scores.v[score0 + p] - top);
        pc.scores.v[score0 + p] = e;
        sum += e;
    }
    memoryBarrierBuffer(); // every score is visible to the whole workgroup after the sum
    sum = group_sum(sum);
    for (uint i = t; i < pc.head_dim; i += THREADS) {
        float acc = 0;
        for (uint p = 0; p <= last; ++p)
            acc += (pc.scores.v[score0 + p] / sum) * value_at.v[p * kv_width + i];
        pc.dst.v[row_head + i] = acc;
    }
}
