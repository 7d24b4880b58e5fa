// End to end: every output option of tmmu writes where the user pointed without destroying
// what is there: "-" is standard output, devices and FIFOs are written in place, symlinks are
// followed, a failed write is IO_ERROR (exit 16).
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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

// Runs tmmu with stdout a pipe whose reader has already gone, stderr into `err_path`; returns
// the exit status, or 128 + the signal that ended it.
int run_into_closed_pipe(const QStringList& args, const QString& err_path) {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    ::close(fds[0]);
    std::vector<std::string> words{TMMU_CLI};
    for (const QString& a : args)
        words.push_back(a.toStdString());
    std::vector<char*> argv;
    for (std::string& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    const std::string err = err_path.toStdString();
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::signal(SIGPIPE, SIG_DFL); // as from a shell, whatever this test process inherited
        const int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(fds[1], STDOUT_FILENO);
        ::dup2(err_fd, STDERR_FILENO);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(fds[1]);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
            if (QByteArray(option) == "--json") {
                // The plan JSON carries timings, so compare what identifies the plan; parsing
                // the whole of stdout also proves nothing else was printed there.
                QJsonParseError error;
                const QJsonDocument out = QJsonDocument::fromJson(to_stdout.out, &error);
                QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
                const QJsonDocument in_file = QJsonDocument::fromJson(bytes_of(file));
                QVERIFY(!out["plan_hash"].toString().isEmpty());
                QCOMPARE(out["plan_hash"].toString(), in_file["plan_hash"].toString());
                continue;
            }
            QVERIFY2(to_stdout.out == bytes_of(file), option); // nothing else on stdout
        }
    }
    void twoOutputsOnStdoutAreAUsageError() {
        RawRun r = run_raw({"plan", kModel, "--json", "-", "--trace", "-"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--trace") && r.err.contains("--json"), qPrintable(r.err));
    }
    void jsonToDevStdoutReachesThePipe() {
        // /dev/stdout links to "pipe:[ino]", which is no path: reading the link as text once
        // created a file of that name in the working directory.
        RawRun r = run_raw({"plan", kModel, "--json", "/dev/stdout", "--quiet"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.startsWith("{"), r.out.left(80).constData());
        QVERIFY(QDir::current().entryList({"pipe:*"}).isEmpty());
    }
    void jsonToDevStdoutAppendsToARedirectedFile() {
        // `tmmu plan --json /dev/stdout >> log` keeps the log's earlier lines.
        const QString log = at("log.json");
        QFile f(log);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("previous\n");
        f.close();
        QProcess p;
        p.setStandardOutputFile(log, QIODevice::Append);
        p.start(QStringLiteral(TMMU_CLI), {"plan", kModel, "--json", "/dev/stdout", "--quiet"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(bytes_of(log).startsWith("previous\n{"), bytes_of(log).left(80).constData());
    }
    void devStdoutCountsAsStdoutForTheOneOutputRule() {
        RawRun r = run_raw({"plan", kModel, "--json", "/dev/stdout", "--trace", "-"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("--trace") && r.err.contains("--json"), qPrintable(r.err));
    }
    void aReaderThatLeftIsAnIoError() {
        // `tmmu plan | head -0`: IO_ERROR naming stdout, not a silent death by SIGPIPE; both a
        // JSON written by write_output and the summary still buffered at exit.
        const QString err = at("closed-pipe.err");
        for (const QStringList& args :
             {QStringList{"plan", kModel, "--json", "-", "--quiet"}, QStringList{"plan", kModel}}) {
            QCOMPARE(run_into_closed_pipe(args, err), 16);
            const QString message = QString::fromUtf8(bytes_of(err));
            QVERIFY2(message.contains("IO_ERROR at stdout") && message.contains("Broken pipe"),
                     qPrintable(message));
        }
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
