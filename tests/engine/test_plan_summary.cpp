// Whole-plan figures every front end shows (plan_summary.h) and the series helpers charts and
// reports draw through (memory_series.h): totals, time domain, dominant role, arena sums and
// the windowed max downsampler.
#include "plan/memory_series.h"
#include "plan/plan_summary.h"
#include "sample_plan.h"
#include "test_support.h"

#include <QObject>

#include <algorithm>
#include <random>

using namespace tmmu;

class TestPlanSummary : public QObject {
    Q_OBJECT
  private slots:
    void totalsSumEveryArena() {
        const Plan p = test::sample_plan();
        const PlanTotals t = plan_totals(p);
        QCOMPARE(t.peak_bytes, uint64_t(356 + 768));
        QCOMPARE(t.lower_bound, uint64_t(356 + 768));
        QCOMPARE(t.slot_count, uint64_t(2 + 2));
        QCOMPARE(t.buffers, uint64_t(2 + 3));
    }

    void totalsThatOverflowAreNamed() {
        Plan p = test::sample_plan();
        p.arenas[0].metrics.peak_bytes = UINT64_MAX;
        const auto f = test::capture_failure([&] { plan_totals(p); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::AllocationOverflow);
        QCOMPARE(QString::fromStdString(f->where()), QString("totals.peak_bytes"));
        p.arenas[0].metrics.peak_bytes = 1;
        p.arenas[1].metrics.lower_bound = UINT64_MAX;
        TMMU_EXPECT_FAILURE(plan_totals(p), FailureCode::AllocationOverflow);
    }

    // Seed 003's figures, by hand for the sample: activations stack a, b, c to 1280 bytes with no
    // reuse against a height of 768, and a and c share [0, 512); w2's 128-byte alignment puts it
    // at 256, so the parameters save nothing.
    void reuseIsMeasuredAgainstBytesOfTheirOwn() {
        const Plan p = test::sample_plan();
        const ArenaReuse params = arena_reuse(p.arenas[0]);
        QCOMPARE(params.isolated_bytes, uint64_t(356));
        QCOMPARE(params.saved_bytes, uint64_t(0));
        QCOMPARE(params.sharing_pairs, uint64_t(0));
        const ArenaReuse acts = arena_reuse(p.arenas[1]);
        QCOMPARE(acts.isolated_bytes, uint64_t(1280));
        QCOMPARE(acts.saved_bytes, uint64_t(512));
        QCOMPARE(acts.sharing_pairs, uint64_t(1));
        const ArenaReuse sum = plan_reuse(p);
        QCOMPARE(sum.isolated_bytes, uint64_t(1636));
        QCOMPARE(sum.saved_bytes, uint64_t(512));
        QCOMPARE(sum.sharing_pairs, uint64_t(1));
    }

    // A plan above its own stack saves nothing, never a wrapped-around figure; sizes past 2^64
    // saturate.
    void reuseFiguresNeverWrap() {
        ArenaPlan a;
        a.problem.buffers = {{0, 1, 1, 1, std::nullopt}, {1, 2, 1, 128, std::nullopt}};
        a.solution.offsets = {0, 0};
        a.metrics.peak_bytes = 1;
        QCOMPARE(arena_reuse(a).isolated_bytes, uint64_t(129));
        QCOMPARE(arena_reuse(a).saved_bytes, uint64_t(128));
        a.metrics.peak_bytes = 200; // a plan above its own stack (pins, say)
        QCOMPARE(arena_reuse(a).saved_bytes, uint64_t(0));
        const uint64_t half = uint64_t(1) << 63;
        a.problem.buffers = {{0, 1, half, 1, std::nullopt},
                             {1, 2, half, 1, std::nullopt},
                             {2, 3, 1, 4096, std::nullopt}};
        a.solution.offsets = {0, 0, 0};
        a.metrics.peak_bytes = half;
        QCOMPARE(arena_reuse(a).isolated_bytes, UINT64_MAX);
        QCOMPARE(arena_reuse(a).sharing_pairs, uint64_t(3));
    }

    // Without sharing nothing is saved, whatever order the plan chose for padded buffers: the
    // stack follows the plan's offsets (in index order it would be 129 bytes, "saving" 127).
    void onlySharingSaves() {
        ArenaPlan a;
        a.problem.buffers = {{0, 2, 1, 1, std::nullopt}, {0, 2, 1, 128, std::nullopt}};
        a.solution.offsets = {1, 0};
        a.metrics.peak_bytes = 2;
        const ArenaReuse r = arena_reuse(a);
        QCOMPARE(r.isolated_bytes, uint64_t(2));
        QCOMPARE(r.saved_bytes, uint64_t(0));
        QCOMPARE(r.sharing_pairs, uint64_t(0));
    }

    // The sweep against every pair, on random ranges (empty buffers share nothing).
    void sharingPairsAreEveryOverlap() {
        std::mt19937 rng(7);
        for (int round = 0; round < 50; ++round) {
            ArenaPlan a;
            const size_t n = rng() % 60;
            for (size_t i = 0; i < n; ++i) {
                a.problem.buffers.push_back({0, 1, rng() % 40, 1, std::nullopt});
                a.solution.offsets.push_back(rng() % 200);
            }
            std::vector<std::pair<uint32_t, uint32_t>> pairs;
            std::vector<std::vector<uint32_t>> with(n);
            for (uint32_t i = 0; i < n; ++i)
                for (uint32_t j = i + 1; j < n; ++j) {
                    const Buffer &x = a.problem.buffers[i], &y = a.problem.buffers[j];
                    const uint64_t xo = a.solution.offsets[i], yo = a.solution.offsets[j];
                    if (!x.size || !y.size || xo >= yo + y.size || yo >= xo + x.size) continue;
                    pairs.emplace_back(i, j);
                    with[i].push_back(j);
                    with[j].push_back(i);
                }
            QCOMPARE(arena_reuse(a).sharing_pairs, uint64_t(pairs.size()));
            std::vector<std::pair<uint32_t, uint32_t>> listed = sharing_pairs(a, UINT64_MAX);
            std::sort(listed.begin(), listed.end());
            QCOMPARE(listed, pairs);
            // A limit lists the first pairs the sweep meets and stops there.
            const uint64_t limit = pairs.size() / 2;
            const std::vector<std::pair<uint32_t, uint32_t>> first = sharing_pairs(a, limit);
            QCOMPARE(first.size(), size_t(limit));
            for (const auto& p : first)
                QVERIFY(std::binary_search(pairs.begin(), pairs.end(), p));
            for (uint32_t i = 0; i < n; ++i) {
                std::sort(with[i].begin(), with[i].end());
                const Buffer& b = a.problem.buffers[i];
                const uint64_t at = a.solution.offsets[i];
                QCOMPARE(buffers_sharing_bytes(a, i, at, at + b.size), with[i]);
            }
        }
    }

    // A view's bytes are part of its buffer's: only what overlaps them shares them.
    void aViewSharesOnlyItsOwnBytes() {
        ArenaPlan a;
        a.problem.buffers = {
            {0, 1, 100, 1, std::nullopt}, {1, 2, 40, 1, std::nullopt}, {1, 2, 40, 1, std::nullopt}};
        a.solution.offsets = {0, 0, 60};
        QCOMPARE(buffers_sharing_bytes(a, 0, 0, 100), (std::vector<uint32_t>{1, 2}));
        QCOMPARE(buffers_sharing_bytes(a, 0, 50, 100), (std::vector<uint32_t>{2}));
        QCOMPARE(buffers_sharing_bytes(a, 0, 50, 50), std::vector<uint32_t>{});
    }

    void timeEndIsTheScheduleOrTheLastLifetime() {
        Plan p = test::sample_plan();
        QCOMPARE(plan_time_end(p), uint64_t(p.execution_order.size()));
        p.execution_order.clear();
        QCOMPARE(plan_time_end(p), uint64_t(1)); // never an empty domain
        p.mode.reset();                          // a bare problem: one past the last end
        QCOMPARE(plan_time_end(p), uint64_t(4));
        p.tensors[3].life.end = 90;
        QCOMPARE(plan_time_end(p), uint64_t(90));
    }

    void dominantRoleIsTheMostCommonOne() {
        Plan p = test::sample_plan();
        QCOMPARE(dominant_role(p, 0), std::optional<Role>(Role::Parameter));
        QCOMPARE(dominant_role(p, 1), std::optional<Role>(Role::Activation)); // 3 of 4
        QCOMPARE(dominant_role(p, 7), std::optional<Role>());
        for (PlannedTensor& t : p.tensors)
            if (t.arena == 1) t.role = t.id == "a" ? Role::Activation : Role::Output;
        QCOMPARE(dominant_role(p, 1), std::optional<Role>(Role::Output));
    }

    void arenaSumsAddPointByPoint() {
        QCOMPARE(sum_over_arenas({{1, 2, 3}, {10, 20}}, 3), (std::vector<uint64_t>{11, 22, 3}));
        QCOMPARE(sum_over_arenas({}, 2), (std::vector<uint64_t>{0, 0}));
        QCOMPARE(stack_over_arenas({{1, 2, 3}, {10, 20}}, 3),
                 (std::vector<std::vector<uint64_t>>{{1, 2, 3}, {11, 22, 3}}));
        TMMU_EXPECT_FAILURE(sum_over_arenas({{UINT64_MAX}, {1}}, 1),
                            FailureCode::AllocationOverflow);
    }

    void downsamplingKeepsSmallSeriesExactAndPeaks() {
        const std::vector<uint64_t> t{0, 2, 5}, v{10, 30, 20};
        const auto exact = downsample_max(t, v, 8, 16);
        QCOMPARE(exact.size(), size_t(6));
        QCOMPARE(exact[1].time, 2.0);
        QCOMPARE(exact[5].time, 8.0); // the last sample holds until end
        QCOMPARE(exact[5].value, uint64_t(20));
        // One bucket over everything: the maximum of all samples.
        const auto one = downsample_max(t, v, 8, 1);
        QCOMPARE(one.size(), size_t(2));
        QCOMPARE(one[0].value, uint64_t(30));
        QCOMPARE(one[1].time, 8.0);
    }

    void windowedDownsamplingSeesOnlyTheWindow() {
        std::vector<uint64_t> t(1000), v(1000);
        for (size_t i = 0; i < t.size(); ++i) {
            t[i] = i;
            v[i] = i % 7;
        }
        v[10] = 1000; // outside the window: must not show
        v[500] = 900; // inside
        const auto w = downsample_max(t, v, 1000, 10, 400.0, 600.0);
        QCOMPARE(w.size(), size_t(20));
        QCOMPARE(w.front().time, 400.0);
        QCOMPARE(w.back().time, 600.0);
        uint64_t top = 0;
        for (const SeriesPoint& s : w)
            top = std::max(top, s.value);
        QCOMPARE(top, uint64_t(900));
        // A window holding few samples keeps them exactly, starting with the one holding `from`.
        const auto few = downsample_max(t, v, 1000, 10, 499.5, 502.0);
        QCOMPARE(few.size(), size_t(6));
        QCOMPARE(few[0].time, 499.0);
        QCOMPARE(few[2].value, uint64_t(900));
        QVERIFY(downsample_max(t, v, 1000, 10, 600.0, 600.0).empty());
    }
};

QTEST_GUILESS_MAIN(TestPlanSummary)
#include "test_plan_summary.moc"
