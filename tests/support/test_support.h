#pragma once
// Helpers shared by the QtTest suites.
#include "core/failure.h"
#include "plan/offset_problem.h"

#include <QString>
#include <QTest>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tmmu::test {

// Runs fn and returns the Failure it threw, or nullopt when it threw nothing.
std::optional<Failure> capture_failure(const std::function<void()>& fn);

// A buffer with lifetime [begin, end), size and alignment, not pinned.
Buffer buf(uint64_t begin, uint64_t end, uint64_t size, uint64_t alignment = 1);

// Lower-case hex of bytes ("00ff").
std::string hex(const std::vector<uint8_t>& bytes);

// Reads a whole file; QFAIL-style callers check the optional.
std::optional<std::string> read_file(const std::string& path);

// Random offset problem: n buffers over horizon steps, sizes in [1, max_size], alignments from
// {1, 8, 64, 256} when aligned is true. Same seed, same problem.
OffsetProblem random_problem(uint32_t seed, size_t n, uint64_t horizon, uint64_t max_size,
                             bool aligned);

} // namespace tmmu::test

// Asserts that `expr` throws tmmu::Failure with the given FailureCode, and that the failure
// names a location. Use inside a QtTest slot.
#define TMMU_EXPECT_FAILURE(expr, expected_code)                                                   \
    do {                                                                                           \
        auto tmmu_f_ = ::tmmu::test::capture_failure([&] { (void)(expr); });                       \
        QVERIFY2(tmmu_f_.has_value(), "expected a tmmu::Failure, none was thrown");                \
        QVERIFY2(tmmu_f_->code() == (expected_code), tmmu_f_->what());                             \
        QVERIFY2(!tmmu_f_->where().empty(), "failure does not say where");                         \
    } while (0)

#include "ir/graph.h"

namespace tmmu::test {

// Random finalized DAG of about `nodes` forward nodes (plus backward nodes reading saved
// forward tensors when `training`), with parameters, in-place writes, views, alias groups,
// saved_for_backward marks and must_not_alias pairs sprinkled in. Same seed, same graph.
Graph random_graph(uint32_t seed, size_t nodes, bool training);

} // namespace tmmu::test
