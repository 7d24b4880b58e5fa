#include "core/failure.h"
#include "encoding/cbor.h"
#include "encoding/sha256.h"
#include "io/checkpoint.h"
#include "plan/plan_hash.h"
#include "sample_plan.h"
#include "source/model_source.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>

#include <random>

using namespace tmmu;
using cbor::Value;
using tmmu::test::sample_plan;

namespace {

// Everything but timing must survive a checkpoint.
void compare_plans(const Plan& a, const Plan& b) {
    QCOMPARE(a.source, b.source);
    QCOMPARE(a.mode, b.mode);
    QCOMPARE(a.strategy, b.strategy);
    QCOMPARE(a.ir_hash, b.ir_hash);
    QCOMPARE(a.replay_token, b.replay_token);
    QCOMPARE(a.plan_hash, b.plan_hash);
    QCOMPARE(a.shard, b.shard);
    QCOMPARE(a.dims, b.dims);
    QVERIFY(a.retention == b.retention);
    QCOMPARE(a.execution_order, b.execution_order);
    QCOMPARE(a.notes, b.notes);
    QCOMPARE(a.series.times, b.series.times);
    QCOMPARE(a.series.live_bytes, b.series.live_bytes);
    QCOMPARE(a.series.high_water, b.series.high_water);
    QCOMPARE(a.arenas.size(), b.arenas.size());
    for (size_t i = 0; i < a.arenas.size(); ++i) {
        const ArenaPlan &x = a.arenas[i], &y = b.arenas[i];
        QCOMPARE(x.config.name, y.config.name);
        QCOMPARE(x.config.capacity, y.config.capacity);
        QCOMPARE(x.config.alignment, y.config.alignment);
        QCOMPARE(x.config.page_size, y.config.page_size);
        QCOMPARE(x.strategy, y.strategy);
        QCOMPARE(x.problem.capacity, y.problem.capacity);
        QCOMPARE(x.problem.buffers.size(), y.problem.buffers.size());
        for (size_t k = 0; k < x.problem.buffers.size(); ++k) {
            const Buffer &u = x.problem.buffers[k], &v = y.problem.buffers[k];
            QVERIFY(u.begin == v.begin && u.end == v.end && u.size == v.size &&
                    u.alignment == v.alignment && u.pinned == v.pinned);
        }
        QCOMPARE(x.buffer_names, y.buffer_names);
        QCOMPARE(x.solution.offsets, y.solution.offsets);
        QCOMPARE(x.solution.height, y.solution.height);
        QCOMPARE(x.solution.producer, y.solution.producer);
        QCOMPARE(x.slot_of_buffer, y.slot_of_buffer);
        const ArenaMetrics &m = x.metrics, &n = y.metrics;
        QVERIFY(m.peak_bytes == n.peak_bytes && m.lower_bound == n.lower_bound &&
                m.slot_count == n.slot_count && m.max_live == n.max_live &&
                m.buffers == n.buffers && m.tensors == n.tensors);
        QCOMPARE(m.peak_over_bound, n.peak_over_bound);
        QCOMPARE(m.reuse_ratio, n.reuse_ratio);
        QCOMPARE(m.internal_fragmentation, n.internal_fragmentation);
    }
    QCOMPARE(a.tensors.size(), b.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        const PlannedTensor &s = a.tensors[i], &t = b.tensors[i];
        QVERIFY(s.id == t.id && s.name == t.name && s.role == t.role && s.arena == t.arena &&
                s.buffer == t.buffer && s.slot == t.slot && s.offset == t.offset &&
                s.size == t.size && s.alignment == t.alignment && s.life.begin == t.life.begin &&
                s.life.end == t.life.end);
    }
}

Plan decode(const std::vector<uint8_t>& bytes) {
    return decode_checkpoint(bytes.data(), bytes.size());
}

Value as_value(const std::vector<uint8_t>& bytes) {
    return cbor::decode(bytes.data(), bytes.size());
}

Value& field(Value& map, const std::string& key) {
    for (auto& [k, v] : map.entries)
        if (k.text == key) return v;
    throw std::logic_error("no key " + key);
}

// Re-signs an edited checkpoint the way encode_checkpoint does (content_hash = SHA-256 of the
// map without it), so a test reaches the checks behind the content hash.
std::vector<uint8_t> reseal(Value v) {
    std::erase_if(v.entries, [](const auto& e) { return e.first.text == "content_hash"; });
    const Digest d = sha256(cbor::encode_canonical(v));
    v.set("content_hash", Value::byte_string(d.data(), d.size()));
    return cbor::encode_canonical(v);
}

// A plan edited by `edit`, re-hashed so that only the validator can object to it.
std::vector<uint8_t> rehashed(const std::function<void(Plan&)>& edit) {
    Plan p = sample_plan();
    edit(p);
    p.plan_hash = compute_plan_hash(p);
    return encode_checkpoint(p);
}

} // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT
  private slots:
    void roundTripIsBitIdentical() {
        const Plan p = sample_plan();
        const auto bytes = encode_checkpoint(p);
        const Plan q = decode(bytes);
        compare_plans(p, q);
        QCOMPARE(q.total_plan_ns, uint64_t(0));
        for (const ArenaPlan& a : q.arenas)
            QCOMPARE(a.metrics.plan_ns, uint64_t(0));
        QCOMPARE(encode_checkpoint(q), bytes);
        QCOMPARE(encode_checkpoint(sample_plan()), bytes); // deterministic
        // A paged arena keeps its page size; its problem capacity stays within whole pages.
        const auto paged = rehashed([](Plan& p) { p.arenas[1].config.page_size = 1024; });
        QCOMPARE(decode(paged).arenas[1].config.page_size, uint64_t(1024));
        QCOMPARE(encode_checkpoint(decode(paged)), paged);
        // 1536 is no power of two, though the capacity holds whole pages of it (3072 bytes).
        const auto f = test::capture_failure(
            [] { (void)decode(rehashed([](Plan& p) { p.arenas[1].config.page_size = 1536; })); });
        QVERIFY2(f && f->code() == FailureCode::CorruptCheckpoint &&
                     f->where() == "checkpoint.arenas[1].page_size",
                 f ? f->what() : "accepted");
        TMMU_EXPECT_FAILURE(decode(rehashed([](Plan& p) {
                                p.arenas[1].config.capacity = 5000; // 4096 in whole pages
                                p.arenas[1].config.page_size = 1024;
                                p.arenas[1].problem.capacity = 5000;
                            })),
                            FailureCode::CorruptCheckpoint);
    }
    // A plan of a file whose path is not UTF-8 (Latin-1 'caf\xe9.json') is saved with those
    // bytes as U+FFFD: the encoder refused it ('INVALID_ARGUMENT at cbor text string', exit 2).
    void sourcePathsThatAreNotUtf8AreSaved() {
        const auto bytes = rehashed([](Plan& p) { p.source = "models/caf\xe9.json"; });
        const Plan q = decode(bytes);
        QCOMPARE(q.source, std::string("models/caf\xef\xbf\xbd.json"));
        QCOMPARE(encode_checkpoint(q), bytes);
    }
    void bareProblemPlanRoundTrips() {
        Plan p = sample_plan();
        p.mode.reset();
        p.execution_order.clear();
        p.notes.clear();
        p.series = {};
        p.plan_hash = compute_plan_hash(p);
        const auto bytes = encode_checkpoint(p);
        const Plan q = decode(bytes);
        QVERIFY(!q.mode.has_value());
        compare_plans(p, q);
        QCOMPARE(encode_checkpoint(q), bytes);
    }
    void derivedMetricsFollowIntegers() {
        ArenaMetrics m;
        m.peak_bytes = 1000;
        m.lower_bound = 800;
        m.slot_count = 3;
        m.tensors = 12;
        m.derive_ratios();
        QCOMPARE(m.peak_over_bound, 1.25);
        QCOMPARE(m.reuse_ratio, 0.75);
        QCOMPARE(m.internal_fragmentation, 0.2);
        ArenaMetrics empty;
        empty.derive_ratios();
        QCOMPARE(empty.peak_over_bound, 1.0);
        QCOMPARE(empty.reuse_ratio, 0.0);
        QCOMPARE(empty.internal_fragmentation, 0.0);
    }
    void fileRoundTripIsAtomic() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("plan.tmmuckpt").toStdString();
        const Plan p = sample_plan();
        write_checkpoint_file(p, path);
        write_checkpoint_file(p, path); // replacing an existing file
        compare_plans(p, read_checkpoint_file(path));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"plan.tmmuckpt"});
        const auto raw = test::read_file(path);
        QVERIFY(raw.has_value());
        QCOMPARE(raw->size(), encode_checkpoint(p).size());
        TMMU_EXPECT_FAILURE(read_checkpoint_file(path + ".missing"), FailureCode::IoError);
        TMMU_EXPECT_FAILURE(write_checkpoint_file(p, dir.filePath("no/such/dir/x").toStdString()),
                            FailureCode::IoError);
    }
    void encodeRefusesStaleHash() {
        Plan p = sample_plan();
        p.tensors[1].offset = 192;
        TMMU_EXPECT_FAILURE(encode_checkpoint(p), FailureCode::InvalidArgument);
    }
    void detectsAnyEditWithoutResealing() {
        Value v = as_value(encode_checkpoint(sample_plan()));
        field(v, "notes").items[0].text = "sample notf";
        const auto bytes = cbor::encode_canonical(v);
        auto f = test::capture_failure([&] { (void)decode(bytes); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::CorruptCheckpoint);
        QCOMPARE(f->where(), std::string("checkpoint.content_hash"));
    }
    void detectsTamperedTensorOffset() {
        Value v = as_value(encode_checkpoint(sample_plan()));
        field(v, "tensors").items[1].items[6] = Value::uint64(192); // a.view, inside buffer a
        auto f = test::capture_failure([&] { (void)decode(reseal(v)); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::CorruptCheckpoint);
        QVERIFY2(f->message().find("does not match recomputed") != std::string::npos, f->what());
    }
    void detectsTamperedBufferOffset() {
        Value v = as_value(encode_checkpoint(sample_plan()));
        // Buffer a moves from 0 to 256: the peak stays 768, but tensor a no longer sits at its
        // buffer.
        field(field(v, "arenas").items[1], "offsets").items[0] = Value::uint64(256);
        auto f = test::capture_failure([&] { (void)decode(reseal(v)); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::CorruptCheckpoint);
        QVERIFY2(f->where().find("checkpoint.tensors[0]") == 0, f->what());
    }
    void validatorRejectsConsistentButInvalidLayouts() {
        auto move_b = [](uint64_t offset, uint64_t peak) {
            return [=](Plan& p) {
                p.arenas[1].solution.offsets[1] = offset;
                p.arenas[1].solution.height = peak;
                p.arenas[1].metrics.peak_bytes = peak;
                p.arenas[1].metrics.lower_bound = std::min<uint64_t>(peak, 768);
                p.tensors[2].offset = offset;
            };
        };
        TMMU_EXPECT_FAILURE(decode(rehashed(move_b(256, 512))), FailureCode::AddressCollision);
        TMMU_EXPECT_FAILURE(decode(rehashed(move_b(520, 776))), FailureCode::AlignmentViolation);
        TMMU_EXPECT_FAILURE(decode(rehashed([](Plan& p) { p.arenas[1].problem.capacity = 600; })),
                            FailureCode::ArenaTooSmall);
        TMMU_EXPECT_FAILURE(decode(rehashed([](Plan& p) {
                                p.arenas[1].solution.offsets[2] = 64; // c is pinned at 0
                                p.tensors[3].offset = 64;
                                p.arenas[1].metrics.peak_bytes = 768;
                            })),
                            FailureCode::AlignmentViolation);
    }
    void rejectsWrongStructure_data() {
        QTest::addColumn<int>("edit");
        QTest::addColumn<QString>("where");
        QTest::newRow("format") << 0 << "checkpoint.format";
        QTest::newRow("version") << 1 << "checkpoint.version";
        QTest::newRow("unknown key") << 2 << "checkpoint";
        QTest::newRow("missing key") << 3 << "checkpoint";
        QTest::newRow("mode alias") << 4 << "checkpoint.mode";
        QTest::newRow("wrong type") << 5 << "checkpoint.arenas[0].offsets[1]";
        QTest::newRow("short digest") << 6 << "checkpoint.replay_token";
        QTest::newRow("length mismatch") << 7 << "checkpoint.arenas[1].slot_of_buffer";
        QTest::newRow("bad role") << 8 << "checkpoint.tensors[0][2].role";
        QTest::newRow("arena index") << 9 << "checkpoint.tensors[4][3].arena";
        QTest::newRow("empty lifetime") << 10 << "checkpoint.arenas[0].buffers[0]";
        QTest::newRow("peak") << 11 << "checkpoint.arenas[0].metrics.peak_bytes";
        QTest::newRow("not a map") << 12 << "checkpoint";
    }
    void rejectsWrongStructure() {
        QFETCH(int, edit);
        QFETCH(QString, where);
        Value v = as_value(encode_checkpoint(sample_plan()));
        Value& a0 = field(v, "arenas").items[0];
        switch (edit) {
        case 0:
            field(v, "format") = Value::str("tmmu-plan");
            break;
        case 1:
            field(v, "version") = Value::uint64(2);
            break;
        case 2:
            v.set("extra", Value::null());
            break;
        case 3:
            std::erase_if(v.entries, [](auto& e) { return e.first.text == "notes"; });
            break;
        case 4:
            field(v, "mode") = Value::str("backward");
            break;
        case 5:
            field(a0, "offsets").items[1] = Value::str("256");
            break;
        case 6:
            field(v, "replay_token").bytes.pop_back();
            break;
        case 7:
            field(field(v, "arenas").items[1], "slot_of_buffer").items.pop_back();
            break;
        case 8:
            field(v, "tensors").items[0].items[2] = Value::str("weights");
            break;
        case 9:
            field(v, "tensors").items[4].items[3] = Value::uint64(2);
            break;
        case 10:
            field(a0, "buffers").items[0].items[1] = Value::uint64(0);
            break;
        case 11:
            field(field(a0, "metrics"), "peak_bytes") = Value::uint64(357);
            break;
        default:
            v = Value::array({v});
            break;
        }
        const auto bytes = edit == 12 ? cbor::encode_canonical(v) : reseal(v);
        auto f = test::capture_failure([&] { (void)decode(bytes); });
        QVERIFY(f.has_value());
        QVERIFY2(f->code() == FailureCode::CorruptCheckpoint, f->what());
        QCOMPARE(QString::fromStdString(f->where()), where);
    }
    // Checks that sit behind others, each reached by one resealed edit and named by its field
    // and message (mutation testing found them unreached: a decoder without them failed later,
    // elsewhere, or not at all).
    void rejectsFieldsOutOfRangeByName_data() {
        QTest::addColumn<int>("edit");
        QTest::addColumn<QString>("where");
        QTest::addColumn<QString>("says");
        QTest::newRow("buffer index = buffer count") << 0 << "checkpoint.tensors[0][4].buffer"
                                                     << "is out of range";
        QTest::newRow("tensor larger than its buffer") << 1 << "checkpoint.tensors[0][6].offset"
                                                       << "is outside its buffer";
        QTest::newRow("tensor past its buffer") << 2 << "checkpoint.tensors[0][6].offset"
                                                << "is outside its buffer";
        QTest::newRow("u32 field of 2^32") << 3 << "checkpoint.tensors[0][5].slot"
                                           << "does not fit in 32 bits";
        QTest::newRow("lower bound above peak") << 4 << "checkpoint.arenas[1].metrics.lower_bound"
                                                << "lower bound exceeds peak_bytes";
        QTest::newRow("31-byte content hash") << 5 << "checkpoint.content_hash"
                                              << "expected 32 bytes, found 31";
    }
    void rejectsFieldsOutOfRangeByName() {
        QFETCH(int, edit);
        QFETCH(QString, where);
        QFETCH(QString, says);
        Value v = as_value(encode_checkpoint(sample_plan()));
        Value& t0 = field(v, "tensors").items[0];
        const uint64_t arena = t0.items[3].number;
        Value& a = field(v, "arenas").items[arena];
        switch (edit) {
        case 0:
            t0.items[4] = Value::uint64(field(a, "buffers").items.size());
            break;
        case 1:
            t0.items[7] = Value::uint64(t0.items[7].number + 4096);
            break;
        case 2:
            t0.items[6] = Value::uint64(uint64_t(1) << 40);
            break;
        case 3:
            t0.items[5] = Value::uint64(uint64_t(1) << 32);
            break;
        case 4:
            field(field(a, "metrics"), "lower_bound") =
                Value::uint64(field(field(a, "metrics"), "peak_bytes").number + 1);
            break;
        default:
            field(v, "content_hash").bytes.pop_back();
            break;
        }
        const auto bytes = edit == 5 ? cbor::encode_canonical(v) : reseal(v);
        auto f = test::capture_failure([&] { (void)decode(bytes); });
        QVERIFY(f.has_value());
        QVERIFY2(f->code() == FailureCode::CorruptCheckpoint, f->what());
        QCOMPARE(QString::fromStdString(f->where()), where);
        QVERIFY2(QString::fromStdString(f->message()).contains(says), f->what());
    }

    // Plans from the real planner satisfy every invariant the decoder checks and survive a
    // checkpoint unchanged (the planner and ArenaMetrics::derive_ratios agree on the ratios).
    void realPlansRoundTrip_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("strategy");
        QTest::addColumn<bool>("sharded"); // rank 1 of 3, parameters and activations sharded
        const QString models = TMMU_SOURCE_DIR "/resources/models/";
        QTest::newRow("views") << models + "examples/views_and_inplace.json"
                               << "auto" << false;
        QTest::newRow("views, sharded") << models + "examples/views_and_inplace.json"
                                        << "auto" << true;
        QTest::newRow("residual") << models + "examples/residual_blocks.json"
                                  << "auto" << false;
        QTest::newRow("gpt2 small") << models + "gpt2-small.json"
                                    << "slots" << false;
        QTest::newRow("gpt2 small, sharded") << models + "gpt2-small.json"
                                             << "slots" << true;
        QTest::newRow("csv") << QString(TMMU_DSA_DIR "/minimalloc/A.1048576.csv") << "auto"
                             << false;
        QTest::newRow("dynamic shapes") << models + "examples/dynamic_seq.json"
                                        << "auto" << false;
    }
    void realPlansRoundTrip() {
        QFETCH(QString, path);
        QFETCH(QString, strategy);
        QFETCH(bool, sharded);
        TMMU_REQUIRE_DATA(QFile::exists(path), path);
        const ModelRequest request{Mode::Training, 1, 128};
        PlanOptions options;
        options.strategy = strategy.toStdString();
        if (sharded) options.shard = {3, 1, {Role::Parameter, Role::Activation}};
        const Plan p =
            plan_model(load_model(path.toStdString(), request), request.mode, options, {});
        const auto bytes = encode_checkpoint(p);
        const Plan q = decode(bytes);
        compare_plans(p, q);
        QCOMPARE(encode_checkpoint(q), bytes);
    }
    // The shard entry is there for a rank of a distributed run only, and read back checked.
    void shardEntryIsCheckedOnRead() {
        const Value single = as_value(encode_checkpoint(sample_plan()));
        QVERIFY(std::none_of(single.entries.begin(), single.entries.end(),
                             [](const auto& e) { return e.first.text == "shard"; }));
        const auto sharded = rehashed([](Plan& p) { p.shard = {4, 2, {Role::OptimizerState}}; });
        QCOMPARE(decode(sharded).shard, (ShardSpec{4, 2, {Role::OptimizerState}}));
        const auto edited = [&](const char* key, Value value) {
            Value v = as_value(sharded);
            field(field(v, "shard"), key) = std::move(value);
            return test::capture_failure([&] { (void)decode(reseal(std::move(v))); });
        };
        auto f = edited("rank", Value::uint64(4));
        QVERIFY(f && f->code() == FailureCode::CorruptCheckpoint);
        QCOMPARE(QString::fromStdString(f->where()), QString("checkpoint.shard"));
        QVERIFY2(QString::fromStdString(f->message()).contains("outside a world of 4"), f->what());
        f = edited("roles", Value::array({Value::str("workspace")}));
        QVERIFY2(f && f->code() == FailureCode::CorruptCheckpoint &&
                     QString::fromStdString(f->message()).contains("cannot be sharded"),
                 f ? f->what() : "accepted");
        // A valid spec of another rank: the plan hash names the rank, so it no longer matches.
        f = edited("rank", Value::uint64(3));
        QVERIFY(f && f->code() == FailureCode::CorruptCheckpoint);
        QCOMPARE(QString::fromStdString(f->where()), QString("checkpoint.plan_hash"));
    }
    // A plan of a model with dynamic dimensions keeps its binding, read back checked.
    void dimsEntryIsCheckedOnRead() {
        const Value fixed = as_value(encode_checkpoint(sample_plan()));
        QVERIFY(std::none_of(fixed.entries.begin(), fixed.entries.end(),
                             [](const auto& e) { return e.first.text == "dims"; }));
        const auto bound = rehashed([](Plan& p) { p.dims = {{"batch", 2}, {"seq", 512}}; });
        QCOMPARE(decode(bound).dims, (DimBinding{{"batch", 2}, {"seq", 512}}));
        const auto edited = [&](Value dims) {
            Value v = as_value(bound);
            field(v, "dims") = std::move(dims);
            return test::capture_failure([&] { (void)decode(reseal(std::move(v))); });
        };
        const auto entry = [](const char* name, uint64_t value) {
            return Value::array({Value::str(name), Value::uint64(value)});
        };
        auto f = edited(Value::array({entry("seq", 512), entry("batch", 2)}));
        QVERIFY2(f && f->code() == FailureCode::CorruptCheckpoint &&
                     f->message().find("ascending and unique") != std::string::npos,
                 f ? f->what() : "accepted");
        QCOMPARE(QString::fromStdString(f->where()), QString("checkpoint.dims[1]"));
        f = edited(Value::array({entry("seq", 0)}));
        QVERIFY2(f && f->message().find("seq=0 is not a dimension") != std::string::npos,
                 f ? f->what() : "accepted");
        f = edited(Value::array({Value::array({Value::str("seq")})}));
        QVERIFY2(f && f->code() == FailureCode::CorruptCheckpoint, f ? f->what() : "accepted");
    }
    // A graph's plan keeps its activation retention, read back checked against the plan (a
    // training plan of 4 steps and 5 buffers); a checkpoint without the entry (written before
    // tmmu kept it) restores without it.
    void retentionEntryIsCheckedOnRead() {
        QVERIFY(!decode(encode_checkpoint(sample_plan())).retention);
        const ActivationRetention kept{420, 388, 3, 2, 2};
        const auto with_retention = rehashed([&](Plan& p) { p.retention = kept; });
        QVERIFY(decode(with_retention).retention == kept);
        const ActivationRetention none{420, 0, 3, 0, kNone}; // no backward pass
        QVERIFY(decode(rehashed([&](Plan& p) { p.retention = none; })).retention == none);
        const auto refused = [&](const std::function<void(Plan&)>& edit, const char* why) {
            const auto f = test::capture_failure([&] { (void)decode(rehashed(edit)); });
            return f && f->code() == FailureCode::CorruptCheckpoint &&
                   f->where() == "checkpoint.retention" &&
                   f->message().find(why) != std::string::npos;
        };
        QVERIFY(refused(
            [&](Plan& p) {
                p.retention = ActivationRetention{420, 388, 3, 2, 4};
            },
            "outside the schedule of 4 steps"));
        QVERIFY(refused(
            [&](Plan& p) {
                p.retention = ActivationRetention{420, 388, 9, 2, 2};
            },
            "9 forward buffers in a plan of 5 buffers"));
        QVERIFY(refused(
            [&](Plan& p) {
                p.retention = ActivationRetention{420, 4, 3, 1, kNone};
            },
            "retained without a backward pass"));
        QVERIFY(refused(
            [&](Plan& p) {
                p.retention = kept;
                p.mode = Mode::Inference;
            },
            "an inference plan has no backward pass"));
        QVERIFY(refused(
            [&](Plan& p) {
                p.retention = kept;
                p.mode = Mode::Forward;
            },
            "starts after its 4 steps, not at 2"));
        QVERIFY(refused(
            [&](Plan& p) {
                p.retention = none;
                p.mode.reset();
            },
            "has no activation retention"));
        const auto edited = [&](const char* key, Value value) {
            Value v = as_value(with_retention);
            field(field(v, "retention"), key) = std::move(value);
            return test::capture_failure([&] { (void)decode(reseal(std::move(v))); });
        };
        auto f = edited("retained_bytes", Value::uint64(421));
        QVERIFY2(f && f->code() == FailureCode::CorruptCheckpoint &&
                     f->message().find("more activations retained") != std::string::npos,
                 f ? f->what() : "accepted");
        QCOMPARE(QString::fromStdString(f->where()), QString("checkpoint.retention"));
        f = edited("retained_buffers", Value::uint64(5));
        QVERIFY2(f && f->code() == FailureCode::CorruptCheckpoint, f ? f->what() : "accepted");
        f = edited("forward_bytes", Value::str("420"));
        QVERIFY2(f && f->code() == FailureCode::CorruptCheckpoint, f ? f->what() : "accepted");
        QCOMPARE(QString::fromStdString(f->where()), QString("checkpoint.retention.forward_bytes"));
    }
    // Every damaged byte is caught (content hash) and nothing crashes; truncations too.
    void randomDamageAlwaysFails() {
        const auto good = encode_checkpoint(sample_plan());
        std::mt19937_64 rng(99);
        for (int iter = 0; iter < 1500; ++iter) {
            std::vector<uint8_t> bad = good;
            if (iter % 4 == 3) {
                bad.resize(rng() % good.size());
            } else {
                const int flips = 1 + static_cast<int>(rng() % 3);
                for (int k = 0; k < flips; ++k)
                    bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
            }
            if (bad == good) continue;
            auto f = test::capture_failure([&] { (void)decode(bad); });
            QVERIFY2(f.has_value(),
                     ("damaged checkpoint accepted at iteration " + std::to_string(iter)).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
