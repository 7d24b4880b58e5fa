#include "core/checked.h"
#include "core/failure.h"
#include "core/units.h"
#include "ir/dtype.h"
#include "test_support.h"

#include <QObject>

#include <set>
#include <string_view>
#include <utility>

using namespace tmmu;

class TestCore : public QObject {
    Q_OBJECT
  private slots:
    void checkedArithmeticDetectsOverflow() {
        QCOMPARE(checked_add(1, 2, "x"), 3u);
        QCOMPARE(checked_mul(1ull << 31, 1ull << 31, "x"), 1ull << 62);
        TMMU_EXPECT_FAILURE(checked_add(UINT64_MAX, 1, "a+b"), FailureCode::AllocationOverflow);
        TMMU_EXPECT_FAILURE(checked_mul(1ull << 32, 1ull << 32, "a*b"),
                            FailureCode::AllocationOverflow);
    }
    void alignUpRoundsToPowersOfTwo() {
        QCOMPARE(align_up(0, 128, "x"), 0u);
        QCOMPARE(align_up(1, 128, "x"), 128u);
        QCOMPARE(align_up(128, 128, "x"), 128u);
        QCOMPARE(align_up(129, 1, "x"), 129u);
        TMMU_EXPECT_FAILURE(align_up(5, 3, "tensor t.alignment"), FailureCode::AlignmentViolation);
        TMMU_EXPECT_FAILURE(align_up(UINT64_MAX - 3, 8, "x"), FailureCode::AllocationOverflow);
    }
    void failureNamesCodeAndPlace() {
        auto f = test::capture_failure(
            [] { fail(FailureCode::LivenessCycle, "node 'n3'", "cycle n3 -> n4 -> n3"); });
        QVERIFY(f.has_value());
        QCOMPARE(QString::fromStdString(f->what()),
                 QString("LIVENESS_CYCLE at node 'n3': cycle n3 -> n4 -> n3"));
    }
    // The exit statuses are documented in the README and relied on by scripts: they must not
    // move when codes are added.
    void failureExitStatusesAreStable() {
        const std::pair<const char*, int> expected[] = {{"INVALID_IR_SHAPES", 10},
                                                        {"LIVENESS_CYCLE", 11},
                                                        {"ADDRESS_COLLISION", 12},
                                                        {"ALLOCATION_OVERFLOW", 13},
                                                        {"ARENA_TOO_SMALL", 14},
                                                        {"ALIGNMENT_VIOLATION", 15},
                                                        {"IO_ERROR", 16},
                                                        {"INVALID_ARGUMENT", 2},
                                                        {"CORRUPT_CHECKPOINT", 18},
                                                        {"CANCELLED", 19},
                                                        {"UNSUPPORTED_TENSOR_RANK", 20},
                                                        {"INVALID_PARAM_BLOCK_ABI", 21},
                                                        {"INVALID_EXECUTION_PLAN", 22},
                                                        {"UNSUPPORTED_OPCODE", 23},
                                                        {"BATCH_UNSUPPORTED", 24},
                                                        {"DEVICE_ERROR", 25},
                                                        {"LAZY_ENGINE_ERROR", 26},
                                                        {"UNBOUND_DIMENSION", 27},
                                                        {"MEMORY_BUDGET_EXCEEDED", 28},
                                                        {"SHAPE_ENVELOPE_VIOLATION", 29}};
        QCOMPARE(std::size(kAllFailureCodes), std::size(expected));
        std::set<std::string_view> names;
        for (size_t i = 0; i < std::size(kAllFailureCodes); ++i) {
            const FailureCode code = kAllFailureCodes[i];
            QCOMPARE(int(code), int(i));
            QCOMPARE(QString::fromUtf8(failure_code_name(code).data()),
                     QString::fromUtf8(expected[i].first));
            QCOMPARE(failure_exit_status(code), expected[i].second);
            names.insert(failure_code_name(code));
        }
        QCOMPARE(names.size(), std::size(kAllFailureCodes));
        QCOMPARE(kInternalErrorExitStatus, 3); // documented; distinct from 0, 1, 2 and 10 + code
        for (FailureCode code : kAllFailureCodes)
            QVERIFY(failure_exit_status(code) != kInternalErrorExitStatus);
    }
    // One byte format for the CLI, reports and the studio.
    void bytesAndByteDeltasFormatOneWay() {
        QCOMPARE(format_bytes(96), std::string("96 B"));
        QCOMPARE(format_bytes(1536ull << 20), std::string("1.50 GiB"));
        QCOMPARE(format_bytes(UINT64_MAX), std::string("16384.00 PiB"));
        QCOMPARE(format_byte_delta(0), std::string("0"));
        QCOMPARE(format_byte_delta(1536ll << 20), std::string("+1.50 GiB"));
        QCOMPARE(format_byte_delta(-96), std::string("-96 B"));
        QCOMPARE(format_byte_delta(INT64_MIN), std::string("-8192.00 PiB"));
        QCOMPARE(format_byte_delta(INT64_MAX), std::string("+8192.00 PiB"));
    }
    void dtypesHaveSizesAndNames() {
        QCOMPARE(dtype_bytes(*parse_dtype("bf16")), 2u);
        QCOMPARE(dtype_bytes(*parse_dtype("f8")), 1u);
        QCOMPARE(dtype_bytes(*parse_dtype("i64")), 8u);
        QCOMPARE(dtype_bytes(*parse_dtype("bool")), 1u);
        QVERIFY(!parse_dtype("f13").has_value());
        for (auto name : {"f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i64", "i32", "i16",
                          "i8", "u8", "bool"})
            QCOMPARE(dtype_name(*parse_dtype(name)), std::string_view(name));
    }
};

QTEST_GUILESS_MAIN(TestCore)
#include "test_core.moc"
