// CUDA device discovery (GPU backends, first slice). Without a device (no driver, a stub
// library, or a driver and no GPU) the probe answers in words and lists nothing; the device
// checks then skip, naming the reason. With one, its fields must be sane.
#include "backends/cuda/cuda_device.h"

#include <QObject>
#include <QTest>

using namespace tmmu::cuda;

class TestCudaDevice : public QObject {
    Q_OBJECT
  private slots:
    void noDeviceIsAnAnswerInWords() {
        const CudaProbe probe = probe_cuda();
        QVERIFY2(!probe.runtime_version.empty(), "the runtime always knows its own version");
        QCOMPARE(cuda_unavailable_reason(), probe.unavailable_reason);
        if (probe.unavailable_reason.empty()) {
            QVERIFY(!probe.devices.empty());
            QVERIFY(!probe.driver_version.empty());
            return;
        }
        QVERIFY(probe.devices.empty());
        QVERIFY(cuda_devices().empty());
        const std::string& why = probe.unavailable_reason;
        QVERIFY2(why.rfind("no CUDA driver", 0) == 0 || why.rfind("no CUDA device", 0) == 0 ||
                     why.rfind("CUDA unavailable (", 0) == 0,
                 why.c_str());
        // Names the runtime's error when there was one ("no CUDA device" alone: a count of 0).
        if (why != "no CUDA device")
            QVERIFY2(why.find("(cudaError") != std::string::npos, why.c_str());
    }

    void devicesHaveSaneFields() {
        const std::string reason = cuda_unavailable_reason();
        if (!reason.empty()) QSKIP(("no CUDA device: " + reason).c_str());
        const std::vector<CudaDeviceInfo> devices = cuda_devices();
        QVERIFY(!devices.empty());
        for (size_t i = 0; i < devices.size(); ++i) {
            const CudaDeviceInfo& d = devices[i];
            QCOMPARE(d.ordinal, int(i));
            QVERIFY(!d.name.empty());
            QVERIFY2(d.cc_major >= 7 && d.cc_major < 20, d.name.c_str()); // built for 7.5 and up
            QVERIFY(d.cc_minor >= 0 && d.cc_minor < 10);
            QVERIFY(d.total_memory >= (uint64_t(1) << 30));
            QVERIFY(d.sm_count > 0);
            QVERIFY(d.memory_clock_khz >= 0 && d.memory_bus_width >= 0);
            QVERIFY2(describe(d).rfind(d.name, 0) == 0, describe(d).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaDevice)
#include "test_cuda_device.moc"
