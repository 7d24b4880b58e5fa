#version 460
#include "common.glsl"

// One workgroup per row: the token's row of the table, plus its position's row when given.
layout(push_constant) uniform Push {
    Ints tokens;
    Uints positions;
    Floats table;
    Floats positions_table; // 0 when the model has none
    Floats dst;
    uint width;
} pc;

void main() {
    const uint r = gl_WorkGroupID.x;
    const uint tok = uint(pc.tokens.v[r]) * pc.width;
    const bool has_positions = uint64_t(pc.positions_table) != 0;
    const uint pos = has_positions ? pc.positions.v[r] * pc.width : 0;
    for (uint e = gl_LocalInvocationIndex; e < pc.width; e += THREADS) {
        const float x = pc.table.v[tok + e];
        pc.dst.v[r * pc.width + e] = has_positions ? x + pc.positions_table.v[pos + e] : x;
    }
}
