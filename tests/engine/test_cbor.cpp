#include "core/failure.h"
#include "encoding/cbor.h"
#include "encoding/utf8.h"
#include "test_support.h"

#include <QObject>

#include <functional>
#include <optional>
#include <random>

using namespace tmmu;
using cbor::Value;
using tmmu::test::hex;

namespace {

std::vector<uint8_t> unhex(const std::string& s) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i + 1 < s.size(); i += 2)
        out.push_back(static_cast<uint8_t>(std::stoi(s.substr(i, 2), nullptr, 16)));
    return out;
}

std::string enc(const Value& v) {
    return hex(cbor::encode_canonical(v));
}

Value dec(const std::string& hexbytes) {
    const auto bytes = unhex(hexbytes);
    return cbor::decode(bytes.data(), bytes.size());
}

Value ints(std::initializer_list<int64_t> xs) {
    Value a = Value::array();
    for (int64_t x : xs)
        a.items.push_back(Value::integer(x));
    return a;
}

// A value using every type, nested a few levels: the seed for the mutation fuzzer.
Value sample_value() {
    Value m = Value::map();
    m.set("name", Value::str("h3.attn.q \xc3\xbc"));
    m.set("sizes", ints({0, 23, 24, 255, 256, 65535, 65536, -1, -24, -25, -1000000}));
    m.set("big", Value::uint64(UINT64_MAX));
    m.set("hash", Value::byte_string(std::vector<uint8_t>(32, 0xab)));
    m.set("flags", Value::array({Value::boolean(true), Value::boolean(false), Value::null()}));
    Value inner = Value::map();
    inner.set("a", ints({1, 2}));
    inner.set("bb", Value::map());
    m.set("inner", Value::array({inner, Value::str(""), Value::byte_string({})}));
    return m;
}

// Random bytes (every third input) or the seed with one to three random edits.
std::vector<uint8_t> fuzz_input(std::mt19937_64& rng, const std::vector<uint8_t>& seed, int iter) {
    std::vector<uint8_t> input;
    if (iter % 3 == 0) {
        input.resize(rng() % 48);
        for (auto& b : input)
            b = static_cast<uint8_t>(rng());
        return input;
    }
    input = seed;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !input.empty(); ++e) {
        const size_t at = rng() % input.size();
        switch (rng() % 4) {
        case 0:
            input[at] ^= static_cast<uint8_t>(1 + rng() % 255);
            break;
        case 1:
            input.resize(at);
            break;
        case 2:
            input.insert(input.begin() + static_cast<long>(at), uint8_t(rng()));
            break;
        default:
            input.erase(input.begin() + static_cast<long>(at));
            break;
        }
    }
    return input;
}

// The failure decode() or Reader::skip() raise for an input, or none.
std::optional<std::string> failure_where(const std::function<void()>& f) {
    auto failure = test::capture_failure(f);
    if (!failure) return std::nullopt;
    return failure->where() + ": " + failure->message();
}

} // namespace

class TestCbor : public QObject {
    Q_OBJECT
  private slots:
    // RFC 8949 Appendix A, every example this subset (no floats, tags, simple values) covers.
    void encodesRfcAppendixAIntegers() {
        QCOMPARE(enc(Value::uint64(0)), std::string("00"));
        QCOMPARE(enc(Value::uint64(1)), std::string("01"));
        QCOMPARE(enc(Value::uint64(10)), std::string("0a"));
        QCOMPARE(enc(Value::uint64(23)), std::string("17"));
        QCOMPARE(enc(Value::uint64(24)), std::string("1818"));
        QCOMPARE(enc(Value::uint64(25)), std::string("1819"));
        QCOMPARE(enc(Value::uint64(100)), std::string("1864"));
        QCOMPARE(enc(Value::uint64(1000)), std::string("1903e8"));
        QCOMPARE(enc(Value::uint64(1000000)), std::string("1a000f4240"));
        QCOMPARE(enc(Value::uint64(1000000000000ull)), std::string("1b000000e8d4a51000"));
        QCOMPARE(enc(Value::uint64(UINT64_MAX)), std::string("1bffffffffffffffff"));
        QCOMPARE(enc(Value::integer(-1)), std::string("20"));
        QCOMPARE(enc(Value::integer(-10)), std::string("29"));
        QCOMPARE(enc(Value::integer(-100)), std::string("3863"));
        QCOMPARE(enc(Value::integer(-1000)), std::string("3903e7"));
        QCOMPARE(enc(Value::integer(INT64_MIN)), std::string("3b7fffffffffffffff"));
        Value most_negative; // -18446744073709551616
        most_negative.type = cbor::Type::Negative;
        most_negative.number = UINT64_MAX;
        QCOMPARE(enc(most_negative), std::string("3bffffffffffffffff"));
    }
    void encodesRfcAppendixAStringsAndSimple() {
        QCOMPARE(enc(Value::boolean(false)), std::string("f4"));
        QCOMPARE(enc(Value::boolean(true)), std::string("f5"));
        QCOMPARE(enc(Value::null()), std::string("f6"));
        QCOMPARE(enc(Value::byte_string({})), std::string("40"));
        QCOMPARE(enc(Value::byte_string({1, 2, 3, 4})), std::string("4401020304"));
        QCOMPARE(enc(Value::str("")), std::string("60"));
        QCOMPARE(enc(Value::str("a")), std::string("6161"));
        QCOMPARE(enc(Value::str("IETF")), std::string("6449455446"));
        QCOMPARE(enc(Value::str("\"\\")), std::string("62225c"));
        QCOMPARE(enc(Value::str("\xc3\xbc")), std::string("62c3bc"));
        QCOMPARE(enc(Value::str("\xe6\xb0\xb4")), std::string("63e6b0b4"));
        QCOMPARE(enc(Value::str("\xf0\x90\x85\x91")), std::string("64f0908591"));
    }
    void encodesRfcAppendixAContainers() {
        QCOMPARE(enc(Value::array()), std::string("80"));
        QCOMPARE(enc(ints({1, 2, 3})), std::string("83010203"));
        QCOMPARE(enc(Value::array({Value::uint64(1), ints({2, 3}), ints({4, 5})})),
                 std::string("8301820203820405"));
        Value v25 = Value::array();
        for (int i = 1; i <= 25; ++i)
            v25.items.push_back(Value::integer(i));
        QCOMPARE(enc(v25),
                 std::string("98190102030405060708090a0b0c0d0e0f101112131415161718181819"));
        QCOMPARE(enc(Value::map()), std::string("a0"));
        QCOMPARE(enc(Value::map(
                     {{Value::uint64(1), Value::uint64(2)}, {Value::uint64(3), Value::uint64(4)}})),
                 std::string("a201020304"));
        Value ab = Value::map();
        ab.set("a", Value::uint64(1));
        ab.set("b", ints({2, 3}));
        QCOMPARE(enc(ab), std::string("a26161016162820203"));
        Value bc = Value::map();
        bc.set("b", Value::str("c"));
        QCOMPARE(enc(Value::array({Value::str("a"), bc})), std::string("826161a161626163"));
        Value five = Value::map();
        for (const char* k : {"e", "d", "c", "b", "a"}) // inserted backwards on purpose
            five.set(k, Value::str(std::string(1, static_cast<char>(k[0] - 'a' + 'A'))));
        QCOMPARE(enc(five), std::string("a56161614161626142616361436164614461656145"));
    }
    // RFC 8949 section 4.2.1's own ordering example: 10, 100, -1, "z", "aa", [100], [-1], false.
    void sortsMapKeysByEncodedBytes() {
        Value m = Value::map();
        const std::vector<Value> keys = {
            Value::boolean(false), ints({-1}),         ints({100}),        Value::str("aa"),
            Value::str("z"),       Value::integer(-1), Value::uint64(100), Value::uint64(10)};
        for (size_t i = 0; i < keys.size(); ++i)
            m.entries.emplace_back(keys[i], Value::uint64(i));
        QCOMPARE(enc(m), std::string("a8"
                                     "0a07"
                                     "186406"
                                     "2005"
                                     "617a04"
                                     "62616103"
                                     "81186402"
                                     "812001"
                                     "f400"));
        const Value back = dec(enc(m));
        QCOMPARE(back.entries.front().first, Value::uint64(10));
        QCOMPARE(back.entries.back().first, Value::boolean(false));
    }
    void encoderRejectsDuplicatesBadTextAndDepth() {
        Value m = Value::map();
        m.set("k", Value::uint64(1));
        m.set("k", Value::uint64(2));
        TMMU_EXPECT_FAILURE(cbor::encode_canonical(m), FailureCode::InvalidArgument);
        TMMU_EXPECT_FAILURE(cbor::encode_canonical(Value::str("\xc0\x80")),
                            FailureCode::InvalidArgument);
        // What only names a thing (a path) is written with its other bytes as U+FFFD.
        QCOMPARE(valid_utf8("caf\xc3\xa9"), std::string("caf\xc3\xa9"));
        QCOMPARE(valid_utf8("caf\xe9.json"), std::string("caf\xef\xbf\xbd.json"));
        QCOMPARE(valid_utf8("\xc0\x80"
                            "a\xe2\x82"),
                 std::string("\xef\xbf\xbd\xef\xbf\xbd"
                             "a\xef\xbf\xbd\xef\xbf\xbd"));
        QVERIFY(is_valid_utf8(valid_utf8("\xff\xfe\xf0\x9f\x98\x80\xf0\x9f")));
        Value deep = Value::uint64(0);
        for (int i = 0; i < cbor::kMaxDepth; ++i)
            deep = Value::array({deep});
        QCOMPARE(cbor::encode_canonical(deep).size(), size_t(cbor::kMaxDepth + 1));
        TMMU_EXPECT_FAILURE(cbor::encode_canonical(Value::array({deep})),
                            FailureCode::InvalidArgument);
    }
    void decodeInvertsEncode() {
        const Value v = sample_value();
        const auto bytes = cbor::encode_canonical(v);
        const Value back = cbor::decode(bytes.data(), bytes.size());
        QCOMPARE(cbor::encode_canonical(back), bytes);
        QCOMPARE(back.find("big")->number, UINT64_MAX);
        QCOMPARE(back.find("name")->text, std::string("h3.attn.q \xc3\xbc"));
        QCOMPARE(back.find("sizes")->items.at(10), Value::integer(-1000000));
        QVERIFY(back.find("absent") == nullptr);
    }
    void decoderRejectsMalformedInput_data() {
        QTest::addColumn<QString>("bytes");
        QTest::addColumn<int>("offset");
        QTest::newRow("empty") << "" << 0;
        QTest::newRow("truncated head") << "1903" << 0;
        QTest::newRow("truncated string") << "6261" << 0;
        QTest::newRow("truncated array") << "826161" << 3;
        QTest::newRow("more items than bytes") << "8201" << 0;
        QTest::newRow("truncated map value") << "a16161" << 3;
        QTest::newRow("indefinite array") << "9f01ff" << 0;
        QTest::newRow("indefinite bytes") << "5f4101ff" << 0;
        QTest::newRow("indefinite text") << "7f6161ff" << 0;
        QTest::newRow("indefinite map") << "bf616101ff" << 0;
        QTest::newRow("non-shortest 1 byte") << "1817" << 0;
        QTest::newRow("non-shortest 2 bytes") << "1900ff" << 0;
        QTest::newRow("non-shortest 4 bytes") << "1a0000ffff" << 0;
        QTest::newRow("non-shortest 8 bytes") << "1b00000000ffffffff" << 0;
        QTest::newRow("non-shortest negative") << "3800" << 0;
        QTest::newRow("non-shortest length") << "580000" << 0;
        QTest::newRow("non-shortest nested") << "82011800" << 2;
        QTest::newRow("unsorted keys") << "a2616201616102" << 4;
        QTest::newRow("length-first order") << "a262616101616202" << 5;
        QTest::newRow("duplicate keys") << "a2616101616102" << 4;
        QTest::newRow("trailing byte") << "0100" << 1;
        QTest::newRow("string beyond input") << "5bffffffffffffffff00" << 0;
        QTest::newRow("array beyond input") << "9bffffffffffffffff" << 0;
        QTest::newRow("map beyond input") << "bb7fffffffffffffff0101" << 0;
        QTest::newRow("half float") << "f93c00" << 0;
        QTest::newRow("double") << "fb3ff199999999999a" << 0;
        QTest::newRow("undefined") << "f7" << 0;
        QTest::newRow("simple 16") << "f0" << 0;
        QTest::newRow("simple one byte") << "f820" << 0;
        QTest::newRow("break") << "ff" << 0;
        QTest::newRow("tag") << "c074323031332d30332d32315432303a30343a30305a" << 0;
        QTest::newRow("reserved ai") << "1c" << 0;
        QTest::newRow("overlong utf8") << "62c080" << 0;
        QTest::newRow("surrogate utf8") << "63eda080" << 0;
        QTest::newRow("bad utf8 byte") << "61ff" << 0;
        QTest::newRow("cut utf8") << "61c3" << 0;
    }
    void decoderRejectsMalformedInput() {
        QFETCH(QString, bytes);
        QFETCH(int, offset);
        auto f = test::capture_failure([&] { (void)dec(bytes.toStdString()); });
        QVERIFY2(f.has_value(), "malformed input was accepted");
        QCOMPARE(f->code(), FailureCode::CorruptCheckpoint);
        QCOMPARE(f->where(), "cbor byte " + std::to_string(offset));
    }
    void decoderLimitsNesting() {
        std::string ok(2 * cbor::kMaxDepth, '8');
        for (size_t i = 1; i < ok.size(); i += 2)
            ok[i] = '1'; // 0x81: an array of one item
        QCOMPARE(enc(dec(ok + "00")), ok + "00");
        TMMU_EXPECT_FAILURE(dec("81" + ok + "00"), FailureCode::CorruptCheckpoint);
    }
    // Random and mutated inputs: every input either fails with CORRUPT_CHECKPOINT or is a
    // deterministic encoding (it re-encodes to exactly the same bytes). Never a crash.
    void decoderSurvivesFuzzing() {
        std::mt19937_64 rng(20260217);
        const auto seed = cbor::encode_canonical(sample_value());
        int accepted = 0, rejected = 0;
        for (int iter = 0; iter < 6000; ++iter) {
            const std::vector<uint8_t> input = fuzz_input(rng, seed, iter);
            try {
                const Value v = cbor::decode(input.data(), input.size());
                QCOMPARE(cbor::encode_canonical(v), input);
                ++accepted;
            } catch (const Failure& f) {
                QCOMPARE(f.code(), FailureCode::CorruptCheckpoint);
                ++rejected;
            }
        }
        QVERIFY(rejected > 3000);
        QVERIFY(accepted > 0);
    }
    // The pull parser (checkpoints of 100k tensors use it) accepts exactly what decode()
    // accepts and refuses the rest at the same byte with the same message.
    void readerAgreesWithDecoder() {
        std::mt19937_64 rng(7);
        const auto seed = cbor::encode_canonical(sample_value());
        int rejected = 0;
        for (int iter = 0; iter < 6000; ++iter) {
            const std::vector<uint8_t> input = fuzz_input(rng, seed, iter);
            const auto by_tree =
                failure_where([&] { (void)cbor::decode(input.data(), input.size()); });
            const auto by_reader = failure_where([&] {
                cbor::Reader r(input.data(), input.size());
                r.skip(0);
                r.finish();
            });
            QCOMPARE(by_reader, by_tree);
            rejected += by_tree.has_value();
        }
        QVERIFY(rejected > 3000);
    }
    void readerReadsTypedFields() {
        const auto bytes = cbor::encode_canonical(sample_value());
        cbor::Reader r(bytes.data(), bytes.size());
        QCOMPARE(r.peek(), cbor::Type::Map);
        const size_t entries = r.map(1);
        QCOMPARE(entries, size_t(6));
        QCOMPARE(r.text(), std::string_view("big")); // shortest keys first
        QCOMPARE(r.uint64(), UINT64_MAX);
        QCOMPARE(r.text(), std::string_view("hash"));
        QCOMPARE(r.bytes().second, size_t(32));
        QCOMPARE(r.text(), std::string_view("name"));
        // A typed read of the wrong type fails at the item's byte, naming both types.
        const size_t at = r.offset();
        auto f = test::capture_failure([&] { (void)r.uint64(); });
        QVERIFY(f.has_value());
        QCOMPARE(f->where(), "cbor byte " + std::to_string(at));
        QCOMPARE(f->message(), std::string("expected an unsigned integer, found a text string"));
        QCOMPARE(r.text(), std::string_view("h3.attn.q \xc3\xbc"));
        for (size_t i = 3; i < entries; ++i) {
            r.skip(1);
            r.skip(1);
        }
        r.finish();
    }
};

QTEST_GUILESS_MAIN(TestCbor)
#include "test_cbor.moc"
