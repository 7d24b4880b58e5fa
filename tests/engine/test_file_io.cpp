// write_output: every kind of path a user can name gets written without destroying what is
// there (issue 11: `--checkpoint /dev/null` once turned /dev/null into a regular file).
#include "io/file_io.h"
#include "test_support.h"

#include <QDir>
#include <QObject>
#include <QTemporaryDir>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace tmmu;

namespace {

mode_t kind_of(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

std::string content(const std::string& path) {
    return test::read_file(path).value_or("<none>");
}

// A character device with the numbers of /dev/null (1,3) or /dev/full (1,7) in the temp dir,
// so a regression replaces a copy, never the machine's own device.
bool make_device(const std::string& path, unsigned minor) {
    return ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) == 0;
}

} // namespace

class TestFileIo : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string at(const char* name) const { return dir_.filePath(name).toStdString(); }

  private slots:
    void newFileIsCreated() {
        write_output(at("new.json"), "{}\n");
        QCOMPARE(content(at("new.json")), std::string("{}\n"));
        QCOMPARE(kind_of(at("new.json")), mode_t(S_IFREG));
    }
    void existingFileIsReplacedKeepingItsMode() {
        const std::string path = at("old.json");
        write_output(path, "old content that is longer");
        QCOMPARE(::chmod(path.c_str(), 0600), 0);
        write_output(path, "new");
        QCOMPARE(content(path), std::string("new"));
        struct stat st {};
        QCOMPARE(::stat(path.c_str(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0600));
        QCOMPARE(QDir(dir_.path()).entryList({"old.json.tmp.*"}).size(), 0); // no temp left
    }
    void symlinkIsFollowedAndStaysALink() {
        write_output(at("target.json"), "before");
        QCOMPARE(::symlink("target.json", at("link.json").c_str()), 0); // relative target
        QCOMPARE(::symlink(at("link.json").c_str(), at("chain.json").c_str()), 0);
        write_output(at("chain.json"), "after");
        QCOMPARE(kind_of(at("link.json")), mode_t(S_IFLNK));
        QCOMPARE(kind_of(at("chain.json")), mode_t(S_IFLNK));
        QCOMPARE(content(at("target.json")), std::string("after"));
    }
    void danglingSymlinkCreatesItsTarget() {
        QCOMPARE(::symlink("made.json", at("dangling.json").c_str()), 0);
        write_output(at("dangling.json"), "made");
        QCOMPARE(kind_of(at("dangling.json")), mode_t(S_IFLNK));
        QCOMPARE(content(at("made.json")), std::string("made"));
    }
    void symlinkLoopIsAnIoError() {
        QCOMPARE(::symlink("loop-b", at("loop-a").c_str()), 0);
        QCOMPARE(::symlink("loop-a", at("loop-b").c_str()), 0);
        TMMU_EXPECT_FAILURE(write_output(at("loop-a"), "x"), FailureCode::IoError);
    }
    void fifoIsWrittenInPlace() {
        const std::string path = at("pipe");
        QCOMPARE(::mkfifo(path.c_str(), 0600), 0);
        // The read end opens first without blocking, so the writer's open succeeds at once and
        // a regression (the FIFO replaced by a file) reads EOF instead of hanging.
        const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
        QVERIFY(fd >= 0);
        write_output(path, "through the pipe");
        std::string received;
        char buf[256];
        for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
            received.append(buf, size_t(n));
        ::close(fd);
        QCOMPARE(received, std::string("through the pipe"));
        QCOMPARE(kind_of(path), mode_t(S_IFIFO));
    }
    void ownDescriptorPathsWriteThroughTheDescriptor() {
        // "/dev/fd/N" of a pipe links to "pipe:[ino]", which is no path: following the link
        // as text created a file of that name.
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        const std::string dev_fd = "/dev/fd/" + std::to_string(fds[1]);
        const std::string proc_fd = "/proc/self/fd/" + std::to_string(fds[1]);
        write_output(dev_fd, "one ");
        write_output(proc_fd, "two");
        ::close(fds[1]);
        std::string received;
        char buf[64];
        for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
            received.append(buf, size_t(n));
        ::close(fds[0]);
        QCOMPARE(received, std::string("one two"));
    }
    void appendingDescriptorKeepsWhatIsThere() {
        // `tmmu ... --json /dev/stdout >> log`: the log keeps its lines, and stays the file the
        // shell opened (replacing it would leave the shell writing to a deleted file).
        const std::string log = at("log.txt");
        write_output(log, "previous\n");
        struct stat before {};
        QCOMPARE(::stat(log.c_str(), &before), 0);
        const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
        QVERIFY(fd >= 0);
        write_output("/dev/fd/" + std::to_string(fd), "next\n");
        ::close(fd);
        QCOMPARE(content(log), std::string("previous\nnext\n"));
        struct stat after {};
        QCOMPARE(::stat(log.c_str(), &after), 0);
        QCOMPARE(after.st_ino, before.st_ino);
    }
    void aLinkPlantedAtTheOldTempNameIsNotWrittenThrough() {
        // The temp name was once path.tmp.PID: anyone could plant a link there in advance.
        const std::string path = at("planted.json");
        write_output(at("victim"), "untouched");
        const std::string old_temp = path + ".tmp." + std::to_string(::getpid());
        QCOMPARE(::symlink(at("victim").c_str(), old_temp.c_str()), 0);
        write_output(path, "written");
        QCOMPARE(content(at("victim")), std::string("untouched"));
        QCOMPARE(content(path), std::string("written"));
        QCOMPARE(kind_of(old_temp), mode_t(S_IFLNK)); // not ours to remove
    }
    void deviceIsWrittenInPlace() {
        const std::string null = at("null");
        if (!make_device(null, 3)) QSKIP("mknod needs CAP_MKNOD (root); device case not run");
        write_output(null, "discarded");
        QCOMPARE(kind_of(null), mode_t(S_IFCHR));
    }
    void fullDeviceIsAnIoErrorAndStaysADevice() {
        const std::string full = at("full");
        if (!make_device(full, 7)) QSKIP("mknod needs CAP_MKNOD (root); device case not run");
        auto f = test::capture_failure([&] { write_output(full, "no room"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::IoError);
        QVERIFY2(std::string(f->what()).find("No space left") != std::string::npos, f->what());
        QCOMPARE(kind_of(full), mode_t(S_IFCHR));
    }
    void directoryIsAnIoError() {
        QVERIFY(QDir(dir_.path()).mkdir("sub"));
        TMMU_EXPECT_FAILURE(write_output(at("sub"), "x"), FailureCode::IoError);
        QCOMPARE(kind_of(at("sub")), mode_t(S_IFDIR));
    }
    void missingDirectoryIsAnIoErrorNamingThePath() {
        auto f = test::capture_failure([&] { write_output(at("no/such/dir.json"), "x"); });
        QVERIFY(f.has_value());
        QCOMPARE(f->code(), FailureCode::IoError);
        QVERIFY2(f->where().find("no/such/dir.json") != std::string::npos, f->what());
    }
};

QTEST_GUILESS_MAIN(TestFileIo)
#include "test_file_io.moc"
