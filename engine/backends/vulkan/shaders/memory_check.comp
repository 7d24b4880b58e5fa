#version 460
#include "common.glsl"

// Memory checks on the device (runtime/memory_check.h), one register per dispatch: record its
// fingerprint, check it against the one recorded when its producer wrote it, or check its
// guard words. The first finding of a step goes into `report`; later ones leave it alone (the
// step's dispatches run one after another), so the host reads back what happened first.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Prints { uint64_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Report {
    uint code; // 0: nothing found, 1: a register changed since written, 2: a guard changed
    uint instruction;
    uint reg;
    uint word;  // code 2: the guard word (0-15 before the register, 16-31 after it)
    uint value; // code 2: what the word holds
};
layout(push_constant) uniform Push {
    uint64_t data; // the register's first byte
    Prints prints; // a fingerprint per register
    Report report;
    uint words; // the register's 4-byte words
    uint reg;
    uint instruction;
    uint op; // 0: fingerprint, 1: check the fingerprint, 2: check the guards
} pc;

const uint64_t kPrime = 0x100000001b3ul;
const uint kGuardWord = 0xFDFDFDFDu; // kGuardByte four times
const uint kGuardWords = 16;         // kGuardBytes / 4 on each side

shared uint64_t hashes[THREADS];
shared uint first_bad[THREADS];

// FNV-1a over each invocation's strided words, the invocations' hashes combined in one fixed
// tree: the same bytes give the same fingerprint on every run.
uint64_t fingerprint() {
    const uint t = gl_LocalInvocationIndex;
    Uints data = Uints(pc.data);
    uint64_t h = 0xcbf29ce484222325ul;
    for (uint i = t; i < pc.words; i += THREADS)
        h = (h ^ uint64_t(data.v[i])) * kPrime;
    hashes[t] = h;
    barrier();
    for (uint s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) hashes[t] = (hashes[t] * kPrime) ^ hashes[t + s];
        barrier();
    }
    return hashes[0];
}

void check_guards() {
    const uint t = gl_LocalInvocationIndex;
    uint bad = 0xFFFFFFFFu;
    if (t < 2 * kGuardWords) {
        const uint64_t at = t < kGuardWords
                                ? pc.data - 4ul * (kGuardWords - t)
                                : pc.data + 4ul * (uint64_t(pc.words) + (t - kGuardWords));
        if (Uints(at).v[0] != kGuardWord) bad = t;
    }
    first_bad[t] = bad;
    barrier();
    for (uint s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) first_bad[t] = min(first_bad[t], first_bad[t + s]);
        barrier();
    }
    const uint word = first_bad[0];
    if (t != 0 || word == 0xFFFFFFFFu || pc.report.code != 0) return;
    const uint64_t at = word < kGuardWords
                            ? pc.data - 4ul * (kGuardWords - word)
                            : pc.data + 4ul * (uint64_t(pc.words) + (word - kGuardWords));
    pc.report.code = 2;
    pc.report.instruction = pc.instruction;
    pc.report.reg = pc.reg;
    pc.report.word = word;
    pc.report.value = Uints(at).v[0];
}

void main() {
    if (pc.op == 2) {
        check_guards();
        return;
    }
    const uint64_t h = fingerprint();
    if (gl_LocalInvocationIndex != 0) return;
    if (pc.op == 0) {
        pc.prints.v[pc.reg] = h;
    } else if (h != pc.prints.v[pc.reg] && pc.report.code == 0) {
        pc.report.code = 1;
        pc.report.instruction = pc.instruction;
        pc.report.reg = pc.reg;
    }
}
