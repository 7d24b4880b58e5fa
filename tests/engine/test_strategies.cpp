#include "plan/random_problem.h"
#include "plan/strategies/best_fit.h"
#include "plan/strategies/executorch_greedy.h"
#include "plan/strategies/ffd.h"
#include "plan/strategies/framework_heuristics.h"
#include "plan/strategies/multi_order.h"
#include "plan/strategies/placement.h"
#include "plan/strategy.h"
#include "plan/validator.h"
#include "test_support.h"

#include <QObject>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

using namespace tmmu;

namespace {

Buffer buf(uint64_t begin, uint64_t end, uint64_t size, uint64_t alignment = 1) {
    Buffer b;
    b.begin = begin;
    b.end = end;
    b.size = size;
    b.alignment = alignment;
    return b;
}

OffsetProblem problem(std::vector<Buffer> buffers) {
    OffsetProblem p;
    p.buffers = std::move(buffers);
    return p;
}

OffsetSolution solve(std::string_view strategy, const OffsetProblem& p) {
    const OffsetStrategy* s = find_strategy(strategy);
    if (!s) throw std::logic_error("no strategy " + std::string(strategy));
    OffsetSolution sol = s->solve(p, Progress{});
    validate_solution(p, sol.offsets, strategy);
    return sol;
}

// Greedy-size beats ffd here: the 30-byte buffer fits the gap left under the 80-byte one.
OffsetProblem gap_example() {
    return problem(
        {buf(0, 10, 100), buf(0, 3, 80), buf(0, 10, 70), buf(5, 10, 50), buf(4, 10, 30)});
}

} // namespace

class TestStrategies : public QObject {
    Q_OBJECT
  private slots:
    void registryListsStrategiesInOrder() {
        std::vector<std::string> names;
        for (const OffsetStrategy* s : all_strategies()) {
            names.emplace_back(s->name());
            QVERIFY(!s->description().empty());
            QCOMPARE(find_strategy(s->name()), s);
        }
        QCOMPARE(names,
                 (std::vector<std::string>{"slots", "ffd", "greedy-size", "best-fit", "tflm-greedy",
                                           "tflite-arena", "xla-spatial", "xla-temporal",
                                           "tvm-size", "tvm-conflicts", "ort-online",
                                           "executorch-greedy", "multi-order", "auto", "optimal"}));
        QVERIFY(find_strategy("first-fit") == nullptr);
    }

    void everyStrategyHandlesTrivialProblems() {
        for (const OffsetStrategy* s : all_strategies()) {
            OffsetSolution empty = s->solve(OffsetProblem{}, Progress{});
            QVERIFY(empty.offsets.empty());
            QCOMPARE(empty.height, 0u);
            OffsetSolution one = s->solve(problem({buf(3, 9, 77, 64)}), Progress{});
            QCOMPARE(one.offsets, (std::vector<uint64_t>{0}));
            QCOMPARE(one.height, 77u);
            OffsetSolution chain =
                solve(s->name(), problem({buf(0, 1, 5), buf(1, 2, 9), buf(2, 3, 2)}));
            QCOMPARE(chain.height, 9u);
        }
    }

    void theAlignedBoundCountsTheRoundingOfAllButTheTopBuffer() {
        // Three 1-byte buffers at 64-byte offsets: two of them take 64 bytes, the top one 1.
        const OffsetProblem tiny = problem({buf(0, 2, 1, 64), buf(0, 2, 1, 64), buf(1, 3, 1, 64)});
        QCOMPARE(lower_bound_bytes(tiny), 3u);
        QCOMPARE(aligned_lower_bound_bytes(tiny), 129u);
        for (const OffsetStrategy* s : all_strategies())
            QCOMPARE(solve(s->name(), tiny).height, 129u);
        // Offsets are multiples of the smallest alignment (4): 3 -> 4 and 5 -> 8, less the
        // larger rounding (3) of the top one: 9, below the best plan (5 at 0, 3 at 8: 11).
        const OffsetProblem mixed = problem({buf(0, 2, 3, 4), buf(0, 2, 5, 16), buf(2, 3, 0, 8)});
        QCOMPARE(lower_bound_bytes(mixed), 8u);
        QCOMPARE(aligned_lower_bound_bytes(mixed), 9u);
        QCOMPARE(solve("optimal", mixed).height, 11u);
        QCOMPARE(aligned_lower_bound_bytes(problem({})), 0u);
    }

    void buffersAllLiveAtOnceArePlacedEndToEnd() {
        // A parameter arena of many small shape constants (an exported model's folded shape
        // computations): every buffer is live at once, and slots is at the aligned bound, where
        // auto stops. The plan is the one auto chose before it stopped there; what changed is
        // the time (16,641 such parameters: 7.2 s before, 6 ms now), which no test measures.
        std::vector<Buffer> buffers;
        for (uint64_t i = 0; i < 5000; ++i)
            buffers.push_back(buf(0, 100, 8 + i % 3 * 8, 64));
        const OffsetProblem clique = problem(buffers);
        const OffsetSolution s = solve("auto", clique);
        QCOMPARE(s.producer, std::string("slots"));
        QCOMPARE(s.height, aligned_lower_bound_bytes(clique));
        QCOMPARE(s.height, 4999u * 64 + 8); // an 8-byte buffer on top
    }

    void everyStrategyReachesTheMinimallocExample() {
        // input.12.csv: optimum 12 = lower bound.
        OffsetProblem p =
            problem({buf(0, 3, 4), buf(3, 9, 4), buf(0, 9, 4), buf(9, 21, 4), buf(0, 21, 4)});
        QCOMPARE(lower_bound_bytes(p), 12u);
        for (const OffsetStrategy* s : all_strategies())
            QCOMPARE(solve(s->name(), p).height, 12u);
    }

    void slotsLaysSlotsOutByAlignedPrefixSum() {
        // Slots: {b1 (20 B, align 16)} and {b0, b2} (max 10 B, align 8).
        OffsetProblem p = problem({buf(0, 2, 10, 8), buf(0, 4, 20, 16), buf(2, 4, 5)});
        OffsetSolution s = solve("slots", p);
        QCOMPARE(s.offsets, (std::vector<uint64_t>{24, 0, 24}));
        QCOMPARE(s.height, 34u);
        QCOMPARE(s.producer, std::string("slots"));
    }

    void slotsStartAbovePinnedBuffers() {
        OffsetProblem p =
            problem({buf(0, 2, 10, 8), buf(0, 4, 20, 16), buf(2, 4, 5), buf(6, 7, 4)});
        p.buffers[3].pinned = 0;
        OffsetSolution s = solve("slots", p);
        QCOMPARE(s.offsets, (std::vector<uint64_t>{40, 16, 40, 0}));
    }

    void ffdSharesRegionsFirstFit() {
        OffsetSolution s = solve("ffd", gap_example());
        // Regions: [0,100) b0, [100,180) b1 then b3, [180,250) b2, [250,280) b4 (b4 overlaps b3).
        QCOMPARE(s.offsets, (std::vector<uint64_t>{0, 100, 180, 100, 250}));
        QCOMPARE(s.height, 280u);
    }

    void greedySizeFillsTheSmallestGap() {
        OffsetSolution s = solve("greedy-size", gap_example());
        QCOMPARE(s.offsets, (std::vector<uint64_t>{0, 100, 180, 100, 150}));
        QCOMPARE(s.height, 250u);
        QCOMPARE(s.height, lower_bound_bytes(gap_example()));
    }

    void bestGapPrefersTheSmallestThenTheLowest() {
        using placement::Span;
        std::vector<Span> spans{{0, 10}, {50, 60}, {100, 140}, {170, 200}};
        QCOMPARE(placement::best_gap(spans, 30, 1, 0), 140u);  // gaps 40, 40, 30
        QCOMPARE(placement::best_gap(spans, 30, 16, 0), 16u);  // 144 + 30 > 170; 40 vs 40
        QCOMPARE(placement::best_gap(spans, 35, 1, 0), 10u);   // two gaps of 40: the lower
        QCOMPARE(placement::best_gap(spans, 41, 1, 0), 200u);  // none fits: on top
        QCOMPARE(placement::best_gap(spans, 41, 64, 0), 256u); // aligned top
        std::vector<Span> nested{{0, 100}, {20, 30}, {40, 150}, {160, 170}};
        QCOMPARE(placement::best_gap(nested, 10, 1, 0), 150u);
        QCOMPARE(placement::best_gap({}, 10, 8, 0), 0u);
        std::vector<Span> high{{64, 80}};
        QCOMPARE(placement::best_gap(high, 64, 1, 0), 0u);
    }

    void firstGapTakesTheLowestThatFits() {
        using placement::Span;
        std::vector<Span> spans{{0, 10}, {50, 60}, {100, 140}, {170, 200}};
        QCOMPARE(placement::first_gap(spans, 30, 1, 0), 10u);   // best_gap takes 140
        QCOMPARE(placement::first_gap(spans, 40, 1, 0), 10u);   // exactly the first gap
        QCOMPARE(placement::first_gap(spans, 30, 16, 0), 16u);  // 16 + 30 <= 50
        QCOMPARE(placement::first_gap(spans, 41, 1, 0), 200u);  // none fits: on top
        QCOMPARE(placement::first_gap(spans, 45, 64, 0), 256u); // aligned starts never fit
        std::vector<Span> nested{{0, 100}, {20, 30}, {40, 150}, {160, 170}};
        QCOMPARE(placement::first_gap(nested, 10, 1, 0), 150u);
        QCOMPARE(placement::first_gap({}, 10, 8, 0), 0u);
        std::vector<Span> high{{64, 80}};
        QCOMPARE(placement::first_gap(high, 64, 1, 0), 0u);
        std::vector<Span> top{{0, UINT64_MAX - 3}};
        TMMU_EXPECT_FAILURE(placement::first_gap(top, 1, 8, 7), FailureCode::AllocationOverflow);
    }

    void gapRulesPlaceDifferently() {
        // Pins at 0, 50 and 80 leave gaps of 40 at 10 and of 20 at 60.
        OffsetProblem p = problem({buf(0, 10, 10), buf(0, 10, 10), buf(0, 10, 10), buf(0, 10, 20)});
        p.buffers[0].pinned = 0;
        p.buffers[1].pinned = 50;
        p.buffers[2].pinned = 80;
        const std::vector<uint32_t> order{0, 1, 2, 3};
        for (auto search : {placement::OverlapSearch::Scan, placement::OverlapSearch::Index}) {
            placement::GapPlacer placer(p, search);
            auto seed = placement::seed_solution(p);
            QCOMPARE(placer.place(seed, order, Progress{}, "t", placement::GapRule::Best)[3], 60u);
            QCOMPARE(placer.place(seed, order, Progress{}, "t", placement::GapRule::First)[3], 10u);
        }
    }

    void radixSortOrdersByOffset() {
        std::mt19937_64 rng(3);
        std::vector<placement::Span> spans, scratch;
        for (size_t n : {0, 1, 5, 32, 33, 100, 1000}) {
            for (int shift : {0, 20, 50}) {
                spans.clear();
                for (size_t i = 0; i < n; ++i) {
                    uint64_t o = (rng() % 5000) << shift;
                    spans.push_back({o, o + i});
                }
                auto expected = spans;
                std::stable_sort(expected.begin(), expected.end(),
                                 [](auto& a, auto& b) { return a.offset < b.offset; });
                placement::sort_by_offset(spans, scratch);
                for (size_t i = 0; i < n; ++i) {
                    QCOMPARE(spans[i].offset, expected[i].offset);
                    QCOMPARE(spans[i].end, expected[i].end); // stable
                }
            }
        }
    }

    // The last problems have long lifetimes (up to thousands of time ranks each), whose index
    // starts with wider bins (up to the widest).
    void overlapIndexReportsEachOverlapOnce() {
        std::mt19937_64 rng(11);
        for (uint32_t seed = 0; seed < 66; ++seed) {
            OffsetProblem p =
                seed < 60 ? test::random_problem(seed, 1 + seed * 7, 1 + seed * 13, 100, false)
                          : dense_random_problem(seed, 500 * (seed - 58),
                                                 100 * (seed - 58) * (seed - 58));
            placement::OverlapIndex index(p);
            std::vector<bool> inserted(p.buffers.size(), false);
            std::vector<placement::Span> found;
            for (uint32_t i = 0; i < p.buffers.size(); ++i) {
                if (rng() % 3 == 0) {
                    index.insert(i, {i, i + 1}); // offset = index identifies the buffer
                    inserted[i] = true;
                }
                uint32_t q = uint32_t(rng() % p.buffers.size());
                index.query(q, found);
                std::vector<uint64_t> got;
                for (auto& s : found)
                    got.push_back(s.offset);
                std::sort(got.begin(), got.end());
                std::vector<uint64_t> want;
                for (uint32_t j = 0; j < p.buffers.size(); ++j)
                    if (inserted[j] && p.buffers[j].begin < p.buffers[q].end &&
                        p.buffers[q].begin < p.buffers[j].end)
                        want.push_back(j);
                QCOMPARE(got, want);
            }
        }
    }

    void indexAndScanPlaceIdentically() {
        for (uint32_t seed = 0; seed < 40; ++seed) {
            OffsetProblem p = test::random_problem(seed, 50 + seed * 40, 10 + seed * 50,
                                                   seed % 2 ? 1 << 20 : 1000, seed % 3 == 0);
            if (seed % 4 == 0) p.buffers[seed % p.buffers.size()].pinned = 4096;
            const auto seed_solution = placement::seed_solution(p);
            placement::GapPlacer scan(p, placement::OverlapSearch::Scan);
            placement::GapPlacer index(p, placement::OverlapSearch::Index);
            for (auto order :
                 {placement::order_by_size(p), placement::order_by_length(p),
                  placement::order_by_area(p), placement::order_by_begin(p),
                  placement::order_by_conflicts(p), placement::order_by_conflict_bytes(p)}) {
                for (auto rule : {placement::GapRule::Best, placement::GapRule::First}) {
                    auto a = scan.place(seed_solution, order, Progress{}, "t", rule);
                    auto b = index.place(seed_solution, order, Progress{}, "t", rule);
                    QCOMPARE(a, b);
                }
            }
        }
    }

    void ordersBreakTiesByIndex() {
        OffsetProblem p = problem({buf(0, 4, 10), buf(0, 2, 10), buf(5, 9, 10), buf(0, 1, 40)});
        QCOMPARE(placement::order_by_size(p), (std::vector<uint32_t>{3, 0, 2, 1}));
        QCOMPARE(placement::order_by_length(p), (std::vector<uint32_t>{0, 2, 1, 3}));
        QCOMPARE(placement::order_by_area(p), (std::vector<uint32_t>{0, 2, 3, 1})); // all 40 but b1
        QCOMPARE(placement::order_by_begin(p), (std::vector<uint32_t>{3, 0, 1, 2}));
        QCOMPARE(placement::order_by_size_begin(p), (std::vector<uint32_t>{3, 0, 1, 2}));
        QCOMPARE(placement::order_by_size_end(p), (std::vector<uint32_t>{3, 2, 0, 1}));
        // Conflicts: b0 meets b1 and b3; b1 meets b0, b3; b3 meets b0, b1; b2 meets none.
        QCOMPARE(placement::conflict_counts(p), (std::vector<uint64_t>{2, 2, 0, 2}));
        QCOMPARE(placement::order_by_conflicts(p), (std::vector<uint32_t>{3, 0, 1, 2}));
        QCOMPARE(placement::OverlapIndex(p).overlapping_pairs(), 3u);
        // Conflict bytes: b0 meets 10 + 40, b1 meets 10 + 40, b2 none, b3 meets 10 + 10.
        QCOMPARE(placement::order_by_conflict_bytes(p), (std::vector<uint32_t>{0, 1, 3, 2}));
        QCOMPARE(placement::order_by_begin_end(p), (std::vector<uint32_t>{3, 1, 0, 2}));
    }

    void conflictCountsMatchPairwiseChecks() {
        for (uint32_t seed = 0; seed < 40; ++seed) {
            OffsetProblem p = test::random_problem(seed, seed * 5, 1 + seed * 3, 100, false);
            std::vector<uint64_t> want(p.buffers.size(), 0);
            std::vector<placement::Bytes> bytes(p.buffers.size(), 0);
            uint64_t pairs = 0;
            for (size_t i = 0; i < p.buffers.size(); ++i)
                for (size_t j = 0; j < i; ++j)
                    if (p.buffers[i].begin < p.buffers[j].end &&
                        p.buffers[j].begin < p.buffers[i].end) {
                        ++want[i];
                        ++want[j];
                        bytes[i] += p.buffers[j].size;
                        bytes[j] += p.buffers[i].size;
                        ++pairs;
                    }
            QCOMPARE(placement::conflict_counts(p), want);
            QVERIFY(placement::conflict_bytes(p) == bytes);
            QCOMPARE(placement::OverlapIndex(p).overlapping_pairs(), pairs);
        }
    }

    void placeAfterKeepsThePrefixAndPlacesTheRest() {
        for (uint32_t seed = 0; seed < 20; ++seed) {
            OffsetProblem p = test::random_problem(seed, 300, 400, 1 << 12, seed % 2);
            if (seed % 3 == 0) p.buffers[7].pinned = 1 << 14;
            const auto seed_solution = placement::seed_solution(p);
            for (auto search : {placement::OverlapSearch::Scan, placement::OverlapSearch::Index}) {
                placement::GapPlacer placer(p, search);
                const auto rule = seed % 2 ? placement::GapRule::First : placement::GapRule::Best;
                const auto order = placement::order_by_size(p);
                const auto first = placer.place(seed_solution, order, Progress{}, "t", rule);
                const uint64_t full_work = placer.last_work();
                // Same first 100 buffers, the rest reversed.
                auto other = order;
                std::reverse(other.begin() + 100, other.end());
                const auto want = placer.place(seed_solution, other, Progress{}, "t", rule);
                const auto got =
                    placer.place_after(seed_solution, other, 100, first, Progress{}, "t", rule);
                QCOMPARE(got, want);
                QVERIFY(placer.last_work() < full_work); // the prefix was not searched
                QCOMPARE(placer.place_after(seed_solution, order, order.size(), first, Progress{},
                                            "t", rule),
                         first);
            }
        }
    }

    void denseProblemsScanAndSparseOnesUseTheIndex() {
        // 2000 buffers all alive together: every pair overlaps, the index would report them
        // all. 2000 one-step buffers in sequence: no pair overlaps.
        OffsetProblem dense, sparse;
        for (uint64_t i = 0; i < 2000; ++i) {
            dense.buffers.push_back(buf(i, 4000, 8));
            sparse.buffers.push_back(buf(i, i + 1, 8));
        }
        QVERIFY(placement::GapPlacer(dense).scans());
        QVERIFY(!placement::GapPlacer(sparse).scans());
        QVERIFY(placement::GapPlacer(problem({buf(0, 1, 1)})).scans()); // small: always scans
    }

    void bestFitKeepsTheLowestOrder() {
        for (uint32_t seed = 0; seed < 30; ++seed) {
            OffsetProblem p = test::random_problem(seed, 200, 300, 1 << 16, seed % 2);
            const auto seed_solution = placement::seed_solution(p);
            placement::GapPlacer placer(p);
            uint64_t best = UINT64_MAX;
            for (auto order : {placement::order_by_size(p), placement::order_by_length(p),
                               placement::order_by_area(p)})
                best = std::min(
                    best, test::height_of(p, placer.place(seed_solution, order, Progress{}, "t")));
            OffsetSolution bf = solve("best-fit", p);
            QCOMPARE(bf.height, best);
            QCOMPARE(bf.producer, std::string("best-fit"));
            // greedy-size is best-fit's spatial run, which auto reuses.
            BestFitRuns runs = solve_best_fit_runs(p, Progress{});
            OffsetSolution greedy = solve("greedy-size", p);
            QVERIFY(runs.spatial && runs.best); // no limit: both there
            QCOMPARE(runs.spatial->offsets, greedy.offsets);
            QCOMPARE(runs.spatial->producer, std::string("greedy-size"));
        }
    }

    void multiOrderIsNeverAboveBestFitAndSharesItsRuns() {
        size_t lower = 0;
        for (uint32_t seed = 0; seed < 30; ++seed) {
            OffsetProblem p = test::random_problem(seed, 150, 200, 1 << 16, seed % 2);
            OffsetSolution bf = solve("best-fit", p);
            OffsetSolution mo = solve("multi-order", p);
            QVERIFY(mo.height <= bf.height);
            QVERIFY(mo.height >= lower_bound_bytes(p));
            QCOMPARE(mo.producer, std::string("multi-order"));
            lower += mo.height < bf.height;
            MultiOrderRuns runs = solve_multi_order_runs(p, Progress{});
            QCOMPARE(runs.best.offsets, mo.offsets);
            QVERIFY(!runs.shares_first); // small: best-fit's plans are all there
            QVERIFY(runs.best_fit.spatial && runs.best_fit.best);
            QCOMPARE(runs.best_fit.best->offsets, bf.offsets);
            QCOMPARE(runs.best_fit.spatial->offsets, solve("greedy-size", p).offsets);
        }
        QVERIFY2(lower >= 15, std::to_string(lower).c_str()); // lower on half of them (17)
    }

    void multiOrderStopsAtTheLowerBound() {
        // best-fit already reaches the bound: nothing else is tried, its plan is kept.
        OffsetSolution mo = solve("multi-order", gap_example());
        QCOMPARE(mo.height, lower_bound_bytes(gap_example()));
        QCOMPARE(mo.offsets, solve("best-fit", gap_example()).offsets);
    }

    // On the realistic random problem of 500 buffers every size order and every framework
    // planner ends 1.59% over the lower bound (measured); placing the buffers live at the peak
    // first reaches it, and that one pass ends multi-order's search (and so auto's).
    void peakFirstProbeEndsTheSearchAtTheBound() {
        const OffsetProblem p = realistic_random_problem(1, 500);
        const uint64_t bound = lower_bound_bytes(p);
        for (const char* name :
             {"greedy-size", "best-fit", "tflm-greedy", "tflite-arena", "xla-spatial",
              "xla-temporal", "tvm-size", "tvm-conflicts", "ort-online", "executorch-greedy"})
            QVERIFY2(solve(name, p).height > bound, name);
        placement::GapPlacer placer(p);
        const std::vector<uint64_t> probe =
            placer.place(placement::seed_solution(p), placement::order_peak_first(p), Progress{},
                         "test", placement::GapRule::First);
        QCOMPARE(solution_height(p, probe), bound);
        const OffsetSolution mo = solve("multi-order", p);
        QCOMPARE(mo.offsets, probe);
        const OffsetSolution chosen = solve("auto", p);
        QCOMPARE(chosen.offsets, probe);
        QCOMPARE(chosen.producer, std::string("multi-order"));
    }

    // Past 2,048 buffers multi-order also searches the largest buffers alone (a few percent of
    // them: many runs of them fit its budget) and places the others around them. On the
    // realistic random problem of 10,000 buffers that reaches the lower bound, against 3.89%
    // over it for the best framework planner and 3.99% for best-fit (measured): the margin
    // asserted here is a quarter of that gap.
    void bigFirstEndsClearlyBelowTheFrameworks() {
        const OffsetProblem p = realistic_random_problem(1, 10000);
        const OffsetSolution mo = solve("multi-order", p);
        uint64_t framework = UINT64_MAX;
        for (const char* name : {"tflm-greedy", "tflite-arena", "xla-spatial", "xla-temporal",
                                 "tvm-size", "tvm-conflicts", "ort-online", "executorch-greedy"})
            framework = std::min(framework, solve(name, p).height);
        const std::string heights = std::to_string(mo.height) + " vs " + std::to_string(framework);
        QVERIFY2(double(mo.height) * 1.01 < double(framework), heights.c_str());
        QVERIFY2(double(mo.height) * 1.01 < double(solve("best-fit", p).height), heights.c_str());
        QVERIFY(mo.height >= lower_bound_bytes(p));
    }

    // The largest buffers are searched as a problem of their own: the pins go with them, and
    // the answer is the same every time.
    void bigFirstKeepsPinsAndRepeats() {
        OffsetProblem p = realistic_random_problem(3, 4000);
        for (uint32_t k = 1; k <= 4; ++k)
            p.buffers[k * 997].pinned = uint64_t(k) << 31; // far apart: no two collide
        const OffsetSolution first = solve("multi-order", p);
        QCOMPARE(solve("multi-order", p).offsets, first.offsets);
        for (uint32_t k = 1; k <= 4; ++k)
            QCOMPARE(first.offsets[k * 997], uint64_t(k) << 31);
        QVERIFY(first.height <= solve("best-fit", p).height);
    }

    // Above 2,048 buffers best-fit's runs, the big-first stage's shares and the framework
    // planners run side by side; the plans are the same for any count of threads
    // (TMMU_PLAN_THREADS), and a count that is not one is refused by name.
    // Where the budget affords no reordering (these dense problems, and the random ones from
    // about 100,000 buffers), multi-order places the big-first shares first and lets every
    // other pass give up above the lowest of them: the same plan as placing the stages in their
    // order (the schedule other_start keeps), on one thread and with the orders made on a
    // helper while the first share is placed.
    void sharesFirstGivesTheSamePlan() {
        // The third: a pin far above every plan, so that every pass ties at its top and the
        // first (best-fit's spatial run) must win, though it ran after the shares.
        OffsetProblem pinned = dense_random_problem(7, 4000, 300);
        pinned.buffers.push_back({0, kMaxTimeStep, 64, 64, uint64_t(1) << 40});
        const OffsetProblem problems[] = {dense_random_problem(7, 4000, 300),
                                          dense_random_problem(2, 6000, 500), pinned};
        size_t gave_up = 0;
        for (const char* threads : {"1", "2"}) {
            qputenv("TMMU_PLAN_THREADS", threads);
            for (const OffsetProblem& p : problems) {
                const MultiOrderRuns first = solve_multi_order_runs(p, Progress{});
                const MultiOrderRuns in_order =
                    solve_multi_order_runs(p, Progress{}, {.other_start = true});
                QVERIFY(first.shares_first);
                QVERIFY(!in_order.shares_first);
                QCOMPARE(first.best.offsets, in_order.best.offsets);
                QCOMPARE(first.placed.size(), in_order.placed.size());
                for (size_t k = 0; k < first.placed.size(); ++k)
                    QVERIFY(first.placed[k].order == in_order.placed[k].order &&
                            first.placed[k].rule == in_order.placed[k].rule);
                // best-fit's plans: the same where there, missing only above the best.
                const BestFitRuns& bf = first.best_fit;
                for (auto [plan, full] : {std::pair{&bf.spatial, &in_order.best_fit.spatial},
                                          std::pair{&bf.best, &in_order.best_fit.best}}) {
                    QVERIFY(*full);
                    if (*plan) {
                        QCOMPARE((*plan)->offsets, (*full)->offsets);
                    } else {
                        QVERIFY((*full)->height > first.best.height);
                        ++gave_up;
                    }
                }
            }
        }
        qunsetenv("TMMU_PLAN_THREADS");
        QVERIFY(gave_up > 0); // the passes did give up early
        // Where the budget affords reordering steps (which start from the plans before them),
        // the stages keep their order.
        QVERIFY(
            !solve_multi_order_runs(realistic_random_problem(2, 3000), Progress{}).shares_first);
    }

    void plansDoNotDependOnThreads() {
        const OffsetProblem problems[] = {realistic_random_problem(2, 3000),
                                          dense_random_problem(7, 4000, 300)};
        for (const OffsetProblem& p : problems) {
            for (const char* strategy : {"best-fit", "multi-order", "auto"}) {
                std::vector<OffsetSolution> plans;
                for (const char* threads : {"1", "2", "3", "4"}) {
                    qputenv("TMMU_PLAN_THREADS", threads);
                    plans.push_back(solve(strategy, p));
                    QCOMPARE(plans.back().offsets, plans.front().offsets);
                    QCOMPARE(plans.back().producer, plans.front().producer);
                }
                qunsetenv("TMMU_PLAN_THREADS");
                QCOMPARE(solve(strategy, p).offsets, plans.front().offsets);
            }
        }
        for (const char* bad : {"0", "two", "-1", "3x"}) {
            qputenv("TMMU_PLAN_THREADS", bad);
            TMMU_EXPECT_FAILURE(solve("multi-order", gap_example()), FailureCode::InvalidArgument);
        }
        qunsetenv("TMMU_PLAN_THREADS");
    }

    // Cancelling while the shares run on threads stops them all and reports the cancellation
    // (not a crash, not a hang): at whatever moment the flag is set.
    void cancellingStopsTheSharesThreads() {
        const OffsetProblem p = realistic_random_problem(1, 60000);
        qputenv("TMMU_PLAN_THREADS", "3");
        for (int delay_ms : {5, 60, 150}) {
            std::atomic<bool> cancel{false};
            Progress progress;
            progress.cancel_flag = &cancel;
            std::thread canceller([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
                cancel = true;
            });
            TMMU_EXPECT_FAILURE(find_strategy("multi-order")->solve(p, progress),
                                FailureCode::Cancelled);
            canceller.join();
        }
        qunsetenv("TMMU_PLAN_THREADS");
    }

    void multiOrderBudgetGrowsLinearly() {
        QVERIFY(multi_order_budget(0) == 0);
        uint64_t last = 0;
        for (size_t n : {1, 10, 500, 2000, 10000, 60000, 1000000}) {
            const uint64_t b = multi_order_budget(n);
            QVERIFY(b > last);
            last = b;
        }
        // Past a few thousand buffers: a fixed share plus a fixed amount per buffer.
        const uint64_t per_buffer = multi_order_budget(2000000) - multi_order_budget(1000000);
        QCOMPARE(multi_order_budget(4000000) - multi_order_budget(3000000), per_buffer);
        QVERIFY(multi_order_budget(size_t(1) << 40) / (uint64_t(1) << 40) <=
                per_buffer / 1000000 + 1);
    }

    // TFLite Micro's planner takes equal sizes in reverse index order (its sort arrays fill
    // from the tail), then the lowest offset that fits; greedy-size breaks the same tie by
    // lifetime, then index. Two equal buffers alive together show the difference.
    void tflmGreedyTakesEqualSizesInReverseIndexOrder() {
        const OffsetProblem p = problem({buf(0, 4, 8), buf(0, 4, 8), buf(4, 6, 8)});
        QCOMPARE(solve("tflm-greedy", p).offsets, (std::vector<uint64_t>{8, 0, 0}));
        QCOMPARE(solve("greedy-size", p).offsets, (std::vector<uint64_t>{0, 8, 0}));
        // Order 2, 0 (the 16s from the higher index), 1, then 4, 3: buffer 4 takes the gap
        // [16, 32) that buffer 0's end leaves, buffer 3 goes on top.
        const OffsetProblem later =
            problem({buf(0, 2, 16), buf(0, 4, 8), buf(1, 4, 16), buf(0, 4, 4), buf(2, 4, 4)});
        QCOMPARE(solve("tflm-greedy", later).offsets, (std::vector<uint64_t>{16, 32, 0, 40, 16}));
    }

    // The two frameworks' gap rules: pins (their offline-planned buffers) leave an 8-byte gap
    // at 0 and a 2-byte one at 12; a 2-byte buffer takes the first (TFLite Micro) or the
    // smallest (TFLite's arena).
    void frameworkGapRulesDiffer() {
        OffsetProblem p = problem({buf(0, 4, 4), buf(0, 4, 4), buf(0, 4, 2)});
        p.buffers[0].pinned = 8;
        p.buffers[1].pinned = 14;
        QCOMPARE(solve("tflm-greedy", p).offsets, (std::vector<uint64_t>{8, 14, 0}));
        QCOMPARE(solve("tflite-arena", p).offsets, (std::vector<uint64_t>{8, 14, 12}));
    }

    // TFLite's arena planner places the buffers that live through the whole problem first (by
    // index), then size desc, then begin asc, each in the smallest gap that holds it.
    void tfliteArenaPlacesWholeLifeBuffersFirst() {
        // Buffer 1 lives through [0, 4): first, at 0, though it is the smallest.
        const OffsetProblem whole = problem({buf(1, 3, 100), buf(0, 4, 8), buf(0, 2, 50)});
        QCOMPARE(solve("tflite-arena", whole).offsets, (std::vector<uint64_t>{8, 0, 108}));
        QCOMPARE(solve("greedy-size", whole).offsets, (std::vector<uint64_t>{0, 150, 100}));
        // Equal sizes by begin: buffer 1 starts first, so it takes 0.
        const OffsetProblem begins = problem({buf(2, 4, 16), buf(1, 3, 16)});
        QCOMPARE(solve("tflite-arena", begins).offsets, (std::vector<uint64_t>{16, 0}));
    }

    // XLA's heap rule: the space between the overlapping buffers' top and the heap's height so
    // far is a chunk like any other. Buffer 3 overlaps only buffer 2 ([40, 70)): below it a
    // 40-byte gap, above it 10 bytes up to the height 80 that buffer 0 set. XLA takes the
    // tighter 10 bytes; a plain smallest-gap rule (TFLite's arena) sees only the gap below.
    void xlaCountsTheSpaceBelowTheHeapAsAChunk() {
        const OffsetProblem p =
            problem({buf(0, 2, 80), buf(2, 4, 40), buf(2, 6, 30), buf(4, 6, 10)});
        QCOMPARE(solve("xla-spatial", p).offsets, (std::vector<uint64_t>{0, 0, 40, 70}));
        QCOMPARE(solve("tflite-arena", p).offsets, (std::vector<uint64_t>{0, 0, 40, 0}));
        // Temporal order: the longest lifetime first (buffer 2), the rest by length, then size.
        QCOMPARE(solve("xla-temporal", p).offsets, (std::vector<uint64_t>{0, 30, 0, 30}));
        // The rule's function directly: the heap's space competes only when it is tighter.
        const std::vector<placement::Span> spans{{40, 70}};
        QCOMPARE(placement::best_gap_in_heap(spans, 10, 1, 0, 80), uint64_t(70));
        QCOMPARE(placement::best_gap_in_heap(spans, 10, 1, 0, 200), uint64_t(0));
        QCOMPARE(placement::best_gap_in_heap(spans, 50, 1, 0, 80), uint64_t(70)); // grows
    }

    // TVM orders equal sizes by conflict count, then by name desc (index desc here); TFLite
    // Micro by reverse index only. Buffer 1 overlaps both others, so TVM places it first.
    void tvmBreaksSizeTiesByConflicts() {
        const OffsetProblem p = problem({buf(0, 1, 8), buf(0, 3, 8), buf(2, 3, 8)});
        QCOMPARE(solve("tvm-size", p).offsets, (std::vector<uint64_t>{8, 0, 8}));
        QCOMPARE(solve("tflm-greedy", p).offsets, (std::vector<uint64_t>{0, 8, 0}));
        // By conflicts first: buffer 1 (two conflicts) before the 16-byte buffer 0 (one).
        const OffsetProblem q = problem({buf(0, 1, 16), buf(0, 3, 8), buf(2, 3, 8)});
        QCOMPARE(solve("tvm-conflicts", q).offsets, (std::vector<uint64_t>{8, 0, 8}));
        QCOMPARE(solve("tvm-size", q).offsets, (std::vector<uint64_t>{0, 16, 0}));
    }

    // ONNX Runtime plans in allocation order (begin, then index), not by size: buffer 1 starts
    // first and takes 0 though buffer 0 is as large; buffer 2 then finds the gap under buffer 0.
    void ortPlacesInTimeOrder() {
        const OffsetProblem p = problem({buf(1, 3, 16), buf(0, 2, 16), buf(2, 4, 8)});
        QCOMPARE(solve("ort-online", p).offsets, (std::vector<uint64_t>{16, 0, 0}));
        QCOMPARE(solve("greedy-size", p).offsets, (std::vector<uint64_t>{0, 16, 16}));
    }

    // ExecuTorch shares objects: a buffer goes into the first object free over its lifetime,
    // else above the object's buffers alive with it if the object is large enough, else into a
    // new object; objects are laid out one after another.
    void executorchSharesObjects() {
        // Equal sizes in reverse index order: buffer 2 reuses object 0 (free after buffer 0),
        // buffer 1 goes above it inside the 32-byte object.
        const OffsetProblem p = problem({buf(0, 2, 32), buf(2, 4, 8), buf(2, 4, 8)});
        QCOMPARE(solve("executorch-greedy", p).offsets, (std::vector<uint64_t>{0, 8, 0}));
        // Buffer 2 does not fit above buffer 0 in its object: a new object after it.
        const OffsetProblem q = problem({buf(0, 4, 32), buf(0, 2, 8), buf(2, 4, 16)});
        QCOMPARE(solve("executorch-greedy", q).offsets, (std::vector<uint64_t>{0, 32, 32}));
    }

    // auto and optimal pass the orders multi-order already placed: a framework pass equal to
    // one of them cannot win, so it is skipped. With every one-pass planner's order and rule
    // given, only ExecuTorch's planner runs; with none given, the lowest plan wins.
    void frameworkPassesAlreadyPlacedAreSkipped() {
        const OffsetProblem p = gap_example();
        std::vector<placement::PlacedOrder> placed;
        for (const OffsetStrategy* s : framework_strategies())
            if (const auto* pass = dynamic_cast<const FrameworkPassStrategy*>(s))
                placed.push_back({pass->pass().order(p), pass->pass().rule});
        QCOMPARE(placed.size(), framework_strategies().size() - 1);
        const std::optional<OffsetSolution> only = lowest_framework_plan(p, Progress{}, placed);
        QVERIFY(only);
        QCOMPARE(only->producer, std::string("executorch-greedy"));
        QCOMPARE(only->offsets, solve("executorch-greedy", p).offsets);
        uint64_t lowest = UINT64_MAX;
        for (const OffsetStrategy* s : framework_strategies())
            lowest = std::min(lowest, solve(s->name(), p).height);
        QCOMPARE(lowest_framework_plan(p, Progress{})->height, lowest);
    }

    // A caller holding a plan passes its height: only a framework plan strictly below it is
    // returned, and it is the same lowest plan (ties to the earlier planner) as without one.
    void frameworkPlansAtOrAboveTheCallersHeightAreDropped() {
        for (uint32_t seed = 0; seed < 40; ++seed) {
            const OffsetProblem p = test::random_problem(seed, 30 + seed * 10, 40, 64, seed % 2);
            const std::optional<OffsetSolution> lowest = lowest_framework_plan(p, Progress{});
            QVERIFY(lowest);
            QVERIFY(!lowest_framework_plan(p, Progress{}, {}, lowest->height));
            const auto below = lowest_framework_plan(p, Progress{}, {}, lowest->height + 1);
            QVERIFY(below);
            QCOMPARE(below->producer, lowest->producer);
            QCOMPARE(below->offsets, lowest->offsets);
        }
    }

    // place_below and ExecuTorch's and ffd's solve_below give the full plan when it ends below the
    // limit and nothing when it would reach it.
    void passesGiveUpAtTheLimit() {
        for (uint32_t seed = 0; seed < 30; ++seed) {
            OffsetProblem p = test::random_problem(seed, 100 + seed * 20, 150, 1 << 12, seed % 2);
            if (seed % 3 == 0) p.buffers[5].pinned = 1 << 13;
            if (seed % 3 == 1) { // an empty pinned buffer sets the height: it counts
                p.buffers[3].size = 0;
                p.buffers[3].pinned = 1 << 20;
            }
            const auto seed_solution = placement::seed_solution(p);
            const auto order = placement::order_by_length(p);
            for (auto search : {placement::OverlapSearch::Scan, placement::OverlapSearch::Index}) {
                placement::GapPlacer placer(p, search);
                const auto full = placer.place(seed_solution, order, Progress{}, "t");
                const uint64_t height = test::height_of(p, full);
                const auto rule = placement::GapRule::Best;
                QCOMPARE(
                    *placer.place_below(seed_solution, order, height + 1, Progress{}, "t", rule),
                    full);
                // A whole run costs the same in any order, and a run that gives up is charged
                // as a whole one.
                const uint64_t whole = placer.whole_run_work(seed_solution);
                QCOMPARE(placer.last_work(), whole);
                placer.place(seed_solution, placement::order_by_begin(p), Progress{}, "t", rule);
                QCOMPARE(placer.last_work(), whole);
                QVERIFY(!placer.place_below(seed_solution, order, height, Progress{}, "t", rule));
                QCOMPARE(placer.last_work(), whole);
                QVERIFY(!placer.place_below(seed_solution, order, 1, Progress{}, "t", rule));
                QCOMPARE(placer.last_work(), whole);
            }
            const ExecutorchGreedyStrategy executorch;
            const OffsetSolution plan = executorch.solve(p, Progress{});
            QCOMPARE(executorch.solve_below(p, plan.height + 1, Progress{})->offsets, plan.offsets);
            QVERIFY(!executorch.solve_below(p, plan.height, Progress{}));
            const FfdStrategy ffd;
            const OffsetSolution regions = ffd.solve(p, Progress{});
            QCOMPARE(ffd.solve_below(p, regions.height + 1, Progress{})->offsets, regions.offsets);
            QVERIFY(!ffd.solve_below(p, regions.height, Progress{}));
        }
    }

    void autoNamesItsWinner() {
        OffsetSolution tie = solve("auto", problem({buf(0, 3, 4), buf(3, 9, 4)}));
        QCOMPARE(tie.producer, std::string("slots")); // all equal: the first in the list
        OffsetSolution gap = solve("auto", gap_example());
        QCOMPARE(gap.height, 250u);
        QCOMPARE(gap.producer, std::string("greedy-size")); // slots and ffd are higher
    }

    void everyStrategyHonoursPinsAndAlignment() {
        OffsetProblem p = problem({buf(0, 10, 100, 64), buf(0, 10, 30, 8), buf(2, 5, 64, 256),
                                   buf(3, 8, 7, 1), buf(1, 9, 1, 128), buf(0, 10, 0, 16)});
        p.buffers[1].pinned = 8;
        p.buffers[3].pinned = 400;
        for (const OffsetStrategy* s : all_strategies()) {
            OffsetSolution sol = solve(s->name(), p);
            QCOMPARE(sol.offsets[1], 8u);
            QCOMPARE(sol.offsets[3], 400u);
            const std::string wrong = test::check_solution(p, sol);
            QVERIFY2(wrong.empty(), wrong.c_str());
            QCOMPARE(sol.producer.empty(), false);
        }
    }

    void rejectsMalformedProblems() {
        for (const OffsetStrategy* s : all_strategies()) {
            TMMU_EXPECT_FAILURE(s->solve(problem({buf(2, 2, 1)}), Progress{}),
                                FailureCode::InvalidArgument);
            TMMU_EXPECT_FAILURE(s->solve(problem({buf(0, 2, 1, 3)}), Progress{}),
                                FailureCode::AlignmentViolation);
            TMMU_EXPECT_FAILURE(s->solve(problem({buf(0, 2, 1, 0)}), Progress{}),
                                FailureCode::AlignmentViolation);
        }
    }

    // Pins no plan can keep are rejected before planning: two pinned buffers sharing bytes
    // while both live (either may be the lower), and a pin off its alignment.
    void rejectsPinsNoPlanCanKeep() {
        auto pinned = [](std::vector<std::pair<Buffer, uint64_t>> pins) {
            OffsetProblem p;
            for (auto& [b, at] : pins) {
                b.pinned = at;
                p.buffers.push_back(b);
            }
            p.buffers.push_back(buf(0, 9, 10)); // an unpinned one in between
            std::swap(p.buffers[1], p.buffers.back());
            return p;
        };
        const OffsetProblem below = pinned({{buf(0, 4, 100), 0}, {buf(2, 6, 10), 50}});
        const OffsetProblem above = pinned({{buf(0, 4, 10), 50}, {buf(2, 6, 100), 0}});
        for (const OffsetProblem& p : {below, above}) {
            auto f = test::capture_failure([&] { check_offset_problem(p, "t"); });
            QVERIFY(f);
            QCOMPARE(f->code(), FailureCode::AddressCollision);
            QVERIFY2(std::string(f->what()).find("buffers 0 and 2") != std::string::npos,
                     f->what());
            QVERIFY2(std::string(f->what()).find("both live in [2, 4)") != std::string::npos,
                     f->what());
            TMMU_EXPECT_FAILURE(solve("auto", p), FailureCode::AddressCollision);
        }
        // Same bytes at different times, and touching bytes at the same time, are fine.
        const OffsetProblem later = pinned({{buf(0, 4, 100), 0}, {buf(4, 6, 100), 0}});
        const OffsetProblem touching = pinned({{buf(0, 4, 50), 0}, {buf(0, 4, 50), 50}});
        for (const OffsetProblem& p : {later, touching}) {
            check_offset_problem(p, "t");
            QCOMPARE(solve("auto", p).height, 110u);
        }
        OffsetProblem misaligned = problem({buf(0, 4, 8, 16)});
        misaligned.buffers[0].pinned = 8;
        TMMU_EXPECT_FAILURE(check_offset_problem(misaligned, "t"), FailureCode::AlignmentViolation);
    }

    void overflowIsReportedNotWrapped() {
        OffsetProblem p = problem({buf(0, 2, UINT64_MAX - 10), buf(0, 2, 100)});
        for (const OffsetStrategy* s : all_strategies())
            TMMU_EXPECT_FAILURE(s->solve(p, Progress{}), FailureCode::AllocationOverflow);
        OffsetProblem pin = problem({buf(0, 2, 100)});
        pin.buffers[0].pinned = UINT64_MAX - 10;
        for (const OffsetStrategy* s : all_strategies())
            TMMU_EXPECT_FAILURE(s->solve(pin, Progress{}), FailureCode::AllocationOverflow);
    }

    void cancellationStopsEveryStrategy() {
        std::atomic<bool> cancel{true};
        Progress progress;
        progress.cancel_flag = &cancel;
        OffsetProblem p = test::random_problem(1, 3000, 500, 1000, false);
        for (const OffsetStrategy* s : all_strategies())
            TMMU_EXPECT_FAILURE(s->solve(p, progress), FailureCode::Cancelled);
    }

    void autoReportsProgress() {
        std::vector<std::string> stages;
        Progress progress;
        progress.on_progress = [&](double f, std::string_view stage) {
            QVERIFY(f >= 0.0 && f <= 1.0);
            stages.emplace_back(stage);
        };
        solve("auto", gap_example());
        find_strategy("auto")->solve(gap_example(), progress);
        QVERIFY(stages.size() >= 4);
        QCOMPARE(stages.front(), std::string("auto: slots"));
        QCOMPARE(stages.back(), std::string("auto: done"));
        // Slots reaches the lower bound here: nothing after it can be lower, so auto stops.
        stages.clear();
        const OffsetSolution tie =
            find_strategy("auto")->solve(problem({buf(0, 3, 4), buf(3, 9, 4)}), progress);
        QCOMPARE(tie.producer, std::string("slots"));
        QCOMPARE(stages, (std::vector<std::string>{"auto: slots", "auto: done"}));
    }

    void largeProblemsUseTheIndexAndStayValid() {
        // Lifetimes of a few steps among thousands: few pairs overlap, the index is cheaper.
        OffsetProblem p = realistic_random_problem(5, 5000);
        p.buffers[10].pinned = 1 << 20;
        QVERIFY(!placement::GapPlacer(p).scans());
        for (const OffsetStrategy* s : all_strategies()) {
            OffsetSolution sol = solve(s->name(), p);
            QVERIFY(sol.height >= lower_bound_bytes(p));
        }
    }
};

QTEST_GUILESS_MAIN(TestStrategies)
#include "test_strategies.moc"
