#include "timeline/tenure.h"

#include "context/plan_context.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace tmmu::views {

std::vector<Tenure> buffer_tenures(const Plan& plan, const std::vector<bool>& views) {
    const std::vector<PlannedTensor>& tensors = plan.tensors;
    auto endOf = [&](size_t i) {
        return double(std::max(tensors[i].life.end, tensors[i].life.begin + 1));
    };
    auto isView = [&](size_t i) { return i < views.size() && views[i]; };
    std::vector<Tenure> out(tensors.size());
    std::map<std::pair<uint32_t, uint32_t>, std::vector<size_t>> members; // (arena, buffer)
    for (size_t i = 0; i < tensors.size(); ++i) {
        out[i] = {double(tensors[i].life.begin), endOf(i), !isView(i)};
        if (!isView(i)) members[{tensors[i].arena, tensors[i].buffer}].push_back(i);
    }
    for (auto& [buffer, list] : members) {
        std::sort(list.begin(), list.end(), [&](size_t a, size_t b) {
            return std::tuple(tensors[a].life.begin, endOf(a), a) <
                   std::tuple(tensors[b].life.begin, endOf(b), b);
        });
        // Invariant: `owner` is the last tensor to take the buffer over; its tenure ends where
        // the next one's begins, so the buffer is drawn end to end without holes.
        size_t owner = list.front();
        for (size_t k = 1; k < list.size(); ++k) {
            const size_t m = list[k];
            // One living inside the owner (an alias group's short member; without the graph to
            // tell, a view) is drawn over it, and the owner keeps the buffer.
            if (endOf(m) < endOf(owner) ||
                (endOf(m) == endOf(owner) && tensors[m].life.begin == tensors[owner].life.begin)) {
                out[m].takesOver = false;
                continue;
            }
            const double born = double(tensors[m].life.begin);
            const double cut = born < endOf(owner) ? (born + endOf(owner)) / 2 : born;
            out[owner].end = cut; // across a gap (an alias group's): until the next is born
            out[m].begin = std::max(out[m].begin, cut);
            owner = m;
        }
    }
    return out;
}

std::vector<bool> views_of(const PlanContext& ctx) {
    const Plan* plan = ctx.plan();
    const LoadedModel* model = ctx.model();
    if (!plan || !model || !model->graph) return {};
    std::vector<bool> views(plan->tensors.size(), false);
    for (size_t i = 0; i < views.size(); ++i) {
        const TensorIndex t = ctx.graphTensor(int(i));
        views[i] = t != kNone && model->graph->tensors[t].view.has_value();
    }
    return views;
}

} // namespace tmmu::views
