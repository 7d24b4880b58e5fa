// Vulkan device discovery. CTest pins the loader to lavapipe
// (VK_DRIVER_FILES, tests/CMakeLists.txt); the test sets the same pin itself before its first
// Vulkan call, so it finds Mesa's CPU device when run by hand too. Skips, naming the reason,
// where there is no loader or no lavapipe.
#include "backends/vulkan/vulkan_device.h"

#include <QObject>
#include <QTest>

#include <cstdlib>

using namespace tmmu::vulkan;

namespace {
constexpr const char* kLavapipe = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
constexpr uint32_t kDriverIdMesaLlvmpipe = 13; // VK_DRIVER_ID_MESA_LLVMPIPE
} // namespace

class TestVulkanDevice : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        setenv("VK_DRIVER_FILES", kLavapipe, 0); // CTest's value wins; same file
        setenv("VK_ICD_FILENAMES", kLavapipe, 0);
    }

    void aMissingDeviceIsAnAnswerNotAnError() {
        // Never throws: either devices and no reason, or a reason in words.
        const VulkanProbe probe = probe_vulkan();
        bool compute = false;
        for (const VulkanDeviceInfo& d : probe.devices)
            compute = compute || d.compute_queue;
        QCOMPARE(probe.unavailable_reason.empty(), compute);
        QCOMPARE(vulkan_unavailable_reason(), probe.unavailable_reason);
        if (!probe.unavailable_reason.empty())
            QVERIFY2(probe.unavailable_reason.find(' ') != std::string::npos,
                     probe.unavailable_reason.c_str());
    }

    void lavapipeIsACpuDeviceWithAComputeQueue() {
        // CTest pins the loader to lavapipe; a run pointed at another driver (a GPU's, on the
        // device machine) has no CPU device to look at.
        const char* files = std::getenv("VK_DRIVER_FILES");
        if (files && std::string(files).find("lvp_icd") == std::string::npos)
            QSKIP(("Vulkan is pinned to another driver: VK_DRIVER_FILES=" + std::string(files))
                      .c_str());
        const std::string reason = vulkan_unavailable_reason();
        if (!reason.empty()) QSKIP(("no Vulkan device: " + reason).c_str());
        const std::vector<VulkanDeviceInfo> devices = vulkan_devices();
        QVERIFY(!devices.empty());
        const VulkanDeviceInfo* cpu = nullptr;
        for (const VulkanDeviceInfo& d : devices)
            if (d.type == DeviceType::Cpu) cpu = &d;
        QVERIFY2(cpu, "pinned to lavapipe, yet no device of type cpu");
        QVERIFY(!cpu->name.empty());
        QCOMPARE(device_type_name(cpu->type), "cpu");
        QVERIFY(cpu->compute_queue);
        QVERIFY2(cpu->api_version >= (1u << 22 | 1u << 12), cpu->api_version_text.c_str()); // 1.1
        QVERIFY(cpu->api_version_text.rfind("1.", 0) == 0);
        // Identified by its driver id (API 1.2 devices report it), never by its name.
        if (cpu->driver_id != 0) {
            QCOMPARE(cpu->driver_id, kDriverIdMesaLlvmpipe);
            QCOMPARE(cpu->driver_name, std::string("llvmpipe"));
            QVERIFY2(cpu->driver_info.find("Mesa") != std::string::npos, cpu->driver_info.c_str());
        }
        QVERIFY(cpu->device_local_bytes > 0);
        QVERIFY2(cpu->timestamps(), "lavapipe's compute queue has timestamps");
        QVERIFY(cpu->timestamp_valid_bits <= 64);
        const std::string line = describe(*cpu);
        QVERIFY2(line.find(cpu->name) == 0 && line.find(", cpu, API 1.") != std::string::npos,
                 line.c_str());
        QVERIFY2(line.find("compute queue") != std::string::npos, line.c_str());
    }

    void eachProbeCreatesAndDestroysItsOwnInstance() {
        // RAII: repeated probes give the same answer (no instance left half-alive).
        const std::vector<VulkanDeviceInfo> a = vulkan_devices(), b = vulkan_devices();
        QCOMPARE(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            QCOMPARE(a[i].name, b[i].name);
            QCOMPARE(a[i].device_local_bytes, b[i].device_local_bytes);
        }
    }
};

QTEST_GUILESS_MAIN(TestVulkanDevice)
#include "test_vulkan_device.moc"
