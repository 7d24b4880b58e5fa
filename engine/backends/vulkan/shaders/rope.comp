#version 460
#include "common.glsl"

// Rotates pairs (i, i + d/2) of every head of every row by the row's position. The cosines and
// sines come from a table the host computed in double, as the CPU backend does: cos at
// table[p * half + i], sin at table[(table_positions + p) * half + i].
layout(push_constant) uniform Push {
    Floats x;
    Uints positions;
    Floats table;
    uint rows;
    uint heads;
    uint head_dim;
    uint table_positions;
} pc;

void main() {
    const uint half_dim = pc.head_dim / 2;
    const uint n = pc.rows * pc.heads * half_dim;
    const uint stride = gl_NumWorkGroups.x * THREADS;
    for (uint id = gl_GlobalInvocationID.x; id < n; id += stride) {
        const uint i = id % half_dim;
        const uint head = id / half_dim; // row * heads + h
        const uint r = head / pc.heads;
        const uint at = pc.positions.v[r] * half_dim + i;
        const float c = pc.table.v[at];
        const float s = pc.table.v[pc.table_positions * half_dim + at];
        const uint h = head * pc.head_dim;
        const float a = pc.x.v[h + i], b = pc.x.v[h + i + half_dim];
        pc.x.v[h + i] = a * c - b * s;
        pc.x.v[h + i + half_dim] = b * c + a * s;
    }
}
