#include "plan/validator.h"
#include "test_support.h"

#include <QObject>

#include <random>

using namespace tmmu;
using tmmu::test::buf;

namespace {

OffsetProblem problem(std::vector<Buffer> buffers, uint64_t capacity = UINT64_MAX) {
    OffsetProblem p;
    p.buffers = std::move(buffers);
    p.capacity = capacity;
    return p;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// The seed's is_valid, pair by pair.
bool brute_force_collides(const OffsetProblem& p, const std::vector<uint64_t>& offsets) {
    for (size_t a = 0; a < p.buffers.size(); ++a)
        for (size_t b = a + 1; b < p.buffers.size(); ++b) {
            const Buffer& x = p.buffers[a];
            const Buffer& y = p.buffers[b];
            if (x.size == 0 || y.size == 0) continue;
            bool in_time = x.begin < y.end && y.begin < x.end;
            bool in_bytes = offsets[a] < offsets[b] + y.size && offsets[b] < offsets[a] + x.size;
            if (in_time && in_bytes) return true;
        }
    return false;
}

} // namespace

class TestValidator : public QObject {
    Q_OBJECT
  private slots:
    void acceptsValidPlans() {
        OffsetProblem p = problem({buf(0, 2, 8), buf(2, 4, 8), buf(0, 4, 4), buf(1, 3, 0)});
        // Touching lifetimes may share bytes; touching byte ranges never overlap; zero-size
        // buffers collide with nothing.
        validate_solution(p, {0, 0, 8, 9}, "a");
        validate_solution(OffsetProblem{}, {}, "empty");
    }

    void reportsCollisionNamingBothBuffers() {
        OffsetProblem p = problem({buf(0, 10, 100), buf(3, 7, 50)});
        auto f = test::capture_failure([&] {
            validate_solution(p, {0, 60}, "activations",
                              [](size_t i) { return "tensor 't" + std::to_string(i) + "'"; });
        });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::AddressCollision);
        const std::string text = f->what();
        QVERIFY2(contains(text, "tensor 't0'") && contains(text, "tensor 't1'"), f->what());
        QVERIFY2(contains(text, "[0, 100)") && contains(text, "[60, 110)"), f->what());
        QVERIFY2(contains(text, "live [0, 10)") && contains(text, "live [3, 7)"), f->what());
        QVERIFY2(contains(text, "'activations'") && contains(text, "time step 3"), f->what());
    }

    void defaultNamerSaysBufferIndex() {
        OffsetProblem p = problem({buf(0, 2, 4), buf(5, 9, 4), buf(1, 6, 4)});
        auto f = test::capture_failure([&] { validate_solution(p, {0, 0, 2}, "x"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::AddressCollision);
        QVERIFY2(contains(f->what(), "buffer 0") && contains(f->what(), "buffer 2"), f->what());
        QVERIFY2(contains(f->what(), "time step 1"), f->what());
        // The lower index is named first, whichever the scan met first, so messages are stable.
        const std::string text = f->what();
        QVERIFY2(text.find("buffer 0") < text.find("buffer 2"), f->what());
        auto g = test::capture_failure([&] { validate_solution(p, {2, 0, 0}, "x"); });
        QVERIFY(g.has_value());
        const std::string swapped = g->what();
        QVERIFY2(swapped.find("buffer 0") < swapped.find("buffer 2"), g->what());
    }

    void findsCollisionBeyondNeighbours() {
        // A wide buffer under two narrow ones already live: the new wide one meets both.
        OffsetProblem p = problem({buf(0, 10, 4), buf(0, 10, 4), buf(5, 6, 100)});
        TMMU_EXPECT_FAILURE(validate_solution(p, {10, 20, 0}, "x"), FailureCode::AddressCollision);
        // Same offset, both live: equal keys in the ordered set.
        OffsetProblem q = problem({buf(0, 3, 4), buf(2, 5, 4)});
        TMMU_EXPECT_FAILURE(validate_solution(q, {16, 16}, "x"), FailureCode::AddressCollision);
    }

    void rejectsMisalignment() {
        OffsetProblem p = problem({buf(0, 2, 8, 64)});
        auto f = test::capture_failure([&] { validate_solution(p, {32}, "x"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::AlignmentViolation);
        QVERIFY2(contains(f->message(), "64"), f->what());
        validate_solution(p, {128}, "x");
    }

    void rejectsMovedPins() {
        OffsetProblem p = problem({buf(0, 2, 8), buf(0, 2, 8)});
        p.buffers[1].pinned = 64;
        validate_solution(p, {0, 64}, "x");
        TMMU_EXPECT_FAILURE(validate_solution(p, {0, 8}, "x"), FailureCode::AlignmentViolation);
    }

    void checksAlignmentBeforeCollisions() {
        OffsetProblem p = problem({buf(0, 2, 8, 8), buf(0, 2, 8, 8)});
        TMMU_EXPECT_FAILURE(validate_solution(p, {0, 3}, "x"), FailureCode::AlignmentViolation);
    }

    void rejectsPlansOverCapacity() {
        OffsetProblem p = problem({buf(0, 2, 8), buf(0, 2, 8)}, 15);
        auto f = test::capture_failure([&] { validate_solution(p, {0, 8}, "weights"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::ArenaTooSmall);
        QVERIFY2(contains(f->message(), "16") && contains(f->message(), "15"), f->what());
        QVERIFY2(contains(f->where(), "weights"), f->what());
        p.capacity = 16;
        validate_solution(p, {0, 8}, "weights");
    }

    void rejectsWrongOffsetCount() {
        OffsetProblem p = problem({buf(0, 2, 8)});
        TMMU_EXPECT_FAILURE(validate_solution(p, {}, "x"), FailureCode::InvalidArgument);
    }

    void rejectsOverflowingPlacement() {
        OffsetProblem p = problem({buf(0, 2, 8)});
        TMMU_EXPECT_FAILURE(validate_solution(p, {UINT64_MAX - 3}, "x"),
                            FailureCode::AllocationOverflow);
    }

    void rejectsMalformedBuffers() {
        TMMU_EXPECT_FAILURE(validate_solution(problem({buf(4, 4, 8)}), {0}, "x"),
                            FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(validate_solution(problem({buf(0, 4, 8, 3)}), {0}, "x"),
                            FailureCode::AlignmentViolation);
    }

    void agreesWithPairwiseCheckOnRandomPlans() {
        std::mt19937_64 rng(7);
        int collisions = 0;
        for (uint32_t seed = 0; seed < 1500; ++seed) {
            OffsetProblem p = test::random_problem(seed, 1 + seed % 40, 1 + seed % 30, 64, false);
            if (seed % 5 == 0) p.buffers[0].size = 0;
            std::vector<uint64_t> offsets(p.buffers.size());
            const uint64_t spread = 16 + rng() % 1024;
            for (auto& o : offsets)
                o = rng() % spread;
            const bool expected = brute_force_collides(p, offsets);
            auto f = test::capture_failure([&] { validate_solution(p, offsets, "r"); });
            QCOMPARE(f.has_value(), expected);
            if (f) QCOMPARE(f->code(), FailureCode::AddressCollision);
            collisions += expected;
        }
        QVERIFY(collisions > 100 && collisions < 1400); // both outcomes exercised
    }
};

QTEST_GUILESS_MAIN(TestValidator)
#include "test_validator.moc"
