// Shared by every kernel of the Vulkan backend. Operands arrive as device addresses in push
// constants (GL_EXT_buffer_reference), so a register is its arena's address plus its offset.
// Workgroups are THREADS wide, a constant: the reductions' order depends on it, so the same
// inputs give the same bits on the same device (no atomics anywhere). Indices are 32-bit: an
// operand holds fewer than 2^32 floats (a cache slot is reached by address arithmetic).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Uints { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Ints { int v[]; };
// Written and read back by other invocations of the same workgroup between barriers.
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer SharedFloats {
    float v[];
};

#define THREADS 64
layout(local_size_x = THREADS) in;

shared float reduce_scratch[THREADS];

// The workgroup's sum of every invocation's v, in one fixed tree.
float group_sum(float v) {
    const uint t = gl_LocalInvocationIndex;
    reduce_scratch[t] = v;
    barrier();
    for (uint s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) reduce_scratch[t] += reduce_scratch[t + s];
        barrier();
    }
    const float total = reduce_scratch[0];
    barrier();
    return total;
}

float group_max(float v) {
    const uint t = gl_LocalInvocationIndex;
    reduce_scratch[t] = v;
    barrier();
    for (uint s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) reduce_scratch[t] = max(reduce_scratch[t], reduce_scratch[t + s]);
        barrier();
    }
    const float top = reduce_scratch[0];
    barrier();
    return top;
}
