// Seed 000's ApplyPlan, ZeroTensor / DebugFillTensor and CommitExecution on host memory
// (engine/apply): every tensor at base + offset, filled, read back, and a state hash that only
// the plan and the fill decide.
#include "apply/host_arenas.h"
#include "apply/memory_binding.h"
#include "core/failure.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <vector>

using namespace tmmu;

namespace {

// views_and_inplace: views and in-place outputs share bytes; training, so buffers are reused
// over time too. Activations in pages of 64 KiB, so the arena holds more than its peak.
Plan shared_bytes_plan() {
    const std::string path = TMMU_SOURCE_DIR "/resources/models/examples/views_and_inplace.json";
    const LoadedModel m = load_model(path, {Mode::Training});
    PlanOptions o;
    for (ArenaConfig& a : o.policy.arenas)
        if (a.name == "activations") a.page_size = 64 << 10;
    return plan_model(m, Mode::Training, o, Progress{});
}

// Host memory for `plan` with every byte set to 0xab, so a byte the fill skipped shows.
struct Dirty {
    explicit Dirty(const Plan& plan) : host(plan) {
        for (const ArenaMemory& m : host.memory())
            std::memset(m.base, 0xab, m.size);
    }
    HostArenas host;
};

bool all_bytes(const std::byte* p, uint64_t n, std::byte value) {
    for (uint64_t i = 0; i < n; ++i)
        if (p[i] != value) return false;
    return true;
}

ApplyOptions debug_fill(uint64_t seed, DataPolicy policy = DataPolicy::Standard) {
    return {{FillKind::Debug, seed}, policy};
}

} // namespace

class TestApply : public QObject {
    Q_OBJECT
  private slots:
    void bindsAndZeroesEveryTensor() {
        const Plan plan = shared_bytes_plan();
        Dirty memory(plan);
        const std::vector<ArenaMemory> arenas = memory.host.memory();
        for (size_t i = 0; i < plan.arenas.size(); ++i) {
            const ArenaPlan& a = plan.arenas[i];
            QCOMPARE(arenas[i].size, a.config.committed_bytes(a.metrics.peak_bytes));
        }
        const MemoryBinding b(plan, arenas, ApplyOptions{});
        uint64_t filled = 0;
        for (const PlannedTensor& t : plan.tensors) {
            QVERIFY(b.is_bound(t.id));
            std::byte* p = b.get_ptr(t.id);
            QCOMPARE(p, arenas[t.arena].base + t.offset);
            QVERIFY2(all_bytes(p, t.size, std::byte{0}), t.id.c_str());
            filled += t.size;
        }
        QCOMPARE(b.tensor_count(), plan.tensors.size());
        QCOMPARE(b.filled_bytes(), filled);
        QCOMPARE(b.verify(), std::string());
        // Tensors are zeroed, not whole arenas: the page past the activations' peak is untouched.
        for (size_t i = 0; i < plan.arenas.size(); ++i) {
            const uint64_t peak = plan.arenas[i].metrics.peak_bytes;
            QVERIFY(all_bytes(arenas[i].base + peak, arenas[i].size - peak, std::byte{0xab}));
        }
        QVERIFY(arenas[1].size > plan.arenas[1].metrics.peak_bytes);
        QVERIFY(!b.is_bound("no such tensor"));
        TMMU_EXPECT_FAILURE(b.get_ptr("no such tensor"), FailureCode::InvalidArgument);
    }

    // A view at byte 64 of a 128-aligned buffer sits where its base's bytes put it: binding it
    // was refused as ALIGNMENT_VIOLATION, blaming the arena's base (helper-53).
    void viewsSitWhereTheirBasePutsThem() {
        QTemporaryDir dir;
        // `view_alignment`: the row's own "alignment" field, none when empty.
        auto plan_of = [&](const std::string& view_alignment) {
            const std::string path = dir.filePath("view.json").toStdString();
            std::ofstream(path) << R"({"format": "tmmu-ir", "version": 1, "tensors": [
                {"id": "x", "shape": [4, 64], "dtype": "f32", "role": "input"},
                {"id": "h", "shape": [4, 64], "dtype": "f32", "role": "activation"},
                {"id": "row1", "shape": [16], "dtype": "f32", "role": "activation",)"
                                << view_alignment << R"(
                 "view": {"base": "h", "byte_offset": 64}},
                {"id": "y", "shape": [16], "dtype": "f32", "role": "output"}],
              "nodes": [{"id": "fc", "opcode": "relu", "inputs": ["x"], "outputs": ["h"]},
                        {"id": "sl", "opcode": "slice", "inputs": ["h"], "outputs": ["row1"]},
                        {"id": "act", "opcode": "relu", "inputs": ["row1"], "outputs": ["y"]}]})";
            return plan_model(load_model(path, {Mode::Inference}), Mode::Inference, {}, Progress{});
        };
        const Plan plan = plan_of("");
        const auto row = std::find_if(plan.tensors.begin(), plan.tensors.end(),
                                      [](const PlannedTensor& t) { return t.id == "row1"; });
        QVERIFY(row->offset % row->alignment != 0); // inside its base, not aligned itself
        HostArenas host(plan);
        const MemoryBinding b(plan, host.memory(), ApplyOptions{});
        QCOMPARE(b.get_ptr("row1"), host.memory()[row->arena].base + row->offset);
        QCOMPARE(b.verify(), std::string());
        // A view that asks for an alignment its place in the base cannot give is refused, and
        // the message says where it sits (the memory is not to blame; helper-56).
        const Plan asked = plan_of(R"( "alignment": 256,)");
        HostArenas asked_host(asked);
        const auto f = test::capture_failure(
            [&] { (void)MemoryBinding(asked, asked_host.memory(), ApplyOptions{}); });
        QVERIFY(f && f->code() == FailureCode::AlignmentViolation);
        QCOMPARE(f->where(), std::string("tensor 'row1'"));
        QVERIFY2(f->message().find("byte 64 of its buffer") != std::string::npos, f->what());
    }

    // A debug pattern is fixed by arena offset and seed: tensors sharing bytes all read back
    // their own pattern, two runs write the same bytes, another seed others.
    void debugPatternIsSeededAndPositional() {
        const Plan plan = shared_bytes_plan();
        Dirty first(plan), second(plan), other(plan);
        const MemoryBinding a(plan, first.host.memory(), debug_fill(7));
        const MemoryBinding b(plan, second.host.memory(), debug_fill(7));
        const MemoryBinding c(plan, other.host.memory(), debug_fill(8));
        QCOMPARE(a.verify(), std::string());
        bool differs = false;
        for (const PlannedTensor& t : plan.tensors) {
            QVERIFY2(std::memcmp(a.get_ptr(t.id), b.get_ptr(t.id), t.size) == 0, t.id.c_str());
            differs |= std::memcmp(a.get_ptr(t.id), c.get_ptr(t.id), t.size) != 0;
        }
        QVERIFY(differs);
        QVERIFY(!all_bytes(a.get_ptr(plan.tensors[0].id), plan.tensors[0].size, std::byte{0}));
        // A byte changed behind the binding's back is found, naming the first tensor over it.
        const PlannedTensor& t = plan.tensors[0];
        a.get_ptr(t.id)[t.size - 1] ^= std::byte{1};
        QCOMPARE(a.verify(), "tensor '" + t.id + "' byte " + std::to_string(t.size - 1) + " of " +
                                 std::to_string(t.size));
    }

    // The pattern is written a word at a time where 8 bytes are aligned and byte by byte at the
    // ends: any cut of a range writes the bytes one fill of it writes, and a changed byte is
    // found wherever it lies. The first words are pinned, so patterns stay comparable across
    // versions.
    void debugPatternDoesNotDependOnHowARangeIsCut() {
        const FillSpec fill{FillKind::Debug, 7};
        std::vector<std::byte> whole(64), pieces(64);
        fill_bytes(fill, 1, 0, whole.data(), whole.size());
        const uint64_t cuts[] = {0, 3, 13, 16, 40, 47, 64};
        for (size_t c = 0; c + 1 < std::size(cuts); ++c)
            fill_bytes(fill, 1, cuts[c], pieces.data() + cuts[c], cuts[c + 1] - cuts[c]);
        QVERIFY(whole == pieces);
        const uint8_t pinned[16] = {0xec, 0x27, 0x3e, 0x01, 0x0c, 0xc7, 0x10, 0x70,
                                    0x86, 0x36, 0x5e, 0x3a, 0x04, 0x70, 0x44, 0xca};
        QVERIFY(std::memcmp(whole.data(), pinned, 16) == 0);
        for (uint64_t at = 5; at < 64; ++at) {
            std::vector<std::byte> changed = whole;
            changed[at] ^= std::byte{0x40};
            QCOMPARE(first_mismatch(fill, 1, 5, changed.data() + 5, 59), at - 5);
            QCOMPARE(first_mismatch(fill, 1, 5, whole.data() + 5, 59), uint64_t(59));
        }
    }

    void debugFillIsRefusedUnderConfidentialAndRegulatedPolicies() {
        const Plan plan = shared_bytes_plan();
        Dirty memory(plan);
        for (DataPolicy p : {DataPolicy::Confidential, DataPolicy::Regulated}) {
            const auto f = test::capture_failure(
                [&] { MemoryBinding(plan, memory.host.memory(), debug_fill(1, p)); });
            QVERIFY(f && f->code() == FailureCode::InvalidArgument);
            QCOMPARE(f->where(), std::string("fill"));
            QVERIFY2(std::string(f->what()).find(std::string(data_policy_name(p))) !=
                         std::string::npos,
                     f->what());
        }
        // Refused before a byte was written; zeros are allowed under every policy.
        for (const ArenaMemory& m : memory.host.memory())
            QVERIFY(all_bytes(m.base, m.size, std::byte{0xab}));
        const MemoryBinding zeroed(plan, memory.host.memory(),
                                   {{FillKind::Zero, 0}, DataPolicy::Regulated});
        QCOMPARE(zeroed.verify(), std::string());
    }

    void memoryThatDoesNotFitThePlanIsRefused() {
        const Plan plan = shared_bytes_plan();
        HostArenas host(plan);
        const std::vector<ArenaMemory> good = host.memory();
        auto refused = [&](std::vector<ArenaMemory> arenas, FailureCode code, const char* where) {
            const auto f = test::capture_failure([&] { MemoryBinding(plan, arenas, {}); });
            QVERIFY2(f && f->code() == code, f ? f->what() : "accepted");
            QCOMPARE(f->where(), std::string(where));
        };
        refused({good[0]}, FailureCode::InvalidArgument, "arena 'activations'");
        std::vector<ArenaMemory> extra = good;
        extra.push_back({"scratch", good[0].base, 16});
        refused(extra, FailureCode::InvalidArgument, "arena 'scratch'");
        std::vector<ArenaMemory> small = good;
        small[1].size = plan.arenas[1].metrics.peak_bytes; // the peak, but not in whole pages
        refused(small, FailureCode::ArenaTooSmall, "arena 'activations'");
        // Enough bytes, one past a 256-byte boundary: the first activation tensor is misaligned.
        std::vector<std::byte> spare(good[1].size + 512);
        std::byte* aligned = spare.data() + (256 - reinterpret_cast<uintptr_t>(spare.data()) % 256);
        std::vector<ArenaMemory> unaligned = good;
        unaligned[1].base = aligned + 1;
        const auto first = std::find_if(plan.tensors.begin(), plan.tensors.end(),
                                        [](const PlannedTensor& t) { return t.arena == 1; });
        QVERIFY(first->alignment > 1);
        refused(unaligned, FailureCode::AlignmentViolation, ("tensor '" + first->id + "'").c_str());
        std::vector<ArenaMemory> twice = good;
        twice.push_back(good[0]);
        refused(twice, FailureCode::InvalidArgument, "arena 'parameters'");
        std::vector<ArenaMemory> nobase = good;
        nobase[0].base = nullptr;
        refused(nobase, FailureCode::InvalidArgument, "arena 'parameters'");
        // In another order the same memory binds the same way.
        const MemoryBinding reversed(plan, {good.rbegin(), good.rend()}, {});
        QCOMPARE(reversed.get_ptr(plan.tensors[0].id),
                 good[plan.tensors[0].arena].base + plan.tensors[0].offset);
    }

    // CommitExecution: the same plan and fill commit the same state on any memory; committing
    // again changes nothing; the fill, its seed and the policy are part of the state.
    void commitIsIdempotentAndDeterministic() {
        const Plan plan = shared_bytes_plan();
        HostArenas one(plan), two(plan);
        const MemoryBinding a(plan, one.memory(), {});
        const Digest state = a.commit();
        QCOMPARE(a.commit(), state);
        QCOMPARE(MemoryBinding(plan, two.memory(), {}).commit(), state);
        const Digest seven = MemoryBinding(plan, two.memory(), debug_fill(7)).commit();
        QVERIFY(seven != state);
        QVERIFY(MemoryBinding(plan, two.memory(), debug_fill(8)).commit() != seven);
        QVERIFY(MemoryBinding(plan, two.memory(), {{FillKind::Zero, 0}, DataPolicy::Confidential})
                    .commit() != state);
        // Memory larger than the plan needs commits the same state: the plan's bytes count.
        std::vector<ArenaMemory> larger = one.memory();
        std::vector<std::vector<std::byte>> blocks;
        for (ArenaMemory& m : larger) {
            blocks.emplace_back(m.size + 4096 + 256);
            m.base = blocks.back().data() +
                     (256 - reinterpret_cast<uintptr_t>(blocks.back().data()) % 256);
            m.size += 4096;
        }
        QCOMPARE(MemoryBinding(plan, larger, {}).commit(), state);
    }

    void fillingStopsWhenCancelled() {
        const Plan plan = shared_bytes_plan();
        Dirty memory(plan);
        std::atomic<bool> cancel{true};
        Progress progress;
        progress.cancel_flag = &cancel;
        TMMU_EXPECT_FAILURE(MemoryBinding(plan, memory.host.memory(), {}, progress),
                            FailureCode::Cancelled);
        const MemoryBinding done(plan, memory.host.memory(), {});
        TMMU_EXPECT_FAILURE(done.verify(progress), FailureCode::Cancelled);
    }
};

QTEST_GUILESS_MAIN(TestApply)
#include "test_apply.moc"
