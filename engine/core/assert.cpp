#include "core/assert.h"

#include <cstdio>
#include <cstdlib>

namespace tmmu {

void assertion_failed(const char* condition, const char* what, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: tmmu invariant broken: %s (%s)\n", file, line, what, condition);
    std::abort();
}

} // namespace tmmu
