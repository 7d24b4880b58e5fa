#pragma once
// Framework planners, reimplemented faithfully (issue 16) so that `auto` can be held to never
// plan above them: each keeps its framework's buffer order, tie-breaking and gap rule. Pinned
// buffers stand for the frameworks' offline-planned ones and go first, at their pins.
//
// "tflm-greedy": TensorFlow Lite Micro's GreedyMemoryPlanner. Size desc; equal sizes in
//   reverse order of the buffers' indices (it fills its sort arrays from the tail and sorts
//   them stably); each buffer at the lowest offset, among the buffers overlapping it in time,
//   where it fits (first fit).
// "tflite-arena": TensorFlow Lite's ArenaPlanner over its SimpleMemoryArena. The buffers that
//   live through the whole problem first, by index; then size desc, then begin asc (further
//   ties by index); each buffer in the smallest gap that holds it among the buffers overlapping
//   it in time (the lowest of equal gaps), else on top of them.
#include "plan/strategy.h"

namespace tmmu {

// The lower of the framework planners' plans (ties: the earlier above): what `auto` and
// `optimal` hold themselves to.
OffsetSolution lowest_framework_plan(const OffsetProblem& p, const Progress& progress);

class TflmGreedyStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "tflm-greedy"; }
    std::string_view description() const override {
        return "TFLite Micro's greedy planner: size desc (ties reverse index), first fit";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

class TfliteArenaStrategy final : public OffsetStrategy {
  public:
    std::string_view name() const override { return "tflite-arena"; }
    std::string_view description() const override {
        return "TFLite's arena planner: whole-life buffers, then size desc, smallest gap";
    }
    OffsetSolution solve(const OffsetProblem& p, const Progress& progress) const override;
};

} // namespace tmmu
