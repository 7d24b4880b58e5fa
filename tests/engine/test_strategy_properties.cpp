#include "io/dsa_csv.h"
#include "plan/random_problem.h"
#include "plan/strategies/optimal.h"
#include "plan/strategies/orders.h"
#include "plan/strategy.h"
#include "plan/validator.h"
#include "test_support.h"

#include <QDir>
#include <QObject>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <random>

using namespace tmmu;

namespace {

// Problems of every shape from one seed: sizes, horizons, alignments, zero sizes, a few pins
// (laid out disjoint in bytes, so the pins themselves never collide) and, now and then, more
// buffers than the scan path takes: sparse ones (realistic lifetimes), so that the overlap index
// is exercised too, and dense ones, which the placer still scans.
OffsetProblem varied_problem(uint32_t seed) {
    static constexpr uint64_t kHorizon[] = {1, 3, 20, 200, 5000};
    static constexpr uint64_t kMaxSize[] = {1, 64, 1 << 20, uint64_t(1) << 40};
    std::mt19937_64 rng(seed * 7919u + 1);
    size_t n = seed % 7 == 0 ? rng() % 11 : 1 + rng() % 150;
    if (seed % 100 == 99) n = 1100 + rng() % 500;
    OffsetProblem p = seed % 200 == 99
                          ? realistic_random_problem(seed, n)
                          : test::random_problem(seed, n, kHorizon[seed % 5],
                                                 kMaxSize[(seed / 5) % 4], seed % 2 == 0);
    if (seed % 9 == 0)
        for (auto& b : p.buffers)
            if (rng() % 4 == 0) b.size = 0;
    if (seed % 4 == 1 && !p.buffers.empty()) {
        uint64_t next = rng() % 1000;
        for (int k = 0; k < 3; ++k) {
            Buffer& b = p.buffers[rng() % p.buffers.size()];
            if (b.pinned) continue;
            next = (next + b.alignment - 1) / b.alignment * b.alignment;
            b.pinned = next;
            next += b.size + rng() % 100;
        }
    }
    return p;
}

struct Expected {
    size_t buffers;
    uint64_t lower_bound;
    double best_framework_pct; // the best framework heuristic's % over LB: auto must match it
};

// From /work/shared/data/dsa/README.md.
const std::map<std::string, Expected>& published() {
    static const std::map<std::string, Expected> table = {
        {"minimalloc/A.1048576.csv", {154, 1048576, 29.0}},
        {"minimalloc/B.1048576.csv", {170, 1048576, 34.7}},
        {"minimalloc/C.1048576.csv", {203, 1039360, 36.4}},
        {"minimalloc/D.1048576.csv", {213, 986112, 31.0}},
        {"minimalloc/E.1048576.csv", {215, 1048576, 36.9}},
        {"minimalloc/F.1048576.csv", {296, 1048576, 19.8}},
        {"minimalloc/G.1048576.csv", {308, 1048576, 17.4}},
        {"minimalloc/H.1048576.csv", {316, 1048576, 18.9}},
        {"minimalloc/I.1048576.csv", {374, 1048576, 41.0}},
        {"minimalloc/J.1048576.csv", {409, 989184, 31.9}},
        {"minimalloc/K.1048576.csv", {454, 1048576, 29.0}},
        {"minimalloc/input.12.csv", {5, 12, 0.0}},
        {"real/iree_mobilenet.csv", {56, 5706112, 0.0}},
        {"real/iree_mobilebert.csv", {316, 1674240, 0.0}},
        {"real/G_1.csv", {816, 3030937746, 0.015}},
        {"real/resnet50.csv", {1042, 1515472556, 0.30}},
        {"real/tiny_bert.csv", {1821, 758936113, 0.08}},
    };
    return table;
}

} // namespace

class TestStrategyProperties : public QObject {
    Q_OBJECT
  private slots:
    void everyStrategyIsValidDeterministicAndAboveTheBound() {
        const auto& strategies = all_strategies();
        // optimal with a light budget: 2,000 problems at the default's 400,000 nodes would take
        // minutes, and the inequalities below hold at every budget.
        const OptimalStrategy light_optimal(OptimalOptions{1'000});
        // Every kind of varied_problem occurs in the first 500 seeds (property_cases).
        for (uint32_t seed = 0; seed < test::property_cases(2000); ++seed) {
            const OffsetProblem p = varied_problem(seed);
            const uint64_t bound = lower_bound_bytes(p);
            // auto ends its search at the aligned bound: no plan may be below it.
            const uint64_t aligned = aligned_lower_bound_bytes(p);
            QVERIFY2(aligned >= bound, ("seed " + std::to_string(seed)).c_str());
            std::vector<uint64_t> heights;
            for (const OffsetStrategy* s : strategies) {
                const std::string label = std::string(s->name()) + " seed " + std::to_string(seed);
                const OffsetStrategy& run = s->name() == "optimal" ? light_optimal : *s;
                OffsetSolution a = run.solve(p, Progress{});
                auto f = test::capture_failure([&] { validate_solution(p, a.offsets, label); });
                QVERIFY2(!f, f ? f->what() : "");
                QVERIFY2(a.height >= aligned, label.c_str());
                const std::string wrong = test::check_solution(p, a);
                QVERIFY2(wrong.empty(), (label + ": " + wrong).c_str());
                OffsetSolution b = run.solve(p, Progress{});
                QVERIFY2(a.offsets == b.offsets && a.producer == b.producer, label.c_str());
                heights.push_back(a.height);
            }
            auto height_of = [&](std::string_view name) {
                for (size_t k = 0; k < strategies.size(); ++k)
                    if (strategies[k]->name() == name) return heights[k];
                throw std::logic_error("no strategy " + std::string(name));
            };
            // auto is the heuristics' minimum. optimal is left out by name: it searches below
            // auto, and is held to the opposite inequality.
            const uint64_t automatic = height_of("auto");
            for (size_t k = 0; k < strategies.size(); ++k)
                if (strategies[k]->name() != "optimal")
                    QVERIFY2(automatic <= heights[k],
                             (std::string(strategies[k]->name()) + " seed " + std::to_string(seed))
                                 .c_str());
            QVERIFY2(height_of("optimal") <= automatic,
                     ("optimal seed " + std::to_string(seed)).c_str());
            // multi-order starts from best-fit's runs, which are greedy-size's and more.
            QVERIFY2(height_of("multi-order") <= height_of("best-fit") &&
                         height_of("best-fit") <= height_of("greedy-size"),
                     std::to_string(seed).c_str());
        }
    }

    // Each buffer order is the stable comparison sort its comment documents (a radix sort on
    // keys computes it): sizes that differ only in high bits, huge and equal ones, ties left to
    // the index, whole-life buffers, conflict counts and 128-bit keys.
    void ordersAreTheStableSortsTheyDocument() {
        using Less = std::function<bool(uint32_t, uint32_t)>;
        for (uint32_t seed = 0; seed < 400; ++seed) {
            OffsetProblem p = varied_problem(seed);
            std::mt19937_64 rng(seed);
            if (seed % 3 == 0)
                for (Buffer& b : p.buffers)
                    b.size = (rng() % 3) << (rng() % 2 ? 62 : 7);
            const auto& b = p.buffers;
            const auto conflicts = placement::conflict_counts(p);
            const auto bytes = placement::conflict_bytes(p);
            const std::vector<bool> peak = placement::live_at_peak(p);
            auto length = [&](uint32_t i) { return b[i].end - b[i].begin; };
            auto area = [&](uint32_t i) { return placement::Bytes(b[i].size) * length(i); };
            uint64_t first = UINT64_MAX, last = 0;
            for (const Buffer& x : b) {
                first = std::min(first, x.begin);
                last = std::max(last, x.end);
            }
            auto whole = [&](uint32_t i) { return b[i].begin == first && b[i].end == last; };
            // Larger first on x, then on y; equal on both: false (the index decides).
            auto larger = [](auto x1, auto y1, auto x2, auto y2) {
                return x1 != y1 ? x1 > y1 : x2 > y2;
            };
            const std::pair<std::vector<uint32_t> (*)(const OffsetProblem&), Less> cases[] = {
                {placement::order_by_size,
                 [&](uint32_t x, uint32_t y) {
                     return larger(b[x].size, b[y].size, length(x), length(y));
                 }},
                {placement::order_tflm,
                 [&](uint32_t x, uint32_t y) { return larger(b[x].size, b[y].size, x, y); }},
                {placement::order_tflite_arena,
                 [&](uint32_t x, uint32_t y) {
                     if (whole(x) || whole(y)) return whole(x) && !whole(y);
                     return b[x].size != b[y].size ? b[x].size > b[y].size
                                                   : b[x].begin < b[y].begin;
                 }},
                {placement::order_tvm_size,
                 [&](uint32_t x, uint32_t y) {
                     return b[x].size != b[y].size ? b[x].size > b[y].size
                                                   : larger(conflicts[x], conflicts[y], x, y);
                 }},
                {placement::order_tvm_conflicts,
                 [&](uint32_t x, uint32_t y) {
                     return conflicts[x] != conflicts[y] ? conflicts[x] > conflicts[y]
                                                         : larger(b[x].size, b[y].size, x, y);
                 }},
                {placement::order_by_size_index,
                 [&](uint32_t x, uint32_t y) { return b[x].size > b[y].size; }},
                {placement::order_by_birth,
                 [&](uint32_t x, uint32_t y) { return b[x].begin < b[y].begin; }},
                {placement::order_by_death,
                 [&](uint32_t x, uint32_t y) { return b[x].end < b[y].end; }},
                {placement::order_peak_first,
                 [&](uint32_t x, uint32_t y) {
                     if (peak[x] != peak[y]) return bool(peak[x]);
                     return larger(b[x].size, b[y].size, length(x), length(y));
                 }},
                {placement::order_by_length,
                 [&](uint32_t x, uint32_t y) {
                     return larger(length(x), length(y), b[x].size, b[y].size);
                 }},
                {placement::order_by_area,
                 [&](uint32_t x, uint32_t y) { return area(x) > area(y); }},
                {placement::order_by_begin,
                 [&](uint32_t x, uint32_t y) {
                     return b[x].begin != b[y].begin ? b[x].begin < b[y].begin
                                                     : b[x].size > b[y].size;
                 }},
                {placement::order_by_size_begin,
                 [&](uint32_t x, uint32_t y) {
                     return b[x].size != b[y].size ? b[x].size > b[y].size
                                                   : b[x].begin < b[y].begin;
                 }},
                {placement::order_by_size_end,
                 [&](uint32_t x, uint32_t y) {
                     return larger(b[x].size, b[y].size, b[x].end, b[y].end);
                 }},
                {placement::order_by_begin_end,
                 [&](uint32_t x, uint32_t y) {
                     return b[x].begin != b[y].begin ? b[x].begin < b[y].begin
                                                     : b[x].end < b[y].end;
                 }},
                {placement::order_by_conflicts,
                 [&](uint32_t x, uint32_t y) {
                     return larger(conflicts[x], conflicts[y], b[x].size, b[y].size);
                 }},
                {placement::order_by_conflict_bytes,
                 [&](uint32_t x, uint32_t y) {
                     return larger(bytes[x], bytes[y], b[x].size, b[y].size);
                 }},
            };
            for (size_t k = 0; k < std::size(cases); ++k) {
                std::vector<uint32_t> want(b.size());
                std::iota(want.begin(), want.end(), 0u);
                std::stable_sort(want.begin(), want.end(), cases[k].second);
                QVERIFY2(cases[k].first(p) == want,
                         ("order " + std::to_string(k) + " seed " + std::to_string(seed)).c_str());
            }
        }
    }

    // Checked against the definition: the live bytes at every time a buffer begins (ends at
    // that time no longer count), the maximum, and the buffers live at a time that reaches it.
    void liveAtPeakMarksTheBuffersOfEveryPeak() {
        size_t marked = 0, problems_with_two_peaks = 0;
        for (uint32_t seed = 0; seed < 300; ++seed) {
            const OffsetProblem p = varied_problem(seed);
            const auto& b = p.buffers;
            auto live_at = [&](uint64_t t) {
                placement::Bytes live = 0;
                for (const Buffer& x : b)
                    if (x.begin <= t && t < x.end) live += x.size;
                return live;
            };
            placement::Bytes top = 0;
            for (const Buffer& x : b)
                top = std::max(top, live_at(x.begin));
            std::vector<uint64_t> peaks;
            for (const Buffer& x : b)
                if (live_at(x.begin) == top) peaks.push_back(x.begin);
            std::sort(peaks.begin(), peaks.end());
            problems_with_two_peaks += std::unique(peaks.begin(), peaks.end()) - peaks.begin() > 1;
            const std::vector<bool> got = placement::live_at_peak(p);
            QCOMPARE(got.size(), b.size());
            for (size_t i = 0; i < b.size(); ++i) {
                const bool want = std::any_of(peaks.begin(), peaks.end(), [&](uint64_t t) {
                    return b[i].begin <= t && t < b[i].end;
                });
                QVERIFY2(got[i] == want,
                         ("seed " + std::to_string(seed) + " buffer " + std::to_string(i)).c_str());
                marked += got[i];
            }
        }
        QVERIFY(marked > 0);
        QVERIFY(problems_with_two_peaks > 0); // the data covers peaks at several times
    }

    void publishedInstancesPlanValidly() {
        const QString root = QString::fromUtf8(TMMU_DSA_DIR);
        TMMU_REQUIRE_DATA(QDir(root).exists(), "the DSA instances at TMMU_DSA_DIR " + root);
        size_t files = 0;
        for (const char* sub : {"minimalloc", "real"}) {
            const QDir dir(root + "/" + sub);
            for (const QString& name : dir.entryList({"*.csv"}, QDir::Files, QDir::Name)) {
                const std::string key = std::string(sub) + "/" + name.toStdString();
                DsaProblem d = load_dsa_csv(dir.filePath(name).toStdString());
                const uint64_t bound = lower_bound_bytes(d.problem);
                auto it = published().find(key);
                QVERIFY2(it != published().end(), key.c_str());
                QCOMPARE(d.problem.buffers.size(), it->second.buffers);
                QCOMPARE(bound, it->second.lower_bound);
                std::map<std::string, uint64_t> heights;
                for (const OffsetStrategy* s : all_strategies()) {
                    OffsetSolution sol = s->solve(d.problem, Progress{});
                    validate_solution(d.problem, sol.offsets, key,
                                      [&d](size_t i) { return "buffer '" + d.ids[i] + "'"; });
                    QVERIFY(sol.height >= bound);
                    heights[std::string(s->name())] = sol.height;
                }
                // auto reaches the best framework heuristic's figure.
                const double over = (double(heights["auto"]) / double(bound) - 1.0) * 100.0;
                QVERIFY2(over <= it->second.best_framework_pct,
                         (key + ": auto " + std::to_string(over) + "% over LB").c_str());
                QVERIFY(heights["multi-order"] <= heights["best-fit"]);
                if (!d.given_offsets.empty() && d.given_offsets.front()) {
                    std::vector<uint64_t> given;
                    for (const auto& o : d.given_offsets)
                        given.push_back(o.value());
                    validate_solution(d.problem, given, key + " (given)");
                }
                ++files;
            }
        }
        QCOMPARE(files, published().size());
    }
};

QTEST_GUILESS_MAIN(TestStrategyProperties)
#include "test_strategy_properties.moc"
