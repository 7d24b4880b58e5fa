#include "plan/strategy.h"

#include "plan/strategies/auto_strategy.h"
#include "plan/strategies/best_fit.h"
#include "plan/strategies/ffd.h"
#include "plan/strategies/framework_heuristics.h"
#include "plan/strategies/greedy_size.h"
#include "plan/strategies/multi_order.h"
#include "plan/strategies/optimal.h"
#include "plan/strategies/slots.h"

namespace tmmu {

const std::vector<const OffsetStrategy*>& all_strategies() {
    static const SlotsStrategy slots;
    static const FfdStrategy ffd;
    static const GreedySizeStrategy greedy_size;
    static const BestFitStrategy best_fit;
    static const MultiOrderStrategy multi_order;
    static const AutoStrategy auto_strategy;
    static const OptimalStrategy optimal; // default node budget; the planner may use its own
    static const std::vector<const OffsetStrategy*> all = [&] {
        std::vector<const OffsetStrategy*> v = {&slots, &ffd, &greedy_size, &best_fit};
        const auto& frameworks = framework_strategies();
        v.insert(v.end(), frameworks.begin(), frameworks.end());
        v.insert(v.end(), {&multi_order, &auto_strategy, &optimal});
        return v;
    }();
    return all;
}

const OffsetStrategy* find_strategy(std::string_view name) {
    for (const OffsetStrategy* s : all_strategies())
        if (s->name() == name) return s;
    return nullptr;
}

} // namespace tmmu
