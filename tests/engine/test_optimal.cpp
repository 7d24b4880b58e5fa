#include "io/dsa_csv.h"
#include "plan/planner.h"
#include "plan/random_problem.h"
#include "plan/strategies/optimal.h"
#include "plan/strategies/optimal_search.h"
#include "plan/strategy.h"
#include "plan/validator.h"
#include "test_support.h"

#include <QFileInfo>
#include <QObject>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <random>

using namespace tmmu;

namespace {

// Small dense problems: lifetimes of 1 to 8 steps over 10, sizes 1 to 20, some aligned.
OffsetProblem small_problem(uint32_t seed, size_t n) {
    std::mt19937_64 rng(seed);
    static constexpr uint64_t kAlign[] = {1, 1, 2, 4, 8};
    OffsetProblem p;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t begin = rng() % 10;
        p.buffers.push_back(test::buf(begin, begin + 1 + rng() % 8, 1 + rng() % 20,
                                      seed % 2 ? kAlign[rng() % 5] : 1));
    }
    return p;
}

// Heights from the tests' own checker (test_support.h), not the engine's solution_height,
// which the strategies use to compute the heights under test.
using test::height_of;

// The lowest aligned offset of buffer b that no placed buffer meeting it in time overlaps. A
// conflict at o also covers every offset up to that buffer's end, so jumping there skips no
// free offset.
uint64_t lowest_free(const OffsetProblem& p, size_t b, const std::vector<uint64_t>& offset,
                     const std::vector<bool>& placed) {
    const Buffer& x = p.buffers[b];
    uint64_t o = 0;
    for (bool moved = true; moved;) {
        moved = false;
        for (size_t j = 0; j < p.buffers.size(); ++j) {
            const Buffer& q = p.buffers[j];
            if (placed[j] && q.begin < x.end && x.begin < q.end && o < offset[j] + q.size &&
                offset[j] < o + x.size) {
                o = (offset[j] + q.size + x.alignment - 1) / x.alignment * x.alignment;
                moved = true;
            }
        }
    }
    return o;
}

// The optimum by brute force, pinned buffers included: the pins first, then the other buffers
// in every order, each at its lowest free offset. Placing an optimal plan's buffers in the order
// of their offsets puts each at or below its offset there (every buffer placed before it that
// meets it in time ends below that offset, and the pins leave it free); repeating this with the
// order of the new offsets only lowers them, so some optimal plan is reproduced by the order of
// its own offsets (ties by index). Hence only orders whose offsets never decrease are tried,
// and a branch stops once it reaches the best height found or all of it is the floor (the most
// bytes live at once, or the pins' top).
uint64_t brute_force_optimum(const OffsetProblem& p) {
    const size_t n = p.buffers.size();
    std::vector<uint64_t> offset(n, 0);
    std::vector<bool> placed(n, false);
    uint64_t floor = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t live = 0;
        for (const Buffer& q : p.buffers)
            if (q.begin <= p.buffers[i].begin && p.buffers[i].begin < q.end) live += q.size;
        floor = std::max(floor, live);
        if (p.buffers[i].pinned) {
            offset[i] = *p.buffers[i].pinned;
            placed[i] = true;
            floor = std::max(floor, offset[i] + p.buffers[i].size);
        }
    }
    uint64_t best = UINT64_MAX;
    std::function<void(uint64_t, uint64_t, size_t)> place = [&](uint64_t height,
                                                                uint64_t last_offset, size_t last) {
        if (height >= best || best == floor) return;
        bool left = false;
        for (size_t i = 0; i < n; ++i) {
            if (placed[i]) continue;
            left = true;
            const uint64_t o = lowest_free(p, i, offset, placed);
            if (o < last_offset || (o == last_offset && i < last)) continue;
            offset[i] = o;
            placed[i] = true;
            place(std::max(height, o + p.buffers[i].size), o, i);
            placed[i] = false;
        }
        if (!left) best = height;
    };
    place(floor, 0, 0);
    return best;
}

OptimalResult run_optimal(const OffsetProblem& p, uint64_t budget, const Progress& progress = {}) {
    OptimalResult r = solve_optimal(p, OptimalOptions{budget}, progress);
    validate_solution(p, r.solution.offsets, "optimal");
    return r;
}

// The five-buffer example of minimalloc's documentation (optimal height 12).
DsaProblem minimalloc_example() {
    return parse_dsa_csv(
        "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n",
        "input.12.csv");
}

// Ten buffers (no pins, no alignment) that every heuristic leaves above the optimum, whose
// optimum is above the lower bound: the search must find a plan below the heuristics and also
// refute the bound. Lower bound 76, optimum 77, auto 79; a million nodes prove 77 with 58,443.
OffsetProblem searched_ten() {
    return small_problem(2399, 10);
}

// Forty aligned buffers whose search outlasts 1,000,000 nodes unproven (lower bound 270, auto
// 543): long enough to be stopped by time or cancellation.
OffsetProblem long_search() {
    return test::random_problem(13, 40, 20, 100, true);
}

uint64_t auto_height(const OffsetProblem& p) {
    return find_strategy("auto")->solve(p, Progress{}).height;
}

std::vector<std::string> ids_for(const OffsetProblem& p) {
    std::vector<std::string> ids;
    for (size_t i = 0; i < p.buffers.size(); ++i)
        ids.push_back("b" + std::to_string(i));
    return ids;
}

PlanOptions optimal_options(uint64_t budget) {
    PlanOptions options;
    options.strategy = "optimal";
    options.search_budget = budget;
    return options;
}

} // namespace

class TestOptimal : public QObject {
    Q_OBJECT
  private slots:
    void isRegisteredAfterAuto() {
        const auto& all = all_strategies();
        QCOMPARE(all.back()->name(), std::string_view("optimal"));
        QCOMPARE(all[all.size() - 2]->name(), std::string_view("auto"));
        QCOMPARE(find_strategy("optimal"), all.back());
    }

    void reachesTheBruteForceOptimumOnSmallProblems() {
        size_t below_heuristic = 0, above_bound = 0;
        for (uint32_t seed = 0; seed < 300; ++seed) {
            const OffsetProblem p = small_problem(seed, 1 + seed % 8);
            const uint64_t expected = brute_force_optimum(p);
            const OptimalResult r = run_optimal(p, 1'000'000);
            const std::string label = "seed " + std::to_string(seed);
            QVERIFY2(r.solution.height == expected, label.c_str());
            QVERIFY2(r.proven, label.c_str());
            QCOMPARE(r.solution.producer, std::string("optimal (proven)"));
            below_heuristic += r.heuristic_height > expected;
            above_bound += expected > lower_bound_bytes(p);
        }
        // The search, not multi-order, found some of them, and proved some optima above the
        // bound by exhausting the next lower target.
        QVERIFY(below_heuristic > 0);
        QVERIFY(above_bound > 0);
    }

    void matchesTheBruteForceWithPinsAndAlignmentUpToTenBuffers() {
        // Six to ten buffers, odd seeds aligned (1 to 8), every third seed with two pins. Pins
        // make the search incomplete (it proves a pinned height only at the bound or the pins'
        // top, so proven is required without pins only), yet it reaches these optima too.
        size_t searched = 0, pinned_searched = 0;
        for (uint32_t seed = 0; seed < 400; ++seed) {
            OffsetProblem p = small_problem(seed, 6 + seed % 5);
            const bool pinned = seed % 3 == 0;
            if (pinned) {
                p.buffers[1].pinned = 16;
                p.buffers[4].pinned = 40;
            }
            const uint64_t expected = brute_force_optimum(p);
            const OptimalResult r = run_optimal(p, 1'000'000);
            const std::string label = "seed " + std::to_string(seed);
            QVERIFY2(height_of(p, r.solution.offsets) == expected, label.c_str());
            QVERIFY2(r.solution.height == expected, label.c_str());
            if (!pinned) QVERIFY2(r.proven, label.c_str());
            if (r.proven) QVERIFY2(r.solution.producer == "optimal (proven)", label.c_str());
            const bool search_ran = auto_height(p) > expected && expected > r.lower_bound;
            searched += search_ran;
            pinned_searched += search_ran && pinned;
        }
        // Enough of them need the search both to go below the heuristics and past the bound.
        QVERIFY(searched >= 20);
        QVERIFY(pinned_searched >= 5);
    }

    void reachesTheSuiteHeightsAtTheBenchBudget() {
        // minimalloc's A-K at the node budget of `tmmu bench`: deterministic, so exact. D and J
        // stay above their bounds (their optima are unknown); every other instance is proven.
        // D comes first, so the sanitized build's quarter (property_cases) has an unproven
        // instance (it spends the whole budget) as well as proven ones.
        const QString dir = QString::fromUtf8(TMMU_DSA_DIR) + "/minimalloc";
        const std::pair<char, uint64_t> expected[] = {
            {'D', 1'038'336}, {'A', 1'048'576}, {'B', 1'048'576}, {'C', 1'039'360},
            {'E', 1'048'576}, {'F', 1'048'576}, {'G', 1'048'576}, {'H', 1'048'576},
            {'I', 1'048'576}, {'J', 1'039'360}, {'K', 1'048'576}};
        for (uint32_t i = 0; i < test::property_cases(std::size(expected)); ++i) {
            const auto& [name, height] = expected[i];
            const QString path = dir + "/" + QChar(name) + ".1048576.csv";
            TMMU_REQUIRE_DATA(QFileInfo::exists(path), "the minimalloc suite at " + path);
            const DsaProblem d = load_dsa_csv(path.toStdString());
            const OptimalResult r = run_optimal(d.problem, kBenchOptimalBudget);
            const std::string label = std::string(1, name);
            QVERIFY2(height_of(d.problem, r.solution.offsets) == height, label.c_str());
            QVERIFY2(r.solution.height == height, label.c_str());
            QVERIFY2(r.heuristic_height > height, label.c_str()); // found by the search
            QVERIFY2(r.proven == (name != 'D' && name != 'J'), label.c_str());
            QVERIFY2(r.nodes <= kBenchOptimalBudget, label.c_str());
        }
    }

    void isNeverAboveAutoAndStaysValid() {
        const OffsetStrategy* automatic = find_strategy("auto");
        for (uint32_t seed = 0; seed < 40; ++seed) {
            const OffsetProblem p = seed % 2 ? small_problem(seed, 10 + seed)
                                             : test::random_problem(seed, 60, 40, 100, true);
            const OptimalResult r = run_optimal(p, 3'000);
            QVERIFY(r.solution.height <= automatic->solve(p, Progress{}).height);
            QCOMPARE(r.solution.height, height_of(p, r.solution.offsets));
            QVERIFY(r.solution.height >= lower_bound_bytes(p));
            QVERIFY(r.nodes <= 3'000);
        }
    }

    void isDeterministicForABudget() {
        const OffsetProblem p = test::random_problem(7, 80, 30, 1000, false);
        const OptimalResult a = run_optimal(p, 5'000), b = run_optimal(p, 5'000);
        QCOMPARE(a.solution.offsets, b.solution.offsets);
        QCOMPARE(a.solution.producer, b.solution.producer);
        QCOMPARE(a.nodes, b.nodes);
        // No budget: multi-order's plan, unproven unless at the bound.
        const OptimalResult none = run_optimal(p, 0);
        QCOMPARE(none.nodes, 0u);
        QCOMPARE(none.solution.height, none.heuristic_height);
    }

    void everyBudgetEndsWithAValidPlanWithinItsNodes() {
        // Budgets from one node up cut the target schedule (bound, descent, bisection) at every
        // stage; each run must end, stay within its nodes and the bounds, and repeat exactly.
        for (uint32_t seed = 0; seed < 60; ++seed) {
            const OffsetProblem p = seed % 3 ? small_problem(seed, 6 + seed % 10)
                                             : test::random_problem(seed, 40, 20, 1000, true);
            for (uint64_t budget : {1u, 7u, 300u, 5'000u}) {
                const OptimalResult r = run_optimal(p, budget), again = run_optimal(p, budget);
                const std::string label =
                    "seed " + std::to_string(seed) + " budget " + std::to_string(budget);
                QVERIFY2(r.nodes <= budget, label.c_str());
                QVERIFY2(r.solution.height <= r.heuristic_height, label.c_str());
                QVERIFY2(r.solution.height >= r.lower_bound, label.c_str());
                QVERIFY2(r.solution.offsets == again.solution.offsets, label.c_str());
                QVERIFY2(r.nodes == again.nodes, label.c_str());
            }
        }
    }

    void solvesTheMinimallocExample() {
        DsaProblem d = minimalloc_example();
        const OptimalResult r = run_optimal(d.problem, 1'000);
        QCOMPARE(r.solution.height, 12u);
        QVERIFY(r.proven);
    }

    void searchesTimeDisjointGroupsApart() {
        // Two copies of a small problem, the second shifted past the first in time.
        OffsetProblem p = small_problem(3, 7);
        const uint64_t single = brute_force_optimum(p);
        const size_t n = p.buffers.size();
        for (size_t i = 0; i < n; ++i) {
            Buffer b = p.buffers[i];
            b.begin += 100;
            b.end += 100;
            p.buffers.push_back(b);
        }
        const OptimalResult r = run_optimal(p, 1'000'000);
        QCOMPARE(r.solution.height, single);
        QVERIFY(r.proven);
    }

    // Buffers all live at once, some of sizes the alignment does not divide (an ONNX export's
    // parameter arena: weights, and the int64 shape constants folding made): the plan end to
    // end at the aligned bound is proven at once. Against the plain bound, which counts no
    // padding, the search ran out its whole budget (6 s on a GPT-2 export's 379 parameters) to
    // label it "budget".
    void cliquesWithPaddingAreProvenAtTheAlignedBound() {
        OffsetProblem p;
        for (uint64_t i = 0; i < 300; ++i)
            p.buffers.push_back(Buffer{.begin = 0,
                                       .end = 10,
                                       .size = i % 3 == 0 ? 8 * (1 + i % 4) : 4096 * (1 + i % 5),
                                       .alignment = 128});
        const OptimalResult r = run_optimal(p, 400'000);
        QVERIFY(r.proven);
        QCOMPARE(r.solution.height, aligned_lower_bound_bytes(p));
        QVERIFY(r.solution.height > r.lower_bound); // the plain bound, as reported
        QCOMPARE(r.nodes, uint64_t(0));
    }

    void honoursPinsAndAlignment() {
        for (uint32_t seed = 0; seed < 20; ++seed) {
            OffsetProblem p = small_problem(seed * 2 + 1, 8);
            p.buffers[1].pinned = 16;
            p.buffers[4].pinned = 40;
            const OptimalResult r = run_optimal(p, 20'000);
            QCOMPARE(r.solution.offsets[1], 16u);
            QCOMPARE(r.solution.offsets[4], 40u);
            for (size_t i = 0; i < p.buffers.size(); ++i)
                QCOMPARE(r.solution.offsets[i] % p.buffers[i].alignment, 0u);
        }
    }

    void cancellationDuringTheSearchIsObserved() {
        const OffsetProblem p = long_search();
        QVERIFY(auto_height(p) > lower_bound_bytes(p));
        // Cancel at the third search report, thousands of nodes into the search; the search
        // polls the flag right after reporting, so no report may follow.
        std::atomic<bool> cancel{false};
        size_t reports = 0, after_cancel = 0;
        Progress progress;
        progress.cancel_flag = &cancel;
        progress.on_progress = [&](double, std::string_view stage) {
            if (stage != "optimal: search") return;
            after_cancel += cancel;
            if (++reports == 3) cancel = true;
        };
        const OptimalResult r = run_optimal(p, 10'000'000, progress);
        QVERIFY(cancel);
        QCOMPARE(after_cancel, size_t(0));
        QCOMPARE(r.nodes, 3 * optimal::kPollEvery);
        QVERIFY(!r.proven);
        QVERIFY(height_of(p, r.solution.offsets) <= r.heuristic_height);
        // The planner does not return a cancelled search's plan.
        cancel = false;
        reports = 0;
        TMMU_EXPECT_FAILURE(
            plan_problem(p, ids_for(p), optimal_options(10'000'000), progress, "long"),
            FailureCode::Cancelled);
        QCOMPARE(reports, size_t(3));
    }

    // Issue 11: the improvement search of components too large for the exact one ran 100,000
    // nodes of its own on top of the budget (12 s at 5,000 buffers with the default budget).
    // Every search node polls every kPollEvery nodes, so the polls count every phase's nodes.
    void everyPhaseCountsAgainstTheNodeBudget() {
        const OffsetProblem p = test::random_problem(5, 5000, 400, 1 << 16, false);
        QVERIFY(optimal::split_components(p).front().items.size() > 2000); // improved, not searched
        for (uint64_t budget : {uint64_t{1000}, uint64_t{20'000}}) {
            size_t polls = 0;
            Progress progress;
            progress.on_progress = [&](double, std::string_view stage) {
                polls += stage == "optimal: search";
            };
            OptimalOptions options;
            options.node_budget = budget;
            const OptimalResult r = solve_optimal(p, options, progress);
            QVERIFY2(polls * optimal::kPollEvery <= budget + optimal::kPollEvery,
                     qPrintable(QString("%1 polls for a budget of %2").arg(polls).arg(budget)));
            QVERIFY(r.nodes <= budget);
            QVERIFY(height_of(p, r.solution.offsets) <= r.heuristic_height);
        }
    }

    // Issue 11: --budget 100ms on minimalloc's J once ran for minutes (a negative time share
    // divided by an unsigned count became a deadline far in the future). A sanity bound, 20x
    // the budget; tmmu bench prints the overrun itself.
    void timeBudgetEndsOnADenseInstance() {
        const QString path = QString::fromUtf8(TMMU_DSA_DIR) + "/minimalloc/J.1048576.csv";
        TMMU_REQUIRE_DATA(QFileInfo::exists(path), "the minimalloc suite at " + path);
        const DsaProblem d = load_dsa_csv(path.toStdString());
        OptimalOptions options;
        options.time_budget_ms = 100;
        const auto started = std::chrono::steady_clock::now();
        const OptimalResult r = solve_optimal(d.problem, options, Progress{});
        QVERIFY(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
        QVERIFY(!r.proven);
        QVERIFY(height_of(d.problem, r.solution.offsets) <= r.heuristic_height);
    }

    void timeBudgetStopsALongSearch() {
        const OffsetProblem p = long_search();
        QVERIFY(auto_height(p) > lower_bound_bytes(p));
        QVERIFY(!run_optimal(p, 1'000'000).proven); // the search outlasts a million nodes
        // A watchdog cancels after 20 s, so an engine that ignores the time fails here instead
        // of hanging.
        using Clock = std::chrono::steady_clock;
        const Clock::time_point started = Clock::now();
        std::atomic<bool> watchdog{false};
        Progress progress;
        progress.cancel_flag = &watchdog;
        progress.on_progress = [&](double, std::string_view) {
            if (Clock::now() - started > std::chrono::seconds(20)) watchdog = true;
        };
        OptimalOptions options;
        options.time_budget_ms = 50;
        const OptimalResult r = solve_optimal(p, options, progress);
        const auto elapsed = Clock::now() - started;
        QVERIFY(!watchdog);
        QVERIFY(elapsed < std::chrono::seconds(5)); // a sanity bound, not a timing test
        validate_solution(p, r.solution.offsets, "optimal (timed)");
        QVERIFY(r.nodes > 0);
        QVERIFY(!r.proven);
        QVERIFY(height_of(p, r.solution.offsets) <= r.heuristic_height);
        QVERIFY(r.solution.height >= r.lower_bound);
    }

    void hugeTimeBudgetDoesNotWrapAround() {
        // started + 2^64-1 ms once overflowed into the past: the search stopped at once.
        const OffsetProblem p = searched_ten();
        QVERIFY(auto_height(p) > 77u);
        OptimalOptions options;
        options.time_budget_ms = std::numeric_limits<uint64_t>::max();
        const OptimalResult r = solve_optimal(p, options, Progress{});
        QCOMPARE(r.solution.height, 77u); // the brute-force optimum
        QVERIFY(r.proven);
    }

    void improvesGroupsTooLargeToSearch() {
        // 5,000 time-connected buffers: above the exact search's limit, so only the windowed
        // improvement can lower multi-order's plan (it does: +1.45% -> +0.17% over the bound).
        // The improvement gets half of the node budget, at most 100,000 nodes: this budget
        // gives it all of them.
        constexpr uint64_t kBudget = 200'000;
        OffsetProblem p = realistic_random_problem(2, 5'000);
        QVERIFY(optimal::split_components(p).front().items.size() > 2000);
        const OptimalResult r = run_optimal(p, kBudget);
        QVERIFY(r.solution.height < r.heuristic_height);
        QVERIFY(r.solution.height >= r.lower_bound);
        QVERIFY(r.nodes <= kBudget);
        QCOMPARE(r.solution.height, height_of(p, r.solution.offsets));
        QVERIFY(r.solution.offsets == run_optimal(p, kBudget).solution.offsets);
        // Pinned buffers stay where they are and the windows step around them.
        p.buffers[2500].pinned = 0;
        p.buffers[2501].pinned = 1u << 26;
        const OptimalResult pinned = run_optimal(p, kBudget);
        QCOMPARE(pinned.solution.offsets[2500], 0u);
        QCOMPARE(pinned.solution.offsets[2501], uint64_t(1) << 26);
        QVERIFY(pinned.solution.height <= pinned.heuristic_height);
    }

    // A dense group too large to search (3,000 buffers, about 190 live at once): a node of its
    // windows scans ~125,000 section entries, against 600-5,000 on problems shaped like real
    // graphs, and an unlimited improvement ran for seconds. Its work limit (2,048 units a node
    // of its share) now ends it after a few thousand of its 100,000 nodes.
    void improvementStopsAtItsWorkLimit() {
        const OffsetProblem p = test::random_problem(3, 3000, 4000, 1 << 20, true);
        QVERIFY(optimal::split_components(p).front().items.size() > 2000); // improved, not searched
        const OptimalResult r = run_optimal(p, 2'000'000'000);
        QVERIFY2(r.nodes < 10'000, std::to_string(r.nodes).c_str());
        QVERIFY(r.solution.height <= r.heuristic_height);
        QVERIFY(r.solution.height >= r.lower_bound);
    }

    void progressNeverGoesBack() {
        // The windowed improvement runs under a lowered node limit; the search's progress once
        // measured against that limit, reached 100% and then fell back to 50% for the targets.
        // (The multi-order seeding before it reports a phase of its own.)
        const OffsetProblem p = realistic_random_problem(2, 5'000);
        std::vector<double> reported;
        Progress progress;
        progress.on_progress = [&](double done, std::string_view what) {
            if (what == "optimal: search") reported.push_back(done);
        };
        (void)solve_optimal(p, OptimalOptions{20'000}, progress);
        QVERIFY(reported.size() > 2);
        for (size_t i = 1; i < reported.size(); ++i)
            QVERIFY2(reported[i] >= reported[i - 1],
                     qPrintable(QString("%1 after %2").arg(reported[i]).arg(reported[i - 1])));
    }

    void capacityBetweenOptimumAndHeuristicIsMet() {
        OffsetProblem p = searched_ten();
        QCOMPARE(brute_force_optimum(p), 77u);
        QCOMPARE(auto_height(p), 79u);
        // 1,000 nodes searching from the bound do not get below the heuristics' 79...
        const OptimalResult unbounded = run_optimal(p, 1'000);
        QCOMPARE(unbounded.solution.height, 79u);
        // ...but an arena of 78 is the first target, and the search meets it.
        p.capacity = 78;
        const OptimalResult r = solve_optimal(p, OptimalOptions{1'000}, Progress{});
        QVERIFY(height_of(p, r.solution.offsets) <= 78u);
        QVERIFY(r.nodes <= 1'000u);
        validate_solution(p, r.solution.offsets, "optimal"); // against the capacity too
        // So the planner fits an arena that auto cannot.
        Plan plan = plan_problem(p, ids_for(p), optimal_options(1'000), Progress{}, "ten");
        QVERIFY(plan.arenas.front().solution.height <= 78u);
        PlanOptions automatic;
        automatic.strategy = "auto";
        TMMU_EXPECT_FAILURE(plan_problem(p, ids_for(p), automatic, Progress{}, "ten"),
                            FailureCode::ArenaTooSmall);
        // The capacity is a first target, not a stop: with nodes to spare the search goes on to
        // the proven optimum.
        const OptimalResult full = run_optimal(p, 1'000'000);
        QCOMPARE(full.solution.height, 77u);
        QVERIFY(full.proven);
    }

    void capacityBelowTheOptimumIsReportedAsTooSmall() {
        // Lower bound 66, optimum 73, auto 75 (81 before the framework planners joined it); an
        // arena of 72 is above the bound, so it is the first target, and it cannot be met.
        OffsetProblem p = small_problem(2723, 9);
        QCOMPARE(brute_force_optimum(p), 73u);
        QCOMPARE(auto_height(p), 75u);
        p.capacity = 72;
        const OptimalResult r = solve_optimal(p, OptimalOptions{1'000'000}, Progress{});
        // The strategy returns its best plan, the proven optimum above the capacity...
        QCOMPARE(height_of(p, r.solution.offsets), 73u);
        QVERIFY(r.proven);
        TMMU_EXPECT_FAILURE(validate_solution(p, r.solution.offsets, "optimal"),
                            FailureCode::ArenaTooSmall);
        // ...and the planner refuses it.
        TMMU_EXPECT_FAILURE(
            plan_problem(p, ids_for(p), optimal_options(1'000'000), Progress{}, "nine"),
            FailureCode::ArenaTooSmall);
    }

    void nodeBudgetBoundsTheSearch() {
        const OffsetProblem p = searched_ten();
        QCOMPARE(brute_force_optimum(p), 77u);
        QCOMPARE(auto_height(p), 79u);
        QVERIFY(lower_bound_bytes(p) < 77u); // the bound must be refuted, not reached
        // 10,000 nodes find 77 but cannot refute 76: giving a target up is no proof.
        for (uint64_t budget : {1u, 64u, 3'000u, 10'000u}) {
            const std::string label = "budget " + std::to_string(budget);
            const OptimalResult r = run_optimal(p, budget);
            QVERIFY2(r.nodes > 0 && r.nodes <= budget, label.c_str());
            QVERIFY2(height_of(p, r.solution.offsets) <= 79u, label.c_str());
            QVERIFY2(!r.proven, label.c_str());
            QCOMPARE(r.solution.producer, std::string("optimal (budget)"));
        }
        const OptimalResult r = run_optimal(p, 1'000'000);
        QCOMPARE(height_of(p, r.solution.offsets), 77u);
        QVERIFY(r.proven);
        QCOMPARE(r.solution.producer, std::string("optimal (proven)"));
        QVERIFY(r.nodes > 10'000u && r.nodes < 1'000'000u);
    }

    void decomposedSearchMatchesBruteForce() {
        // Chains of short lifetimes: placing a buffer often leaves no unplaced buffer across
        // some time, so the search splits; the optimum must still be exact.
        for (uint32_t seed = 0; seed < 60; ++seed) {
            std::mt19937_64 rng(seed + 1000);
            OffsetProblem p;
            for (size_t i = 0; i < 8; ++i) {
                const uint64_t begin = rng() % 12;
                p.buffers.push_back(test::buf(begin, begin + 1 + rng() % 3, 1 + rng() % 9));
            }
            const uint64_t expected = brute_force_optimum(p);
            const OptimalResult r = run_optimal(p, 1'000'000);
            QCOMPARE(r.solution.height, expected);
            QVERIFY(r.proven);
        }
    }

    void plannerPassesTheTimeBudget() {
        DsaProblem d = minimalloc_example();
        PlanOptions options;
        options.strategy = "optimal";
        options.search_budget_ms = 50;
        Plan plan = plan_problem(d.problem, d.ids, options, Progress{}, "input.12.csv");
        QCOMPARE(plan.arenas.front().solution.height, 12u);
    }

    void plannerPassesTheBudget() {
        DsaProblem d = minimalloc_example();
        PlanOptions options;
        options.strategy = "optimal";
        options.search_budget = 10;
        Plan plan = plan_problem(d.problem, d.ids, options, Progress{}, "input.12.csv");
        QCOMPARE(plan.arenas.front().solution.height, 12u);
        QCOMPARE(plan.arenas.front().strategy, std::string("optimal (proven)"));
    }
};

QTEST_GUILESS_MAIN(TestOptimal)
#include "test_optimal.moc"
