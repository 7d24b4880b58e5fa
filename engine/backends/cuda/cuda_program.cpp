#include "backends/cuda/cuda_program.h"

#include "backends/cuda/cuda_adapters.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/cuda_memory_check.h"
#include "core/failure.h"
#include "runtime/adapter_check.h"
#include "runtime/adapter_memory.h"
#include "runtime/generate.h"
#include "runtime/gpu_adapters.h"
#include "runtime/gpu_fusion.h"
#include "runtime/physical_mapping.h"

#include <algorithm>
#include <cstring>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace tmmu::cuda {

using namespace tmmu::runtime;

namespace {

constexpr uint64_t kStateAlignment = 256; // cudaMalloc's own alignment

uint64_t round_up(uint64_t bytes, uint64_t to) {
    return (bytes + to - 1) / to * to;
}

// The stream every program of a run enqueues on, in order: prefill and decode programs share
// the KV caches, so they share the stream too.
class Stream {
  public:
    Stream() {
        check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cudaStreamDestroy(stream_); }
    cudaStream_t get() const { return stream_; }

  private:
    cudaStream_t stream_ = nullptr;
};

class CudaGraph {
  public:
    CudaGraph() = default;
    CudaGraph(const CudaGraph&) = delete;
    CudaGraph& operator=(const CudaGraph&) = delete;
    ~CudaGraph() {
        if (exec_) cudaGraphExecDestroy(exec_);
        if (graph_) cudaGraphDestroy(graph_);
    }
    bool ready() const { return exec_ != nullptr; }
    cudaGraph_t* graph() { return &graph_; }
    void instantiate() {
        check_cuda(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
    }
    void launch(cudaStream_t stream) {
        check_cuda(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch");
    }

  private:
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
};

uint64_t free_device_bytes() {
    size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
}

// Weights in one allocation, packed as `half` says ([in, out] matrices transposed first).
DeviceBuffer upload_weights(const ExecutionPlan& plan, WeightStore weights,
                            const std::vector<bool>& half, std::vector<uint64_t>& offset,
                            cudaStream_t stream) {
    transpose_conv1d_weights(plan, weights);
    const PackedWeights packed = pack_weights(plan, weights, half);
    offset = packed.offset;
    DeviceBuffer device(packed.bytes.size(), "weights");
    check_cuda(cudaMemcpyAsync(device.get(), packed.bytes.data(), device.bytes(),
                               cudaMemcpyHostToDevice, stream),
               "weights upload");
    check_cuda(cudaStreamSynchronize(stream), "weights upload");
    return device;
}

// Events around every instruction of a step (seed 002 A8: device time per opcode), recorded
// only while the program counts. Inside a graph capture they become event nodes of the graph.
class InstructionTimer {
  public:
    explicit InstructionTimer(size_t instructions) : events_(instructions + 1, nullptr) {
        for (cudaEvent_t& e : events_)
            check_cuda(cudaEventCreate(&e), "cudaEventCreate");
    }
    InstructionTimer(const InstructionTimer&) = delete;
    InstructionTimer& operator=(const InstructionTimer&) = delete;
    ~InstructionTimer() {
        for (cudaEvent_t e : events_)
            if (e) cudaEventDestroy(e);
    }
    // Before instruction i (i == instructions: after the last).
    void mark(size_t i, cudaStream_t stream, bool capturing) {
        check_cuda(capturing ? cudaEventRecordWithFlags(events_[i], stream, cudaEventRecordExternal)
                             : cudaEventRecord(events_[i], stream),
                   "cudaEventRecord");
    }
    double seconds(size_t i) const { // instruction i's, once the step has finished
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]), "cudaEventElapsedTime");
        return double(ms) / 1e3;
    }

  private:
    std::vector<cudaEvent_t> events_;
};

class CudaExecutor;

class CudaProgram final : public Program {
  public:
    CudaProgram(CompiledPlan plan, CudaExecutor& executor);
    std::span<const float> run(std::span<const int32_t> tokens, std::span<const uint32_t> slots,
                               std::span<const uint32_t> positions) override;
    void set_counting(bool on) override { counting_ = on; }
    const DispatchCounters& counters() const override { return counters_; }
    std::vector<double> instruction_seconds() const override { return instruction_seconds_; }
    uint64_t register_bytes() const override { return arena_.bytes(); }

  private:
    void prepare_rope();
    void enqueue(uint32_t rows, bool capturing); // copies in, every adapter, copies out
    void launch_graph(uint32_t rows);            // captures the step first when needed

    CompiledPlan plan_;
    cudaStream_t stream_;
    std::vector<uint64_t> offset_;
    DeviceBuffer arena_, workspace_, rows_; // rows_: slots then positions, plan.rows each
    DeviceBuffer rope_;                     // the RoPE tables, queue_'s point into it
    CudaQueue queue_;
    PinnedBuffer staging_, logits_; // staging_: tokens, slots, positions
    std::vector<BoundInstruction> bound_;
    StepLimits limits_;
    uint64_t vocab_ = 0;
    bool use_graph_ = false, counting_ = false;
    std::unique_ptr<CudaGraph> graph_;
    bool graph_timed_ = false; // the graph records the timer's events
    std::unique_ptr<InstructionTimer> timer_;
    std::unique_ptr<DeviceMemoryCheck> check_; // with the request's memory checks
    DispatchCounters counters_;
    std::vector<double> instruction_seconds_; // empty until a counted step
};

class CudaExecutor final : public Executor {
  public:
    CudaExecutor(const ExecutionPlan& decode, WeightStore weights, const RunRequest& request,
                 CudaOptions options)
        : options_(options), layout_(request.layout), slots_(request.batch),
          check_memory_(request.check_memory), weight_count_(weights.offset.size()),
          half_(half_weights(decode, request.weight_precision)), states_(decode.states) {
        const std::vector<CudaDeviceInfo> devices = cuda_devices();
        if (devices.empty()) fail(FailureCode::DeviceError, "cuda", cuda_unavailable_reason());
        device_ = describe(devices.front());
        check_cuda(cudaSetDevice(0), "cudaSetDevice");
        check_cuda(cudaFree(nullptr), "CUDA context"); // the context's own memory comes first
        free_at_start_ = free_device_bytes();
        weights_ =
            upload_weights(decode, std::move(weights), half_, weight_offsets_, stream_.get());
        planned_bytes_ += weights_.bytes();
        for (const StateDescriptor& s : decode.states) {
            const uint64_t stride = round_up(s.size_bytes, kStateAlignment);
            DeviceBuffer block(stride * slots_, fmt::format("state block '{}'", s.name));
            // Every slot starts allocated; zero_init as its descriptor asks.
            if (s.zero_init)
                check_cuda(cudaMemsetAsync(block.get(), 0, block.bytes(), stream_.get()),
                           "state zero-fill");
            planned_bytes_ += block.bytes();
            state_blocks_.push_back(std::move(block));
            strides_.push_back(stride);
        }
    }

    std::unique_ptr<Program> load(CompiledPlan plan) override {
        if (plan.plan.states != states_ || plan.plan.weights.size() != weight_count_)
            fail(FailureCode::InvalidArgument, plan.plan.name,
                 "the plan has other weights or state blocks than the run's");
        return std::make_unique<CudaProgram>(std::move(plan), *this);
    }
    std::string device() const override { return device_; }
    DeviceMemory device_memory() const override {
        const uint64_t now = free_device_bytes();
        return {planned_bytes_, free_at_start_ > now ? free_at_start_ - now : 0};
    }
    void account(const DeviceBuffer& buffer) { planned_bytes_ += buffer.bytes(); }
    uint64_t weight_bytes() const override { return weights_.bytes(); }

    cudaStream_t stream() const { return stream_.get(); }
    const CudaOptions& options() const { return options_; }
    RegisterLayout layout() const { return layout_; }
    uint32_t slots() const { return slots_; }
    bool check_memory() const { return check_memory_; }
    const void* weight(WeightRef w) const {
        return static_cast<const char*>(weights_.get()) + weight_offsets_[w.index];
    }
    void* state(uint8_t block) const { return state_blocks_[block].get(); }
    const std::vector<bool>& half() const { return half_; }
    uint64_t stride(uint8_t block) const { return strides_[block]; }

  private:
    CudaOptions options_;
    RegisterLayout layout_;
    uint32_t slots_;
    bool check_memory_;
    std::string device_;
    Stream stream_;
    size_t weight_count_;
    std::vector<bool> half_;               // per weight: stored as f16
    std::vector<uint64_t> weight_offsets_; // bytes into weights_
    std::vector<StateDescriptor> states_;
    DeviceBuffer weights_;
    std::vector<DeviceBuffer> state_blocks_;
    std::vector<uint64_t> strides_;
    uint64_t free_at_start_ = 0, planned_bytes_ = 0;
};

CudaProgram::CudaProgram(CompiledPlan plan, CudaExecutor& executor)
    : plan_(std::move(plan)), stream_(executor.stream()) {
    const ExecutionPlan& p = plan_.plan;
    check_backend_supports(p, cuda_adapters(), cuda_capabilities(), "cuda");
    limits_ = step_limits(p, executor.slots());
    if (limits_.max_seq != 0) {
        const auto params = [&] {
            for (const Instruction& insn : p.instructions)
                if (insn.opcode == Opcode::MultiheadAttention)
                    return param_view<AttentionParams>(p.params[insn.param_block]);
            return AttentionParams{};
        }();
        const uint64_t shared = kernels::attend_shared_bytes(limits_.max_seq, params.head_dim);
        if (!kernels::allow_attend_shared_bytes(shared))
            fail(FailureCode::DeviceError, p.name,
                 fmt::format("attention over {} positions needs {} bytes of shared memory per "
                             "block, more than the device allows",
                             limits_.max_seq, shared));
    }
    const uint64_t guard = executor.check_memory() ? kGuardBytes : 0;
    offset_ = register_offsets(plan_, executor.layout(), guard);
    arena_ = DeviceBuffer(register_arena_bytes(p, offset_, guard), p.name + " registers");
    if (executor.check_memory())
        check_ =
            std::make_unique<DeviceMemoryCheck>(plan_, offset_, static_cast<char*>(arena_.get()));
    workspace_ = DeviceBuffer(plan_workspace_floats(p) * sizeof(float), p.name + " workspace");
    rows_ = DeviceBuffer(2 * uint64_t(p.rows) * sizeof(uint32_t), p.name + " rows");
    prepare_rope();
    for (const DeviceBuffer* b : {&arena_, &workspace_, &rows_, &rope_})
        executor.account(*b);
    staging_ = PinnedBuffer(3 * uint64_t(p.rows) * sizeof(uint32_t), p.name + " staging");
    const RegisterRef logits = p.plan_outputs[0];
    vocab_ = p.registers[logits.id].view.shape[1];
    logits_ = PinnedBuffer(uint64_t(p.rows) * vocab_ * sizeof(float), p.name + " logits");
    use_graph_ = executor.options().graphs && p.mode == PlanMode::Decode;
    bound_ = bind_instructions(
        p, cuda_adapters(), static_cast<char*>(arena_.get()), offset_,
        [&](WeightRef w) { return executor.weight(w); },
        [&](uint8_t block) {
            return StateBinding{executor.state(block), executor.stride(block)};
        });
    mark_half_weights(bound_, p, executor.half());
    if (executor.options().fold && !executor.check_memory()) fold_residual_adds(p, offset_, bound_);
}

// The RoPE tables of every (theta, head size) the plan rotates by, up to its cache length, and
// the queue the adapters find them in. The kernels find a table by theta and head size (what
// GpuAdapters passes), so two rotations that share those but scale differently are refused
// rather than given the wrong table.
void CudaProgram::prepare_rope() {
    RopeTables tables = plan_rope_tables(plan_.plan, limits_.max_seq, "CUDA");
    rope_ = DeviceBuffer(std::max<uint64_t>(tables.values.size(), 1) * sizeof(float),
                         plan_.plan.name + " RoPE tables");
    // On the program's stream, which waits for nothing on the default one (non-blocking).
    if (!tables.values.empty()) {
        check_cuda(cudaMemcpyAsync(rope_.get(), tables.values.data(), rope_.bytes(),
                                   cudaMemcpyHostToDevice, stream_),
                   "RoPE tables upload");
        check_cuda(cudaStreamSynchronize(stream_), "RoPE tables upload");
    }
    queue_.stream = stream_;
    queue_.rope_tables = std::move(tables.tables);
    for (RopeTable& t : queue_.rope_tables)
        t.address += reinterpret_cast<uintptr_t>(rope_.get()); // offsets to device addresses
}

void CudaProgram::enqueue(uint32_t rows, bool capturing) {
    const ExecutionPlan& p = plan_.plan;
    auto* staged = static_cast<uint32_t*>(staging_.get());
    char* base = static_cast<char*>(arena_.get());
    check_cuda(cudaMemcpyAsync(base + offset_[p.plan_inputs[0].id], staged, rows * sizeof(int32_t),
                               cudaMemcpyHostToDevice, stream_),
               "tokens upload");
    check_cuda(cudaMemcpyAsync(rows_.get(), staged + p.rows, 2 * p.rows * sizeof(uint32_t),
                               cudaMemcpyHostToDevice, stream_),
               "rows upload");
    const auto* device_rows = static_cast<const uint32_t*>(rows_.get());
    ExecutionContext ctx;
    ctx.mode = p.mode;
    ctx.rows = rows;
    ctx.slot_of_row = {device_rows, rows};
    ctx.position_of_row = {device_rows + p.rows, rows};
    ctx.workspace = {static_cast<float*>(workspace_.get()), workspace_.bytes() / sizeof(float)};
    ctx.queue = &queue_;
    if (check_) check_->start(stream_);
    for (size_t i = 0; i < bound_.size(); ++i) {
        if (counting_) timer_->mark(i, stream_, capturing);
        if (check_) check_->before(uint32_t(i), stream_);
        bound_[i].fn(ctx, bound_[i].operands);
        if (check_) check_->after(uint32_t(i), stream_);
        check_cuda(cudaGetLastError(), fmt::format("{} instruction {} ({})", p.name, i,
                                                   opcode_name(Opcode(bound_[i].opcode))));
    }
    if (counting_) timer_->mark(bound_.size(), stream_, capturing);
    if (check_) check_->end(stream_);
    check_cuda(cudaMemcpyAsync(logits_.get(), base + offset_[p.plan_outputs[0].id],
                               rows * vocab_ * sizeof(float), cudaMemcpyDeviceToHost, stream_),
               "logits download");
}

std::span<const float> CudaProgram::run(std::span<const int32_t> tokens,
                                        std::span<const uint32_t> slots,
                                        std::span<const uint32_t> positions) {
    const ExecutionPlan& p = plan_.plan;
    check_step(p, limits_, tokens, slots, positions);
    const auto rows = uint32_t(tokens.size());
    auto* staged = static_cast<uint32_t*>(staging_.get());
    std::memcpy(staged, tokens.data(), tokens.size_bytes());
    std::memcpy(staged + p.rows, slots.data(), slots.size_bytes());
    std::memcpy(staged + 2 * p.rows, positions.data(), positions.size_bytes());
    if (counting_ && !timer_) timer_ = std::make_unique<InstructionTimer>(bound_.size());
    const uint64_t before = kernels::kernel_launches();
    const bool graphed = use_graph_ && rows == p.rows;
    if (graphed)
        launch_graph(rows);
    else
        enqueue(rows, false);
    check_cuda(cudaStreamSynchronize(stream_), p.name + " step");
    if (check_) check_->finish();
    if (counting_) {
        instruction_seconds_.resize(bound_.size(), 0.0);
        for (size_t i = 0; i < bound_.size(); ++i) {
            const double seconds = timer_->seconds(i);
            ++counters_.per_opcode[bound_[i].opcode];
            counters_.device_seconds[bound_[i].opcode] += seconds;
            instruction_seconds_[i] += seconds;
        }
        counters_.total += bound_.size();
        counters_.launches += graphed ? 1 : kernels::kernel_launches() - before;
    }
    return {static_cast<const float*>(logits_.get()), rows * vocab_};
}

void CudaProgram::launch_graph(uint32_t rows) {
    // Captured at the first full step, and again when counting was switched since: the graph
    // holds the timer's events only when it was recorded while counting.
    if (!graph_ || graph_timed_ != counting_) {
        graph_ = std::make_unique<CudaGraph>();
        graph_timed_ = counting_;
        check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
                   "cudaStreamBeginCapture");
        enqueue(rows, true);
        check_cuda(cudaStreamEndCapture(stream_, graph_->graph()), "cudaStreamEndCapture");
        graph_->instantiate();
    }
    graph_->launch(stream_);
}

} // namespace

std::unique_ptr<Executor> make_cuda_executor(const ExecutionPlan& decode, WeightStore weights,
                                             const RunRequest& request, CudaOptions options) {
    return std::make_unique<CudaExecutor>(decode, std::move(weights), request, options);
}

ExecutorFactory cuda_executor_factory(CudaOptions options) {
    return [options](const ExecutionPlan& decode, WeightStore weights, const RunRequest& request) {
        return make_cuda_executor(decode, std::move(weights), request, options);
    };
}

RunResult generate(const TransformerConfig& config, const RunRequest& request,
                   const Progress& progress, CudaOptions options) {
    return runtime::generate(config, request, cuda_executor_factory(options), progress);
}

} // namespace tmmu::cuda
