#include "backends/cpu/cpu_generate.h"

#include "backends/cpu/cpu_program.h"
#include "core/failure.h"
#include "runtime/generate.h"

#include <fmt/format.h>

namespace tmmu::cpu {

using namespace tmmu::runtime;

namespace {

class CpuExecutor final : public Executor {
  public:
    CpuExecutor(const ExecutionPlan& decode, WeightStore weights, const RunRequest& request)
        : weights_(std::move(weights)), states_(decode, request.batch), layout_(request.layout),
          check_memory_(request.check_memory) {}

    std::unique_ptr<Program> load(CompiledPlan plan) override {
        return std::make_unique<CpuProgram>(std::move(plan), weights_, states_, layout_,
                                            check_memory_);
    }
    std::string device() const override { return kCpuDevice; }

  private:
    WeightStore weights_;
    SlotStates states_;
    RegisterLayout layout_;
    bool check_memory_;
};

} // namespace

std::unique_ptr<Executor> make_cpu_executor(const ExecutionPlan& decode, WeightStore weights,
                                            const RunRequest& request) {
    return std::make_unique<CpuExecutor>(decode, std::move(weights), request);
}

RunResult generate(const TransformerConfig& c, const RunRequest& r, const Progress& progress) {
    return runtime::generate(c, r, make_cpu_executor, progress);
}

RunResult replay(const RunRecord& record, const Progress& progress) {
    if (record.backend != "cpu")
        fail(FailureCode::InvalidArgument, "backend",
             fmt::format("the run was recorded on '{}'; this replays CPU runs", record.backend));
    return runtime::rerun(record, make_cpu_executor, progress);
}

} // namespace tmmu::cpu
