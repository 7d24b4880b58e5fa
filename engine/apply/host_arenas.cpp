#include "apply/host_arenas.h"

#include "core/checked.h"
#include "core/failure.h"
#include "core/units.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <new>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace tmmu {

namespace {

uint64_t base_alignment(const Plan& plan, uint32_t arena) {
    uint64_t alignment = std::max<uint64_t>(plan.arenas[arena].config.alignment, 1);
    for (const PlannedTensor& t : plan.tensors)
        if (t.arena == arena) alignment = std::max(alignment, t.alignment);
    return alignment;
}

// Large arenas start on a 2 MiB boundary and ask for transparent huge pages: the first touch
// of each 4 KiB page (the fill) otherwise costs a page fault, most of the time of applying a
// plan of gigabytes (GPT-2 small training: 42 s of system time for 13.7 GiB).
constexpr uint64_t kHugePage = uint64_t(2) << 20;

void advise_huge_pages(std::byte* data, uint64_t size) {
    if (size >= kHugePage) madvise(data, size - size % kHugePage, MADV_HUGEPAGE);
}

// The memory the kernel says it can give without swapping (MemAvailable), else the physical
// memory: more than that would be touched by the fill and get the process killed.
uint64_t available_memory() {
    if (std::ifstream meminfo("/proc/meminfo"); meminfo)
        for (std::string key; meminfo >> key;) {
            uint64_t kib = 0;
            if (key == "MemAvailable:" && meminfo >> kib) return kib * 1024;
            meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
        }
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
}

} // namespace

void HostArenas::Free::operator()(std::byte* p) const {
    ::operator delete(p, alignment);
}

uint64_t HostArenas::bytes_needed(const Plan& plan) {
    uint64_t total = 0;
    for (const ArenaPlan& a : plan.arenas)
        total = checked_add(total, a.config.committed_bytes(a.metrics.peak_bytes), "host arenas");
    return total;
}

HostArenas::HostArenas(const Plan& plan) : total_(bytes_needed(plan)) {
    if (const uint64_t host = available_memory(); total_ > host)
        fail(FailureCode::DeviceError, "host memory",
             fmt::format("the plan's arenas need {} together, more than the {} of memory this "
                         "machine has available",
                         format_bytes(total_), format_bytes(host)));
    for (uint32_t i = 0; i < plan.arenas.size(); ++i) {
        const ArenaPlan& a = plan.arenas[i];
        const uint64_t size = a.config.committed_bytes(a.metrics.peak_bytes);
        const uint64_t wanted = base_alignment(plan, i);
        const std::align_val_t alignment{
            size_t(size >= kHugePage ? std::max(wanted, kHugePage) : wanted)};
        auto* data = static_cast<std::byte*>(::operator new(size, alignment, std::nothrow));
        if (!data)
            fail(FailureCode::DeviceError, "arena '" + a.config.name + "'",
                 fmt::format("the host cannot allocate its {} bytes aligned to {} bytes", size,
                             size_t(alignment)));
        advise_huge_pages(data, size);
        blocks_.push_back(
            {a.config.name, size, std::unique_ptr<std::byte, Free>(data, {alignment})});
    }
}

std::vector<ArenaMemory> HostArenas::memory() const {
    std::vector<ArenaMemory> out;
    for (const Block& b : blocks_)
        out.push_back({b.name, b.data.get(), b.size});
    return out;
}

} // namespace tmmu
