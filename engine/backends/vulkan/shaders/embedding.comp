#version 460
#ifdef HALF_WEIGHTS // built twice: f32 weights, and f16 ones (HALF_WEIGHTS) summed in f32
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#ifdef HALF_WEIGHTS
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Weights { float16_t v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Weights { float v[]; };
#endif

// One workgroup per row: the token's row of the table, plus its position's row when given.
layout(push_constant) uniform Push {
    Ints tokens;
    Uints positions;
    Weights table;
    Weights positions_table; // 0 when the model has none
    Floats dst;
    uint width;
} pc;

void main() {
    const uint r = gl_WorkGroupID.x;
    const uint tok = uint(pc.tokens.v[r]) * pc.width;
    const bool has_positions = uint64_t(pc.positions_table) != 0;
    const uint pos = has_positions ? pc.positions.v[r] * pc.width : 0;
    for (uint e = gl_LocalInvocationIndex; e < pc.width; e += THREADS) {
        const float x = float(pc.table.v[tok + e]);
        pc.dst.v[r * pc.width + e] =
            has_positions ? x + float(pc.positions_table.v[pos + e]) : x;
    }
}
