#include "io/dsa_csv.h"
#include "plan/linear_scan.h"
#include "test_support.h"

#include <QObject>

#include <algorithm>
#include <map>

using namespace tmmu;
using tmmu::test::buf;

namespace {

// Max live buffers by brute force over every time step (small horizons only).
uint32_t brute_max_live(const OffsetProblem& p) {
    uint64_t horizon = 0;
    for (const Buffer& b : p.buffers)
        horizon = std::max(horizon, b.end);
    uint32_t best = 0;
    for (uint64_t t = 0; t < horizon; ++t) {
        uint32_t live = 0;
        for (const Buffer& b : p.buffers)
            live += b.begin <= t && t < b.end;
        best = std::max(best, live);
    }
    return best;
}

// True when no two buffers sharing a slot are alive at the same time.
bool slots_are_disjoint(const OffsetProblem& p, const SlotAssignment& s) {
    std::map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> lives;
    for (size_t i = 0; i < p.buffers.size(); ++i)
        lives[s.slot_of[i]].emplace_back(p.buffers[i].begin, p.buffers[i].end);
    for (auto& [slot, list] : lives) {
        std::sort(list.begin(), list.end());
        for (size_t k = 1; k < list.size(); ++k)
            if (list[k].first < list[k - 1].second) return false;
    }
    return true;
}

} // namespace

class TestLinearScan : public QObject {
    Q_OBJECT
  private slots:
    void chainReusesOneSlot() {
        OffsetProblem p;
        p.buffers = {buf(0, 1, 10), buf(1, 2, 20), buf(2, 3, 5)};
        SlotAssignment s = assign_slots(p, 1);
        QCOMPARE(s.slot_count, 1u);
        QCOMPARE(s.max_live, 1u);
        QCOMPARE(s.slot_of, (std::vector<uint32_t>{0, 0, 0}));
        QCOMPARE(s.slot_size, (std::vector<uint64_t>{20}));
    }

    void minimallocExampleGetsLowestFreeSlots() {
        // input.12.csv: b1 [0,3) b2 [3,9) b3 [0,9) b4 [9,21) b5 [0,21), all 4 bytes.
        DsaProblem d = parse_dsa_csv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n"
                                     "b4,9,21,4\nb5,0,21,4\n",
                                     "input.12");
        SlotAssignment s = assign_slots(d.problem, 1);
        QCOMPARE(s.slot_count, 3u);
        QCOMPARE(s.max_live, 3u);
        // b1, b3, b5 start together (equal sizes: index order); b2 takes b1's slot; b4 finds
        // slots 0 and 1 free at 9 and takes the lowest.
        QCOMPARE(s.slot_of, (std::vector<uint32_t>{0, 0, 1, 0, 2}));
        QCOMPARE(s.slot_size, (std::vector<uint64_t>{4, 4, 4}));
    }

    // Seed 000 II.F: a slot's occupants are numbered in the order they hold it.
    void generationsCountEarlierOccupantsOfTheSlot() {
        OffsetProblem p;
        p.buffers = {buf(4, 6, 1), buf(0, 2, 1), buf(0, 6, 1), buf(2, 4, 1), buf(6, 7, 1)};
        const SlotAssignment s = assign_slots(p, 1);
        QCOMPARE(s.slot_of, (std::vector<uint32_t>{0, 0, 1, 0, 0}));
        QCOMPARE(slot_generations(p, s.slot_of), (std::vector<uint32_t>{2, 0, 0, 1, 3}));
        QCOMPARE(slot_generations(OffsetProblem{}, {}), std::vector<uint32_t>{});
    }

    void largerBufferFirstOnEqualBegin() {
        OffsetProblem p;
        p.buffers = {buf(0, 5, 1), buf(0, 5, 8), buf(0, 5, 8)};
        SlotAssignment s = assign_slots(p, 1);
        QCOMPARE(s.slot_of, (std::vector<uint32_t>{2, 0, 1}));
        QCOMPARE(s.slot_size, (std::vector<uint64_t>{8, 8, 1}));
    }

    void endEqualToBeginFreesTheSlot() {
        OffsetProblem p;
        p.buffers = {buf(0, 4, 1), buf(4, 8, 1), buf(3, 5, 1)};
        SlotAssignment s = assign_slots(p, 1);
        QCOMPARE(s.slot_count, 2u);
        QCOMPARE(s.max_live, 2u);
        QCOMPARE(s.slot_of, (std::vector<uint32_t>{0, 0, 1}));
    }

    void slotSizeAndAlignmentAreMaxima() {
        OffsetProblem p;
        p.buffers = {buf(0, 2, 100, 16), buf(2, 4, 300, 4), buf(0, 4, 7, 1)};
        SlotAssignment s = assign_slots(p, 8);
        QCOMPARE(s.slot_count, 2u);
        QCOMPARE(s.slot_of, (std::vector<uint32_t>{0, 0, 1}));
        QCOMPARE(s.slot_size, (std::vector<uint64_t>{300, 7}));
        QCOMPARE(s.slot_alignment, (std::vector<uint64_t>{16, 8}));
    }

    void zeroSizeBuffersTakeSlots() {
        OffsetProblem p;
        p.buffers = {buf(0, 3, 0), buf(1, 2, 0), buf(0, 3, 5)};
        SlotAssignment s = assign_slots(p, 1);
        QCOMPARE(s.slot_count, 3u);
        QCOMPARE(s.max_live, 3u);
    }

    void emptyProblemHasNoSlots() {
        SlotAssignment s = assign_slots(OffsetProblem{}, 1);
        QCOMPARE(s.slot_count, 0u);
        QCOMPARE(s.max_live, 0u);
        QVERIFY(s.slot_of.empty());
    }

    void emptyLifetimeIsRejected() {
        OffsetProblem p;
        p.buffers = {buf(0, 3, 4), buf(5, 5, 4)};
        TMMU_EXPECT_FAILURE(assign_slots(p, 1), FailureCode::InvalidArgument);
        auto f = test::capture_failure([&] { assign_slots(p, 1); });
        QVERIFY(f->where().find("buffer 1") != std::string::npos);
    }

    void slotCountEqualsMaxLiveOnRandomProblems() {
        for (uint32_t seed = 0; seed < 300; ++seed) {
            const uint64_t horizon = 1 + seed % 60;
            OffsetProblem p = test::random_problem(seed, seed % 80, horizon, 1000, seed % 2);
            if (seed % 7 == 0)
                for (size_t i = 0; i < p.buffers.size(); i += 3)
                    p.buffers[i].size = 0;
            SlotAssignment s = assign_slots(p, 1);
            QCOMPARE(s.max_live, brute_max_live(p));
            QCOMPARE(s.slot_count, s.max_live);
            QVERIFY(slots_are_disjoint(p, s));
            for (size_t i = 0; i < p.buffers.size(); ++i) {
                QVERIFY(s.slot_size[s.slot_of[i]] >= p.buffers[i].size);
                QVERIFY(s.slot_alignment[s.slot_of[i]] >= p.buffers[i].alignment);
            }
        }
    }

    void deterministicAcrossRuns() {
        OffsetProblem p = test::random_problem(42, 5000, 3000, 1 << 20, true);
        SlotAssignment a = assign_slots(p, 128);
        SlotAssignment b = assign_slots(p, 128);
        QCOMPARE(a.slot_of, b.slot_of);
        QCOMPARE(a.slot_size, b.slot_size);
        QCOMPARE(a.slot_alignment, b.slot_alignment);
        QVERIFY(slots_are_disjoint(p, a));
    }

    void dsaExampleFromDisk() {
        const std::string path = std::string(TMMU_DSA_DIR) + "/minimalloc/input.12.csv";
        TMMU_REQUIRE_DATA(test::read_file(path).has_value(), QString::fromStdString(path));
        DsaProblem d = load_dsa_csv(path);
        SlotAssignment s = assign_slots(d.problem, 1);
        QCOMPARE(s.slot_count, 3u);
        QCOMPARE(lower_bound_bytes(d.problem), 12u);
    }
};

QTEST_GUILESS_MAIN(TestLinearScan)
#include "test_linear_scan.moc"
