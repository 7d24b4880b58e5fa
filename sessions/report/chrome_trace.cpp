// The plan as a Chrome trace (Trace Event Format, JSON object form) for Perfetto/chrome://tracing:
// one process per arena, one thread per slot, each tensor a complete ("X") slice over its
// lifetime, and counters of live bytes and high-water mark. One time step = 1000 us (1 ms).
//
// Slices on one thread never overlap: a slot holds one buffer at a time, but the tensors sharing
// a buffer (views, alias groups, in-place writes) may overlap each other without nesting, which
// trace viewers reject. Such tensors go to extra "slot N alias K" threads, chosen greedily.
#include "report/formats.h"
#include "report/report_data.h"
#include "report/text_util.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <numeric>

namespace tmmu::sessions::report {
namespace {

constexpr uint64_t kUsPerStep = 1000;

struct Track {
    uint32_t slot = 0, lane = 0;
    bool operator<(const Track& o) const { return slot != o.slot ? slot < o.slot : lane < o.lane; }
};

// Per tensor of one arena, its (slot, lane): the lowest lane of the slot free at its begin.
std::map<size_t, Track> assign_tracks(const Plan& p, uint32_t arena) {
    std::vector<size_t> order;
    for (size_t i = 0; i < p.tensors.size(); ++i)
        if (p.tensors[i].arena == arena) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const PlannedTensor &x = p.tensors[a], &y = p.tensors[b];
        if (x.slot != y.slot) return x.slot < y.slot;
        return x.life.begin < y.life.begin; // ties keep ascending id
    });
    std::map<size_t, Track> out;
    std::vector<uint32_t> lane_end; // per lane of the current slot: end of its last slice
    uint32_t slot = UINT32_MAX;
    for (size_t i : order) {
        const PlannedTensor& t = p.tensors[i];
        if (t.slot != slot) slot = t.slot, lane_end.clear();
        uint32_t lane = 0;
        while (lane < lane_end.size() && lane_end[lane] > t.life.begin)
            ++lane;
        if (lane == lane_end.size()) lane_end.push_back(0);
        lane_end[lane] = t.life.end;
        out[i] = {t.slot, lane};
    }
    return out;
}

void metadata(std::string& out, const char* what, uint32_t pid, uint32_t tid,
              const std::string& name, uint64_t sort) {
    out += fmt::format(R"({{"name":"{}","ph":"M","ts":0,"pid":{},"tid":{},"args":{{"name":{}}}}},)"
                       "\n",
                       what, pid, tid, json_string(name));
    const char* sort_what =
        std::string_view(what) == "process_name" ? "process_sort_index" : "thread_sort_index";
    out += fmt::format(
        R"({{"name":"{}","ph":"M","ts":0,"pid":{},"tid":{},"args":{{"sort_index":{}}}}},)"
        "\n",
        sort_what, pid, tid, sort);
}

void arena_events(std::string& out, const Plan& p, uint32_t arena) {
    const ArenaPlan& ap = p.arenas[arena];
    uint32_t pid = arena + 1;
    metadata(out, "process_name", pid, 0, ap.config.name, arena);
    std::map<size_t, Track> tracks = assign_tracks(p, arena);
    std::map<Track, uint32_t> tids; // tid 1.. in (slot, lane) order
    for (const auto& [i, track] : tracks)
        tids.emplace(track, 0);
    uint32_t next = 1;
    for (auto& [track, tid] : tids) {
        tid = next++;
        std::string name = track.lane == 0
                               ? fmt::format("slot {}", track.slot)
                               : fmt::format("slot {} alias {}", track.slot, track.lane);
        metadata(out, "thread_name", pid, tid, name, tid);
    }
    for (const auto& [i, track] : tracks) { // ascending tensor (id) order
        const PlannedTensor& t = p.tensors[i];
        out +=
            fmt::format(R"({{"name":{},"cat":"{}","ph":"X","ts":{},"dur":{},"pid":{},"tid":{},)"
                        R"("args":{{"id":{},"offset":{},"size":{},"slot":{},"buffer":{}}}}},)"
                        "\n",
                        json_string(t.name), role_name(t.role), uint64_t(t.life.begin) * kUsPerStep,
                        uint64_t(t.life.end - t.life.begin) * kUsPerStep, pid, tids[track],
                        json_string(t.id), t.offset, t.size, t.slot, t.buffer);
    }
    // Counters are step functions: a point whose values did not change adds nothing.
    const auto& times = p.series.times;
    const auto& live = p.series.live_bytes[arena];
    const auto& high = p.series.high_water[arena];
    for (size_t k = 0; k < times.size() && k < live.size(); ++k) {
        if (k > 0 && k + 1 < times.size() && live[k] == live[k - 1] && high[k] == high[k - 1])
            continue;
        out += fmt::format(R"({{"name":"memory","ph":"C","ts":{},"pid":{},"tid":0,)"
                           R"("args":{{"live_bytes":{},"high_water":{}}}}},)"
                           "\n",
                           times[k] * kUsPerStep, pid, live[k], high[k]);
    }
}

} // namespace

std::string chrome_trace(const Session& s) {
    const Plan& p = checked_plan(s);
    std::string out = "{\"traceEvents\":[\n";
    for (uint32_t a = 0; a < p.arenas.size() && a < p.series.live_bytes.size(); ++a)
        if (!p.arenas[a].problem.buffers.empty()) arena_events(out, p, a);
    if (out.back() == '\n' && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);
    out += fmt::format(
        "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{{\"format\":\"tmmu-chrome-trace\","
        "\"session\":{},\"title\":{},\"plan_hash\":{},\"us_per_step\":{}}}}}\n",
        s.summary.id, json_string(s.summary.title), json_string(s.summary.plan_hash), kUsPerStep);
    return out;
}

} // namespace tmmu::sessions::report
