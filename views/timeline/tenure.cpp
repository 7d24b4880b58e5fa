#include "timeline/tenure.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace tmmu::views {

std::vector<Tenure> buffer_tenures(const Plan& plan) {
    const std::vector<PlannedTensor>& tensors = plan.tensors;
    auto endOf = [&](size_t i) {
        return double(std::max(tensors[i].life.end, tensors[i].life.begin + 1));
    };
    std::vector<Tenure> out(tensors.size());
    std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> members; // (arena, buffer)
    for (size_t i = 0; i < tensors.size(); ++i) {
        out[i] = {double(tensors[i].life.begin), endOf(i), true};
        members[{tensors[i].arena, tensors[i].buffer}].push_back(i);
    }
    for (auto& [buffer, list] : members) {
        std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
            return std::tuple(tensors[a].life.begin, endOf(a), a) <
                   std::tuple(tensors[b].life.begin, endOf(b), b);
        });
        // Invariant: `owner` is the last tensor to take the buffer over; its tenure ends where
        // the next one's begins.
        size_t owner = list.front();
        for (size_t k = 1; k < list.size(); ++k) {
            const size_t m = list[k];
            // Inside the owner: it dies first, or lives exactly as long (a view of all of it).
            // One born later that dies with the owner takes over (the output of a chain).
            if (endOf(m) < endOf(owner) ||
                (endOf(m) == endOf(owner) && tensors[m].life.begin == tensors[owner].life.begin)) {
                out[m].takesOver = false;
                continue;
            }
            const double born = double(tensors[m].life.begin);
            const double cut = born < endOf(owner) ? (born + endOf(owner)) / 2 : born;
            out[owner].end = std::min(out[owner].end, cut);
            out[m].begin = std::max(out[m].begin, cut);
            owner = m;
        }
    }
    return out;
}

} // namespace tmmu::views
