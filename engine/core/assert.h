#pragma once
// TMMU_ASSERT(condition, what): an invariant the code relies on, checked in debug builds
// (NDEBUG unset: the dev and asan presets). A failed one is a bug in tmmu, never bad input (bad
// input always ends in a Failure), so it prints where and aborts: sanitizer runs report it and
// debuggers stop there. In release builds the condition is not evaluated.
#ifdef NDEBUG
#define TMMU_ASSERT(condition, what) ((void)sizeof(condition))
#else
#define TMMU_ASSERT(condition, what)                                                               \
    ((condition) ? (void)0 : ::tmmu::assertion_failed(#condition, what, __FILE__, __LINE__))
#endif

namespace tmmu {

[[noreturn]] void assertion_failed(const char* condition, const char* what, const char* file,
                                   int line);

} // namespace tmmu
