// Session exports (tmmu export, File > Export): each format checked for structure: the HTML
// parses as XML, the PDF renders, the CSV and JSON match the plan, the Chrome trace carries
// the Trace Event Format's fields. Plus determinism, altered sessions and the CLI.
#include "report/export.h"
#include "report/session_json_read.h"
#include "session_store.h"
#include "test_support.h"

#include "encoding/sha256.h"
#include "plan/random_problem.h"
#include "source/model_source.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <QXmlStreamReader>
#include <set>

#include <map>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

using namespace tmmu;
using namespace tmmu::sessions;

namespace {

const char* kModel = TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json";
const char* kViews = TMMU_SOURCE_DIR "/resources/models/examples/views_and_inplace.json";
const std::string kOddName = "odd, \"quoted\"\nname";
const std::string kTitle = "<b>Demo & \"friends\"</b> \xC3\x9Cn\xC3\xAF \xE2\x9C\x93"; // Üñï ✓

NewSession graph_session(const char* model = kModel, Mode mode = Mode::Inference,
                         const ShardSpec& shard = {}) {
    ModelRequest req;
    req.mode = mode;
    LoadedModel m = load_model(model, req);
    m.graph->tensors[0].name = kOddName; // display names do not enter the hashes
    PlanOptions o;
    o.shard = shard;
    Plan p = plan_model(m, req.mode, o, Progress{});
    return {input_from_model(m, req, o),
            p,
            kTitle,
            "notes with <markup> & \\ (parens)",
            {"demo", "report"}};
}

NewSession problem_session(size_t n, const std::string& strategy) {
    DsaProblem d{realistic_random_problem(3, n), {}, {}};
    for (size_t i = 0; i < d.problem.buffers.size(); ++i)
        d.ids.push_back("t" + std::to_string(i));
    d.given_offsets.assign(d.problem.buffers.size(), std::nullopt);
    LoadedModel m;
    m.kind = ModelKind::DsaCsv;
    m.path = "random.csv";
    m.problem = d;
    PlanOptions o;
    o.strategy = strategy;
    Plan p = plan_problem(d.problem, d.ids, o, Progress{}, m.path);
    return {input_from_model(m, ModelRequest{}, o), p, "random", "", {}};
}

// RFC 4180 records (fields may be quoted, with "" for " and embedded CR/LF).
std::vector<std::vector<std::string>> parse_csv(const std::string& s) {
    std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
    bool quoted = false;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (quoted) {
            if (c == '"' && i + 1 < s.size() && s[i + 1] == '"')
                rows.back().back() += '"', ++i;
            else if (c == '"')
                quoted = false;
            else
                rows.back().back() += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().emplace_back();
        } else if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') {
            ++i;
            rows.emplace_back(1);
        } else {
            rows.back().back() += c;
        }
    }
    if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
    return rows;
}

struct Run {
    int code = -1;
    QByteArray out, err;
};

Run run(const QString& program, const QStringList& args, const QString& cwd = {}) {
    QProcess p;
    if (!cwd.isEmpty()) p.setWorkingDirectory(cwd);
    p.start(program, args);
    if (!p.waitForFinished(60000)) return {};
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

bool contains(const std::string& hay, const std::string& needle) {
    return hay.find(needle) != std::string::npos;
}

} // namespace

class TestExport : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string db_;
    int64_t graph_id_ = 0, problem_id_ = 0;
    Session graph_, problem_, views_, sharded_;

    std::string path(const char* name) { return (dir_.path() + "/" + name).toStdString(); }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        db_ = path("export.db");
        SessionStore store(db_);
        graph_id_ = store.record(graph_session());
        problem_id_ = store.record(problem_session(300, "auto"));
        graph_ = store.load(graph_id_);
        problem_ = store.load(problem_id_);
        views_ = store.load(store.record(graph_session(kViews, Mode::Training)));
        sharded_ = store.load(store.record(
            graph_session(kViews, Mode::Training, {3, 1, {Role::Parameter, Role::Activation}})));
        QVERIFY(!graph_.altered && !problem_.altered);
    }

    void formatNames() {
        for (const char* name : {"html", "pdf", "csv", "json", "chrome-trace"}) {
            auto f = parse_export_format(name);
            QVERIFY2(f.has_value(), name);
            QCOMPARE(export_format_name(*f), std::string_view(name));
            QVERIFY(export_extension(*f).starts_with("."));
        }
        QVERIFY(!parse_export_format("HTML").has_value());
        QVERIFY(!parse_export_format("").has_value());
        // Default file names differ by format, so two exports of a session never collide.
        QCOMPARE(export_extension(ExportFormat::ChromeTrace), std::string_view(".trace.json"));
        std::set<std::string_view> extensions;
        for (const char* name : {"html", "pdf", "csv", "json", "chrome-trace"})
            extensions.insert(export_extension(*parse_export_format(name)));
        QCOMPARE(extensions.size(), size_t(5));
    }

    void htmlIsWellFormedAndComplete() {
        for (const Session* s : {&graph_, &problem_}) {
            std::string html = export_session(*s, ExportFormat::Html);
            QVERIFY(html.starts_with("<!DOCTYPE html>"));
            QXmlStreamReader xml(QByteArray::fromStdString(html));
            std::map<QString, int> elements;
            int rows = 0;
            while (!xml.atEnd())
                if (xml.readNext() == QXmlStreamReader::StartElement) {
                    ++elements[xml.name().toString()];
                    rows += xml.name() == QLatin1String("tr");
                }
            QVERIFY2(!xml.hasError(), qPrintable(xml.errorString() + " at line " +
                                                 QString::number(xml.lineNumber())));
            // One memory chart and one layout chart per arena holding buffers.
            size_t charted = 0;
            for (const ArenaPlan& a : s->plan->arenas)
                charted += !a.problem.buffers.empty();
            QCOMPARE(elements["svg"], int(2 * charted));
            QVERIFY(elements["rect"] > 0 && elements["polyline"] > 0);
            QVERIFY(contains(html, s->summary.plan_hash));
            QVERIFY(contains(html, s->ir_hash));
            QVERIFY(!contains(html, "<script") && !contains(html, "src=") &&
                    !contains(html, "href=") && !contains(html, "url("));
            QVERIFY(!contains(html, "ALTERED"));
            // At least the metrics rows (header + arenas) and the tensor rows (header + all).
            QVERIFY(rows >= int(s->plan->arenas.size() + s->plan->tensors.size() + 2));
        }
        std::string html = export_session(graph_, ExportFormat::Html);
        QVERIFY(contains(html, "&lt;b&gt;Demo &amp; &quot;friends&quot;&lt;/b&gt;"));
        QVERIFY(contains(html, "\xE2\x9C\x93")); // UTF-8 kept
        QVERIFY(contains(html, "routes"));
        QVERIFY(contains(html, "activation retention"));
        QVERIFY(contains(export_session(views_, ExportFormat::Html),
                         "is held into the backward pass at step "));
        QVERIFY(!contains(export_session(problem_, ExportFormat::Html), "activation retention"));
    }

    void csvListsEveryTensorAndQuotes() {
        std::string csv = export_session(graph_, ExportFormat::Csv);
        auto rows = parse_csv(csv);
        const Plan& p = *graph_.plan;
        QCOMPARE(rows.size(), p.tensors.size() + 1);
        QCOMPARE(rows[0],
                 (std::vector<std::string>{"id", "name", "role", "dtype", "arena", "buffer", "slot",
                                           "offset", "size", "alignment", "begin", "end"}));
        bool odd = false;
        for (size_t i = 0; i < p.tensors.size(); ++i) {
            const auto& r = rows[i + 1];
            const PlannedTensor& t = p.tensors[i];
            QCOMPARE(r.size(), size_t(12));
            QCOMPARE(r[0], t.id);
            QCOMPARE(r[1], t.name);
            QCOMPARE(r[2], std::string(role_name(t.role)));
            QVERIFY(!r[3].empty()); // graphs know their dtypes
            QCOMPARE(r[4], p.arenas[t.arena].config.name);
            QCOMPARE(r[7], std::to_string(t.offset));
            QCOMPARE(r[8], std::to_string(t.size));
            QCOMPARE(r[11], std::to_string(t.life.end));
            odd |= r[1] == kOddName;
        }
        QVERIFY2(odd, "the name with a comma, quotes and a newline did not round-trip");
        auto prow = parse_csv(export_session(problem_, ExportFormat::Csv));
        QCOMPARE(prow.size(), problem_.plan->tensors.size() + 1);
        QVERIFY(prow[1][3].empty()); // offset problems have no dtype
    }

    void jsonMatchesThePlan() {
        auto j = nlohmann::json::parse(export_session(graph_, ExportFormat::Json));
        const Plan& p = *graph_.plan;
        QCOMPARE(j["format"].get<std::string>(), std::string("tmmu-session"));
        QCOMPARE(j["version"].get<int>(), 1);
        QCOMPARE(j["plan_hash"].get<std::string>(), to_hex(p.plan_hash));
        QCOMPARE(j["session"]["id"].get<int64_t>(), graph_id_);
        QCOMPARE(j["session"]["title"].get<std::string>(), kTitle);
        QCOMPARE(j["inputs"]["mode"].get<std::string>(), std::string("inference"));
        QCOMPARE(j["metrics"].size(), p.arenas.size());
        for (size_t a = 0; a < p.arenas.size(); ++a) {
            QCOMPARE(j["metrics"][a]["peak_bytes"].get<uint64_t>(), p.arenas[a].metrics.peak_bytes);
            QCOMPARE(j["metrics"][a]["lower_bound"].get<uint64_t>(),
                     p.arenas[a].metrics.lower_bound);
        }
        QCOMPARE(j["tensors"].size(), p.tensors.size());
        for (size_t i = 0; i < p.tensors.size(); ++i) {
            QCOMPARE(j["tensors"][i]["id"].get<std::string>(), p.tensors[i].id);
            QCOMPARE(j["tensors"][i]["offset"].get<uint64_t>(), p.tensors[i].offset);
        }
        QCOMPARE(j["series"]["times"].size(), p.series.times.size());
        const std::string& a0 = p.arenas[1].config.name;
        QCOMPARE(j["series"]["arenas"][a0]["live_bytes"].get<std::vector<uint64_t>>(),
                 p.series.live_bytes[1]);
    }

    // Batch and seq appear only where they shaped the model. Sessions recorded before they
    // were zeroed for other models stored the defaults 8 / 1024 for an IR or CSV too, and
    // reports printed those as if they meant something.
    // An exported JSON reads back into the plan it was made from: every tensor, every arena's
    // buffers where the plan put them (views inside their bases), metrics, series, hashes.
    void jsonReadsBackIntoThePlan() {
        for (const Session* s : {&graph_, &problem_, &views_, &sharded_}) {
            const Plan& original = *s->plan;
            const std::string text = export_session(*s, ExportFormat::Json);
            QVERIFY(report::looks_like_session_json(text.substr(0, 4096)));
            const report::ExportedSession read = report::read_session_json(text, "s.json");
            const Plan& p = read.plan;
            QCOMPARE(read.id, s->summary.id);
            QCOMPARE(read.title, s->summary.title);
            QCOMPARE(p.plan_hash, original.plan_hash);
            QCOMPARE(p.shard, original.shard);
            QCOMPARE(p.mode, original.mode);
            QCOMPARE(p.tensors.size(), original.tensors.size());
            for (size_t i = 0; i < p.tensors.size(); ++i) {
                const PlannedTensor &a = p.tensors[i], &b = original.tensors[i];
                QVERIFY(a.id == b.id && a.name == b.name && a.role == b.role &&
                        a.arena == b.arena && a.buffer == b.buffer && a.slot == b.slot &&
                        a.offset == b.offset && a.size == b.size && a.life.begin == b.life.begin &&
                        a.life.end == b.life.end);
            }
            QCOMPARE(p.arenas.size(), original.arenas.size());
            for (size_t a = 0; a < p.arenas.size(); ++a) {
                const ArenaPlan &x = p.arenas[a], &y = original.arenas[a];
                QCOMPARE(x.config.name, y.config.name);
                QCOMPARE(x.solution.offsets, y.solution.offsets);
                QCOMPARE(x.solution.height, y.metrics.peak_bytes);
                QCOMPARE(x.problem.buffers.size(), y.problem.buffers.size());
                for (size_t b = 0; b < x.problem.buffers.size(); ++b)
                    QVERIFY(x.problem.buffers[b].size <= y.problem.buffers[b].size);
                QCOMPARE(x.metrics.lower_bound, y.metrics.lower_bound);
                QCOMPARE(x.slot_of_buffer, y.slot_of_buffer);
            }
            QCOMPARE(p.series.times, original.series.times);
            QCOMPARE(p.series.live_bytes, original.series.live_bytes);
            QVERIFY(p.retention == original.retention);
        }
        QVERIFY(views_.plan->retention && views_.plan->retention->retained_bytes > 0);
        QVERIFY(!problem_.plan->retention);
        QVERIFY(!report::looks_like_session_json("{\"format\": \"tmmu-lazy-program\"}"));
        // The report names the rank among the inputs.
        QVERIFY(contains(export_session(sharded_, ExportFormat::Html),
                         "rank 1 of 3, sharding parameter and activation"));
    }

    // A damaged export says what is wrong and where; a placement no plan could have is refused
    // by the validator.
    void badJsonExportsAreRefused() {
        const nlohmann::json good =
            nlohmann::json::parse(export_session(problem_, ExportFormat::Json));
        auto read = [](const nlohmann::json& j) {
            return report::read_session_json(j.dump(), "bad.json");
        };
        TMMU_EXPECT_FAILURE(report::read_session_json("{\"format\": ", "bad.json"),
                            FailureCode::IoError);
        nlohmann::json other = good;
        other["format"] = "tmmu-plan";
        TMMU_EXPECT_FAILURE(read(other), FailureCode::IoError);
        nlohmann::json missing = good;
        missing["tensors"][0].erase("offset");
        TMMU_EXPECT_FAILURE(read(missing), FailureCode::IoError);
        // Numbers json would wrap (a negative offset, a buffer index past every tensor) are
        // refused, not turned into huge values.
        for (auto [field, value] : {std::pair{"offset", nlohmann::json(-64)},
                                    std::pair{"buffer", nlohmann::json(uint64_t(5'000'000'000))},
                                    std::pair{"size", nlohmann::json("64")}}) {
            nlohmann::json wrong = good;
            wrong["tensors"][0][field] = value;
            TMMU_EXPECT_FAILURE(read(wrong), FailureCode::IoError);
        }
        // The activation retention of a graph's export: no part larger than its whole.
        const nlohmann::json graph =
            nlohmann::json::parse(export_session(views_, ExportFormat::Json));
        QVERIFY(read(graph).plan.retention);
        nlohmann::json retained = graph;
        retained["activation_retention"]["retained_bytes"] =
            graph["activation_retention"]["forward_bytes"].get<uint64_t>() + 1;
        TMMU_EXPECT_FAILURE(read(retained), FailureCode::IoError);
        nlohmann::json start = graph;
        start["activation_retention"]["backward_start"] = "five";
        TMMU_EXPECT_FAILURE(read(start), FailureCode::IoError);
        nlohmann::json stranger = good;
        stranger["tensors"][0]["arena"] = "nowhere";
        TMMU_EXPECT_FAILURE(read(stranger), FailureCode::IoError);
        // Two tensors alive together moved onto the same bytes.
        nlohmann::json collide = good;
        auto& ts = collide["tensors"];
        bool moved = false;
        for (size_t i = 0; i < ts.size() && !moved; ++i)
            for (size_t k = i + 1; k < ts.size() && !moved; ++k)
                if (ts[i]["begin"].get<uint64_t>() < ts[k]["end"].get<uint64_t>() &&
                    ts[k]["begin"].get<uint64_t>() < ts[i]["end"].get<uint64_t>() &&
                    ts[i]["buffer"] != ts[k]["buffer"]) {
                    ts[k]["offset"] = ts[i]["offset"];
                    moved = true;
                }
        QVERIFY(moved);
        TMMU_EXPECT_FAILURE(read(collide), FailureCode::AddressCollision);
    }

    void batchAndSeqOnlyForConfigs() {
        ModelRequest req{Mode::Inference, 2, 64};
        LoadedModel m = load_model(TMMU_SOURCE_DIR "/resources/models/gpt2-small.json", req);
        Session config;
        config.input = input_from_model(m, req, PlanOptions{});
        QVERIFY(request_shapes_model(config.input));
        Session old_ir = graph_, old_csv = problem_;
        for (Session* s : {&old_ir, &old_csv}) {
            QVERIFY(!request_shapes_model(s->input)); // as recorded now: 0 / 0
            s->input.request.batch = 8;
            s->input.request.seq = 1024;
            QVERIFY(!request_shapes_model(s->input)); // as recorded before
            auto j = nlohmann::json::parse(export_session(*s, ExportFormat::Json));
            QVERIFY(j["inputs"]["batch"].is_null() && j["inputs"]["seq"].is_null());
            QVERIFY(!contains(export_session(*s, ExportFormat::Html), "batch / seq"));
        }
        config.input.request.seq = 128; // not the shape its graph was generated with
        QVERIFY(!request_shapes_model(config.input));
    }

    void chromeTraceHasTheRequiredFields() {
        for (const Session* s : {&graph_, &problem_, &views_}) {
            auto j = nlohmann::json::parse(export_session(*s, ExportFormat::ChromeTrace));
            QVERIFY(j.is_object() && j["traceEvents"].is_array());
            QCOMPARE(j["displayTimeUnit"].get<std::string>(), std::string("ns"));
            size_t x = 0, c = 0, names = 0, aliases = 0;
            // Per (pid, tid): slices sorted by ts must not overlap (viewers need nesting).
            std::map<std::pair<int, int>, std::vector<std::pair<uint64_t, uint64_t>>> tracks;
            std::map<std::string, size_t> seen;
            for (const auto& e : j["traceEvents"]) {
                for (const char* k : {"name", "ph", "ts", "pid", "tid"})
                    QVERIFY2(e.contains(k), (std::string("event without ") + k).c_str());
                std::string ph = e["ph"];
                if (ph == "X") {
                    ++x;
                    QVERIFY(e.contains("dur") && e["dur"].get<uint64_t>() > 0);
                    ++seen[e["args"]["id"].get<std::string>()];
                    tracks[{e["pid"], e["tid"]}].push_back({e["ts"], e["dur"]});
                }
                c += ph == "C";
                names += ph == "M" && e["name"] == "thread_name";
                aliases += ph == "M" && e["name"] == "thread_name" &&
                           e["args"]["name"].get<std::string>().find("alias") != std::string::npos;
            }
            QCOMPARE(x, s->plan->tensors.size());
            QCOMPARE(seen.size(), s->plan->tensors.size()); // each tensor exactly once
            QVERIFY(c > 0 && names > 0);
            // Views and in-place writes share buffers with overlapping lifetimes.
            if (s == &views_) QVERIFY(aliases > 0);
            for (auto& [track, slices] : tracks) {
                std::sort(slices.begin(), slices.end());
                for (size_t i = 1; i < slices.size(); ++i)
                    QVERIFY(slices[i - 1].first + slices[i - 1].second <= slices[i].first);
            }
        }
    }

    void pdfRenders() {
        std::string pdf = export_session(graph_, ExportFormat::Pdf);
        QVERIFY(pdf.starts_with("%PDF-1.4\n"));
        QVERIFY(pdf.ends_with("%%EOF\n"));
        // Every xref entry points at its "N 0 obj".
        size_t xref = std::stoull(pdf.substr(pdf.rfind("startxref\n") + 10));
        QVERIFY(pdf.compare(xref, 4, "xref") == 0);
        size_t count = std::stoull(pdf.substr(xref + 7));
        for (size_t n = 1; n < count; ++n) {
            size_t off =
                std::stoull(pdf.substr(xref + 5 + std::to_string(count).size() + 3 + 20 * n, 10));
            QVERIFY2(pdf.compare(off, std::to_string(n).size() + 6, std::to_string(n) + " 0 obj") ==
                         0,
                     qPrintable(QString("object %1").arg(n)));
        }
        QString pdftoppm = QStandardPaths::findExecutable("pdftoppm");
        QString pdfinfo = QStandardPaths::findExecutable("pdfinfo");
        TMMU_REQUIRE_DATA(!pdftoppm.isEmpty() && !pdfinfo.isEmpty(),
                          "pdftoppm and pdfinfo (poppler-utils) on PATH, to render the PDF");
        std::string file = path("report.pdf");
        write_export(graph_, ExportFormat::Pdf, file);
        Run info = run(pdfinfo, {QString::fromStdString(file)});
        QCOMPARE(info.code, 0);
        QVERIFY2(!info.err.contains("Error"), info.err.constData());
        // The text layer carries the hashes and the escaped notes.
        if (QString pdftotext = QStandardPaths::findExecutable("pdftotext"); !pdftotext.isEmpty()) {
            Run text = run(pdftotext, {QString::fromStdString(file), "-"});
            QCOMPARE(text.code, 0);
            QVERIFY(text.out.contains(QByteArray::fromStdString(graph_.summary.plan_hash)));
            QVERIFY2(text.out.contains("notes with <markup> & \\ (parens)"),
                     text.out.left(2000).constData());
            // Latin-1 survives WinAnsi; the check mark has no WinAnsi glyph and becomes '?'.
            QVERIFY(text.out.contains("\xC3\x9Cn\xC3\xAF ?"));
        }
        QRegularExpression pages("Pages:\\s+(\\d+)");
        auto m = pages.match(QString::fromUtf8(info.out));
        QVERIFY2(m.hasMatch() && m.captured(1).toInt() >= 1, info.out.constData());
        // A greyscale PGM keeps the pixel check free of image libraries.
        QString prefix = dir_.path() + "/page";
        Run r = run(pdftoppm, {"-gray", "-r", "50", "-f", "1", "-l", "1",
                               QString::fromStdString(file), prefix});
        QCOMPARE(r.code, 0);
        QVERIFY2(!r.err.contains("Error"), r.err.constData());
        QDir d(dir_.path());
        QStringList pgm = d.entryList({"page*.pgm"});
        QCOMPARE(pgm.size(), 1);
        auto img = test::read_file(d.filePath(pgm[0]).toStdString());
        QVERIFY(img && img->starts_with("P5"));
        size_t dark = 0, total = 0;
        // Header: "P5\n<w> <h>\n255\n" then one byte per pixel.
        size_t pos = 0;
        for (int fields = 0; fields < 4; ++fields)
            pos = img->find_first_of(" \n", pos) + 1;
        for (size_t i = pos; i < img->size(); ++i, ++total)
            dark += static_cast<unsigned char>((*img)[i]) < 128;
        qInfo("page 1: %zu of %zu pixels dark", dark, total);
        QVERIFY(total > 10000);
        QVERIFY2(dark > total / 200, "page 1 renders blank");
    }

    void exportsAreDeterministic() {
        for (ExportFormat f : {ExportFormat::Html, ExportFormat::Pdf, ExportFormat::Csv,
                               ExportFormat::Json, ExportFormat::ChromeTrace}) {
            std::string a = export_session(graph_, f);
            std::string b = export_session(SessionStore(db_).load(graph_id_), f);
            QVERIFY2(a == b, export_format_name(f).data());
        }
    }

    void alteredSessionsWarnOrFail() {
        std::string db = path("altered.db");
        SessionStore store(db);
        int64_t a = store.record(graph_session());
        store.record(problem_session(20, "auto"));
        auto sql = [&](const char* text) {
            QCOMPARE(sqlite3_exec(store.handle(), text, nullptr, nullptr, nullptr), SQLITE_OK);
        };
        // A valid plan under another plan's hash decodes: exported, with the warning.
        sql("UPDATE sessions SET plan_cbor = (SELECT plan_cbor FROM sessions WHERE id = 2) "
            "WHERE id = 1");
        Session s = store.load(a);
        QVERIFY(s.altered && s.plan);
        QVERIFY(contains(export_session(s, ExportFormat::Html), "ALTERED"));
        QVERIFY(export_session(s, ExportFormat::Pdf).starts_with("%PDF"));
        auto j = nlohmann::json::parse(export_session(s, ExportFormat::Json));
        QCOMPARE(j["session"]["altered"].get<bool>(), true);
        // Damaged bytes do not decode: nothing to export.
        sql("UPDATE sessions SET plan_cbor = substr(plan_cbor, 1, 99) || x'ff' || "
            "substr(plan_cbor, 101) WHERE id = 2");
        Session broken = store.load(2);
        QVERIFY(!broken.plan);
        TMMU_EXPECT_FAILURE(export_session(broken, ExportFormat::Csv),
                            FailureCode::CorruptCheckpoint);
    }

    void unrecordedPlanExports() {
        // The studio exports a shown plan that was never recorded: id 0, no created date.
        NewSession n = graph_session();
        Session s;
        s.summary.title = "fresh";
        s.summary.plan_hash = to_hex(n.plan.plan_hash);
        s.input = n.input;
        s.program_version = TMMU_VERSION;
        s.ir_hash = to_hex(n.plan.ir_hash);
        s.plan = n.plan;
        std::string html = export_session(s, ExportFormat::Html);
        QVERIFY(contains(html, "<h1>Plan: fresh</h1>"));
        QVERIFY(contains(html, "not recorded"));
        QVERIFY(export_session(s, ExportFormat::Pdf).starts_with("%PDF-1.4"));
        auto j = nlohmann::json::parse(export_session(s, ExportFormat::ChromeTrace));
        QVERIFY(j["traceEvents"].size() > s.plan->tensors.size());
        Session none;
        TMMU_EXPECT_FAILURE(export_session(none, ExportFormat::Json),
                            FailureCode::CorruptCheckpoint);
    }

    void cliEndToEnd() {
        QString db = QString::fromStdString(db_);
        QString id = QString::number(graph_id_);
        QTemporaryDir cwd;
        Run r = run(TMMU_CLI, {"export", id, "--format", "html", "--sessions", db}, cwd.path());
        QCOMPARE(r.code, 0);
        QString out = cwd.path() + "/session-" + id + ".html";
        QVERIFY2(r.err.contains("wrote session-" + id.toUtf8() + ".html ("), r.err.constData());
        QCOMPARE(test::read_file(out.toStdString()).value_or(""),
                 export_session(graph_, ExportFormat::Html));

        r = run(TMMU_CLI, {"export", id, "--format", "csv", "--out", "-", "--sessions", db});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out.toStdString(), export_session(graph_, ExportFormat::Csv));

        // The json and chrome-trace exports default to different names: neither overwrites.
        for (const char* format : {"json", "chrome-trace"})
            QCOMPARE(run(TMMU_CLI, {"export", id, "--format", format, "--sessions", db}, cwd.path())
                         .code,
                     0);
        QVERIFY(QFile::exists(cwd.path() + "/session-" + id + ".json"));
        QVERIFY(QFile::exists(cwd.path() + "/session-" + id + ".trace.json"));

        QString trace = cwd.path() + "/t.json";
        r = run(TMMU_CLI,
                {"export", id, "--format=chrome-trace", "--out", trace, "--sessions", db});
        QCOMPARE(r.code, 0);
        QVERIFY(QFile::exists(trace));

        r = run(TMMU_CLI, {"export", id, "--format", "docx", "--sessions", db});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("unknown format 'docx'"), r.err.constData());
        r = run(TMMU_CLI, {"export", id, "--sessions", db});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--format"), r.err.constData());
        r = run(TMMU_CLI, {"export", "999", "--format", "json", "--sessions", db});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("999"), r.err.constData());
        r = run(TMMU_CLI, {"export", "--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("chrome-trace"));
    }

    void hundredThousandTensors() {
        QElapsedTimer t;
        t.start();
        NewSession n = problem_session(100000, "greedy-size");
        qInfo("plan 100k tensors (greedy-size): %lld ms", t.elapsed());
        SessionStore store(path("big.db"));
        Session s = store.load(store.record(n));
        for (ExportFormat f : {ExportFormat::Html, ExportFormat::Pdf, ExportFormat::ChromeTrace,
                               ExportFormat::Csv}) {
            t.restart();
            std::string bytes = export_session(s, f);
            qInfo("export 100k tensors as %s: %lld ms, %zu bytes", export_format_name(f).data(),
                  t.elapsed(), bytes.size());
            if (f == ExportFormat::Html) {
                QVERIFY2(bytes.size() < 8u << 20, "HTML of 100k tensors should stay a few MB");
                QVERIFY(contains(bytes, "The 2000 largest of 100000 tensors"));
                QXmlStreamReader xml(QByteArray::fromStdString(bytes));
                while (!xml.atEnd())
                    xml.readNext();
                QVERIFY(!xml.hasError());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "test_export.moc"
