#include "io/dsa_csv.h"
#include "test_support.h"

#include <QObject>
#include <QTemporaryDir>

#include <fstream>

using namespace tmmu;

namespace {

std::optional<Failure> parse_failure(std::string_view text) {
    return test::capture_failure([&] { parse_dsa_csv(text, "p.csv"); });
}

} // namespace

class TestDsaCsv : public QObject {
    Q_OBJECT
  private slots:
    void parsesMinimallocFormat() {
        DsaProblem d = parse_dsa_csv("id,lower,upper,size\nb1,0,3,4\nb2,3,9,40\n", "x");
        QCOMPARE(d.problem.buffers.size(), size_t(2));
        QCOMPARE(d.ids, (std::vector<std::string>{"b1", "b2"}));
        const Buffer& b = d.problem.buffers[1];
        QCOMPARE(b.begin, 3u);
        QCOMPARE(b.end, 9u);
        QCOMPARE(b.size, 40u);
        QCOMPARE(b.alignment, 1u);
        QVERIFY(!b.pinned);
        QVERIFY(!d.given_offsets[0] && !d.given_offsets[1]);
        QCOMPARE(d.problem.capacity, UINT64_MAX);
    }

    void takesColumnOrderFromHeader() {
        DsaProblem d = parse_dsa_csv("Size, Upper ,id,lower\n7,5,a,2\r\n\r\n", "x");
        QCOMPARE(d.problem.buffers.size(), size_t(1));
        QCOMPARE(d.problem.buffers[0].size, 7u);
        QCOMPARE(d.problem.buffers[0].begin, 2u);
        QCOMPARE(d.problem.buffers[0].end, 5u);
        QCOMPARE(d.ids[0], std::string("a"));
    }

    void readsOptionalColumns() {
        DsaProblem d =
            parse_dsa_csv("\xEF\xBB\xBFid,lower,upper,size,alignment,offset,pinned,gaps\n"
                          "a,0,4,10,64,128,,1-2 3-4\n"
                          "b,1,2,10,,,256,\n",
                          "x");
        QCOMPARE(d.problem.buffers[0].alignment, 64u);
        QCOMPARE(d.given_offsets[0], std::optional<uint64_t>(128));
        QVERIFY(!d.problem.buffers[0].pinned); // a given offset is a baseline, not a pin
        QCOMPARE(d.problem.buffers[1].alignment, 1u);
        QVERIFY(!d.given_offsets[1]);
        QCOMPARE(d.problem.buffers[1].pinned, std::optional<uint64_t>(256));
    }

    void readsOlderFormatWithInclusiveEnd() {
        DsaProblem d = parse_dsa_csv("buffer,start,end,size\nx,3,3,8\ny,0,9,1\n", "x");
        QCOMPARE(d.problem.buffers[0].begin, 3u);
        QCOMPARE(d.problem.buffers[0].end, 4u);
        QCOMPARE(d.problem.buffers[1].end, 10u);
        auto f = parse_failure("buffer,start,end,size\nx,3,2,8\n");
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("p.csv:2"));
    }

    void acceptsQuotedFields() {
        DsaProblem d = parse_dsa_csv("id,lower,upper,size\n\"a,\"\"b\"\"\", 0 ,1,\"5\"\n", "x");
        QCOMPARE(d.ids[0], std::string("a,\"b\""));
        QCOMPARE(d.problem.buffers[0].size, 5u);
        TMMU_EXPECT_FAILURE(parse_dsa_csv("id,lower,upper,size\n\"a,0,1,5\n", "x"),
                            FailureCode::InvalidIrShapes);
    }

    void reportsBadNumbersWithLineAndColumn() {
        auto f = parse_failure("id,lower,upper,size\na,0,1,4\nb,0,1,x\n");
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::InvalidIrShapes);
        QCOMPARE(std::string(f->what()),
                 std::string("INVALID_IR_SHAPES at p.csv:3: column 'size': expected an unsigned "
                             "integer, got 'x'"));
        for (const char* bad : {"-1", "1.5", "", "99999999999999999999", "4 4"}) {
            auto g = parse_failure(std::string("id,lower,upper,size\na,0,1,") + bad + "\n");
            QVERIFY2(g && g->code() == FailureCode::InvalidIrShapes, bad);
        }
    }

    void rejectsEmptyLifetimes() {
        auto f = parse_failure("id,lower,upper,size\na,0,1,4\nb,5,5,4\n");
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("p.csv:3"));
        QVERIFY2(f->message().find("upper") != std::string::npos, f->what());
    }

    void rejectsDuplicateIds() {
        auto f = parse_failure("id,lower,upper,size\na,0,1,4\n\nb,0,1,4\na,1,2,4\n");
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("p.csv:5"));
        QVERIFY2(f->message().find("line 2") != std::string::npos, f->what());
    }

    // Ids are UTF-8 text in every plan and checkpoint: a Latin-1 id is refused at its line (it
    // was refused by the checkpoint encoder as 'INVALID_ARGUMENT at cbor text string', exit 2).
    void rejectsIdsThatAreNotUtf8() {
        const auto f = parse_failure("id,lower,upper,size\nok,0,1,4\ncaf\xe9,0,3,4\n");
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), std::string("p.csv:3"));
        QVERIFY2(f->message().find("not UTF-8") != std::string::npos, f->what());
    }
    void rejectsMalformedHeadersAndRows() {
        const char* cases[] = {
            "",                                           // no header
            "id,lower,size\na,0,4\n",                     // no upper
            "id,lower,upper\na,0,4\n",                    // no size
            "id,lower,upper,size,colour\na,0,1,1,r\n",    // unknown column
            "id,lower,upper,size,id\na,0,1,1,b\n",        // repeated column
            "id,lower,upper,end,size\na,0,1,1,1\n",       // both upper and end
            "id,lower,upper,size\na,0,1\n",               // too few fields
            "id,lower,upper,size\n,0,1,1\n",              // empty id
            "id,lower,upper,size,alignment\na,0,1,1,3\n", // alignment not a power of two
        };
        for (const char* text : cases) {
            auto f = parse_failure(text);
            QVERIFY2(f.has_value(), text);
            QVERIFY2(f->code() == FailureCode::InvalidIrShapes, f->what());
            QVERIFY2(f->where().rfind("p.csv:", 0) == 0, f->what());
        }
    }

    void headerOnlyIsAnEmptyProblem() {
        DsaProblem d = parse_dsa_csv("id,lower,upper,size\n", "x");
        QVERIFY(d.problem.buffers.empty());
    }

    void writesAndReadsBack() {
        DsaProblem d = parse_dsa_csv("id,lower,upper,size,alignment,pinned,offset\n"
                                     "a,0,4,10,64,,128\n"
                                     "\"b c\",1,2,10,1,256,\n",
                                     "x");
        const std::string text = write_dsa_csv(d, nullptr);
        QCOMPARE(text, std::string("id,lower,upper,size,alignment,pinned,offset\n"
                                   "a,0,4,10,64,,128\n"
                                   "b c,1,2,10,1,256,\n"));
        DsaProblem back = parse_dsa_csv(text, "back");
        QCOMPARE(back.ids, d.ids);
        QCOMPARE(back.given_offsets, d.given_offsets);
        QCOMPARE(back.problem.buffers.size(), d.problem.buffers.size());
        for (size_t i = 0; i < d.problem.buffers.size(); ++i) {
            const Buffer& x = d.problem.buffers[i];
            const Buffer& y = back.problem.buffers[i];
            QVERIFY(x.begin == y.begin && x.end == y.end && x.size == y.size &&
                    x.alignment == y.alignment && x.pinned == y.pinned);
        }
        std::vector<uint64_t> offsets{0, 64};
        QCOMPARE(write_dsa_csv(d, &offsets), std::string("id,lower,upper,size,alignment,pinned,"
                                                         "offset\na,0,4,10,64,,0\n"
                                                         "b c,1,2,10,1,256,64\n"));
    }

    void writesPlainProblemsInMinimallocFormat() {
        DsaProblem d = parse_dsa_csv("buffer,start,end,size\nx,0,0,8\n\"q,\",2,5,1\n", "x");
        QCOMPARE(write_dsa_csv(d, nullptr),
                 std::string("id,lower,upper,size\nx,0,1,8\n\"q,\",2,6,1\n"));
    }

    void writerRejectsMismatchedInput() {
        DsaProblem d = parse_dsa_csv("id,lower,upper,size\na,0,1,1\n", "x");
        std::vector<uint64_t> two{0, 0};
        TMMU_EXPECT_FAILURE(write_dsa_csv(d, &two), FailureCode::InvalidArgument);
        d.ids[0] = "line\nbreak";
        TMMU_EXPECT_FAILURE(write_dsa_csv(d, nullptr), FailureCode::InvalidArgument);
        d.ids.clear();
        TMMU_EXPECT_FAILURE(write_dsa_csv(d, nullptr), FailureCode::InvalidArgument);
    }

    void loadsFilesAndReportsIoErrors() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("p.csv").toStdString();
        std::ofstream(path) << "id,lower,upper,size\na,0,2,3\nb,1,x,3\n";
        auto f = test::capture_failure([&] { load_dsa_csv(path); });
        QVERIFY(f && f->code() == FailureCode::InvalidIrShapes);
        QCOMPARE(f->where(), path + ":3");
        TMMU_EXPECT_FAILURE(load_dsa_csv(dir.filePath("missing.csv").toStdString()),
                            FailureCode::IoError);
    }

    void loadsPublishedInstances() {
        const std::string dir = TMMU_DSA_DIR;
        TMMU_REQUIRE_DATA(test::read_file(dir + "/real/iree_mobilenet.csv").has_value(),
                          QString::fromStdString(dir + "/real/iree_mobilenet.csv"));
        DsaProblem d = load_dsa_csv(dir + "/real/iree_mobilenet.csv");
        QCOMPARE(d.problem.buffers.size(), size_t(56));
        QCOMPARE(d.problem.buffers[0].size, 602112u);
        QCOMPARE(d.given_offsets[1], std::optional<uint64_t>(602112));
        DsaProblem a = load_dsa_csv(dir + "/minimalloc/A.1048576.csv");
        QCOMPARE(a.problem.buffers.size(), size_t(154));
        QVERIFY(!a.given_offsets[0]);
    }
};

QTEST_GUILESS_MAIN(TestDsaCsv)
#include "test_dsa_csv.moc"
