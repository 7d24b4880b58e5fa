// Whole-plan figures every front end shows (plan_summary.h) and the series helpers charts and
// reports draw through (memory_series.h): totals, time domain, dominant role, arena sums and
// the windowed max downsampler.
#include "plan/memory_series.h"
#include "plan/plan_summary.h"
#include "sample_plan.h"
#include "test_support.h"

#include <QObject>

#include <algorithm>

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
