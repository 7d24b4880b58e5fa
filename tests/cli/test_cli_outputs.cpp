// End to end: every output option of tmmu writes where the user pointed without destroying
// what is there: "-" is standard output, devices and FIFOs are written in place, symlinks are
// followed, a failed write is IO_ERROR (exit 16).
#include "test_support.h"

#include <QFile>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace {

const QString kModel =
    QStringLiteral(TMMU_SOURCE_DIR "/resources/models/examples/residual_blocks.json");

// Runs tmmu and keeps stdout as bytes (a checkpoint on stdout is binary).
struct RawRun {
    int code = -1;
    QByteArray out;
    QString err;
};
RawRun run_raw(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(TMMU_CLI), args);
    RawRun r;
    if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit) return r;
    r.code = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QByteArray bytes_of(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

mode_t kind_of(const QString& path) {
    struct stat st {};
    return ::lstat(path.toLocal8Bit().constData(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

} // namespace

class TestCliOutputs : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString at(const char* name) const { return dir_.filePath(name); }

  private slots:
    void everyPlanOutputCanGoToStdout() {
        for (const char* option : {"--json", "--trace", "--checkpoint"}) {
            const QString file = at("out.bin");
            RawRun to_file = run_raw({"plan", kModel, "--mode", "inference", option, file});
            QCOMPARE(to_file.code, 0);
            RawRun to_stdout = run_raw({"plan", kModel, "--mode", "inference", option, "-"});
            QCOMPARE(to_stdout.code, 0);
            if (QByteArray(option) == "--json") continue;      // plan JSON carries timings
            QVERIFY2(to_stdout.out == bytes_of(file), option); // nothing else on stdout
        }
    }
    void twoOutputsOnStdoutAreAUsageError() {
        RawRun r = run_raw({"plan", kModel, "--json", "-", "--trace", "-"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--trace") && r.err.contains("--json"), qPrintable(r.err));
    }
    void checkpointToADeviceLeavesTheDevice() {
        const QString null = at("null");
        if (::mknod(null.toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 3)) != 0)
            QSKIP("mknod needs CAP_MKNOD (root); device case not run");
        RawRun r = run_raw({"plan", kModel, "--checkpoint", null, "--quiet"});
        QCOMPARE(r.code, 0);
        QCOMPARE(kind_of(null), mode_t(S_IFCHR));
    }
    void exportToAFullDeviceFailsWithIoError() {
        const QString full = at("full");
        if (::mknod(full.toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 7)) != 0)
            QSKIP("mknod needs CAP_MKNOD (root); device case not run");
        const QString db = at("s.db");
        QCOMPARE(run_raw({"plan", kModel, "--quiet", "--record", "--sessions", db}).code, 0);
        RawRun r = run_raw({"export", "1", "--format", "json", "--out", full, "--sessions", db});
        QCOMPARE(r.code, 16);
        QVERIFY2(r.err.contains("IO_ERROR") && r.err.contains("No space left"), qPrintable(r.err));
        QCOMPARE(kind_of(full), mode_t(S_IFCHR));
    }
    void jsonThroughASymlinkReplacesItsTarget() {
        const QString target = at("target.json");
        QFile(target).open(QIODevice::WriteOnly);
        QVERIFY(QFile::link(target, at("link.json")));
        QCOMPARE(run_raw({"plan", kModel, "--json", at("link.json"), "--quiet"}).code, 0);
        QCOMPARE(kind_of(at("link.json")), mode_t(S_IFLNK));
        QVERIFY(bytes_of(target).startsWith("{"));
    }
    void traceIntoAFifoReachesItsReader() {
        const QString fifo = at("trace.fifo");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QProcess reader; // cat holds the read end while tmmu writes
        reader.start("cat", {fifo});
        QVERIFY(reader.waitForStarted());
        RawRun r = run_raw({"plan", kModel, "--trace", fifo, "--quiet"});
        QVERIFY(reader.waitForFinished(10000)); // tmmu has finished writing by now
        QCOMPARE(r.code, 0);
        QVERIFY(reader.readAllStandardOutput().startsWith("{\"record\":\"allocation_header\""));
        QCOMPARE(kind_of(fifo), mode_t(S_IFIFO));
    }
};

QTEST_GUILESS_MAIN(TestCliOutputs)
#include "test_cli_outputs.moc"
