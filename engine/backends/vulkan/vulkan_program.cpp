#include "backends/vulkan/vulkan_program.h"

#include "backends/vulkan/vulkan_commands.h"
#include "backends/vulkan/vulkan_context.h"
#include "backends/vulkan/vulkan_kernels.h"
#include "backends/vulkan/vulkan_memory_check.h"
#include "core/failure.h"
#include "runtime/adapter_check.h"
#include "runtime/adapter_memory.h"
#include "runtime/generate.h"
#include "runtime/gpu_adapters.h"
#include "runtime/physical_mapping.h"
#include "runtime/rope.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace tmmu::vulkan {

using namespace tmmu::runtime;

namespace {

constexpr uint64_t kStateAlignment = 256;

uint64_t round_up(uint64_t bytes, uint64_t to) {
    return (bytes + to - 1) / to * to;
}

const AdapterCapabilities& vulkan_capabilities() {
    static const AdapterCapabilities caps = uniform_capabilities({true, false, 0});
    return caps;
}

template <class T>
T* device_pointer(uint64_t address) {
    return reinterpret_cast<T*>(static_cast<uintptr_t>(address));
}

class VulkanExecutor;

class VulkanProgram final : public Program {
  public:
    VulkanProgram(CompiledPlan plan, VulkanExecutor& executor);
    std::span<const float> run(std::span<const int32_t> tokens, std::span<const uint32_t> slots,
                               std::span<const uint32_t> positions) override;
    void set_counting(bool on) override { counting_ = on; }
    const DispatchCounters& counters() const override { return counters_; }
    std::vector<double> instruction_seconds() const override { return instruction_seconds_; }
    uint64_t register_bytes() const override { return arena_.bytes(); }

  private:
    void prepare_attention(VulkanContext& context);
    void record(uint32_t rows);

    CompiledPlan plan_;
    VulkanExecutor& executor_;
    std::vector<uint64_t> offset_;
    Buffer arena_, workspace_, rows_, scores_, rope_;
    Buffer staging_, logits_; // host: tokens, slots, positions; the logits read back
    std::vector<runtime::RopeTable> rope_tables_;
    std::vector<BoundInstruction> bound_;
    StepLimits limits_;
    uint64_t vocab_ = 0;
    CommandBuffer commands_;
    std::unique_ptr<QueryPool> timestamps_;
    std::unique_ptr<DeviceMemoryCheck> check_; // with the request's memory checks
    bool recorded_ = false, recorded_counting_ = false, counting_ = false;
    uint32_t recorded_rows_ = 0;
    DispatchCounters counters_;
    std::vector<double> instruction_seconds_; // empty until a counted step with timestamps
};

class VulkanExecutor final : public Executor {
  public:
    VulkanExecutor(const ExecutionPlan& decode, WeightStore weights, const RunRequest& request)
        : layout_(request.layout), slots_(request.batch), check_memory_(request.check_memory),
          weight_count_(weights.offset.size()), states_(decode.states) {
        context_ = VulkanContext::open();
        pipelines_ = std::make_unique<Pipelines>(*context_);
        in_use_at_start_ = context_->memory_in_use();
        upload_weights(decode, std::move(weights), request.weight_precision);
        for (const StateDescriptor& s : decode.states) {
            const uint64_t stride = round_up(s.size_bytes, kStateAlignment);
            Buffer block(*context_, stride * slots_, MemoryKind::Device,
                         fmt::format("state block '{}'", s.name));
            if (s.zero_init) zero(block);
            account(block);
            state_blocks_.push_back(std::move(block));
            strides_.push_back(stride);
        }
    }

    std::unique_ptr<Program> load(CompiledPlan plan) override {
        if (plan.plan.states != states_ || plan.plan.weights.size() != weight_count_)
            fail(FailureCode::InvalidArgument, plan.plan.name,
                 "the plan has other weights or state blocks than the run's");
        return std::make_unique<VulkanProgram>(std::move(plan), *this);
    }
    std::string device() const override { return context_->description(); }
    DeviceMemory device_memory() const override {
        const uint64_t now = context_->memory_in_use();
        return {planned_bytes_, now > in_use_at_start_ ? now - in_use_at_start_ : 0};
    }
    void account(const Buffer& buffer) { planned_bytes_ += buffer.bytes(); }
    uint64_t weight_bytes() const override {
        uint64_t bytes = 0;
        for (const Buffer& chunk : weight_chunks_)
            bytes += chunk.bytes();
        return bytes;
    }

    VulkanContext& context() { return *context_; }
    const Pipelines& pipelines() const { return *pipelines_; }
    RegisterLayout layout() const { return layout_; }
    uint32_t slots() const { return slots_; }
    bool check_memory() const { return check_memory_; }
    const void* weight(WeightRef w) const {
        return device_pointer<const void>(weight_at_[w.index]);
    }
    void* state(uint8_t block) const {
        return device_pointer<void>(state_blocks_[block].address());
    }
    uint64_t stride(uint8_t block) const { return strides_[block]; }
    const std::vector<bool>& half() const { return half_; } // per weight: stored as f16

  private:
    // The weights packed as the run's precision asks ([in, out] matrices transposed first),
    // in as few buffers as the device's allocation limit allows: runs of consecutive weights.
    void upload_weights(const ExecutionPlan& plan, WeightStore weights, WeightPrecision precision) {
        if (precision == WeightPrecision::F16 && !context_->half_storage())
            fail(FailureCode::DeviceError, "f16 weights",
                 context_->description() + " has no 16-bit storage buffers "
                                           "(storageBuffer16BitAccess): run with f32 weights");
        transpose_conv1d_weights(plan, weights);
        half_ = half_weights(plan, precision);
        const PackedWeights packed = pack_weights(plan, weights, half_);
        const size_t n = packed.offset.size();
        const auto end = [&](size_t w) {
            return w + 1 < n ? packed.offset[w + 1] : uint64_t(packed.bytes.size());
        };
        weight_at_.assign(n, 0);
        for (size_t i = 0; i < n;) {
            const uint64_t start = packed.offset[i];
            size_t j = i + 1;
            while (j < n && end(j) - start <= context_->max_allocation_bytes())
                ++j;
            Buffer chunk(*context_, end(j - 1) - start, MemoryKind::Device,
                         plan.weights[i].name + " and the weights after it");
            upload(*context_, packed.bytes.data() + start, chunk.bytes(), chunk, 0, "weights");
            for (size_t k = i; k < j; ++k)
                weight_at_[k] = chunk.address() + (packed.offset[k] - start);
            account(chunk);
            weight_chunks_.push_back(std::move(chunk));
            i = j;
        }
    }

    void zero(const Buffer& buffer) {
        CommandBuffer commands(*context_);
        commands.begin();
        context_->fn().vkCmdFillBuffer(commands.get(), buffer.handle(), 0, VK_WHOLE_SIZE, 0);
        commands.end();
        context_->submit_and_wait(commands.get(), "state zero-fill");
    }

    RegisterLayout layout_;
    uint32_t slots_;
    bool check_memory_;
    size_t weight_count_;
    std::vector<StateDescriptor> states_;
    std::unique_ptr<VulkanContext> context_;
    std::unique_ptr<Pipelines> pipelines_;
    std::vector<Buffer> weight_chunks_, state_blocks_;
    std::vector<uint64_t> weight_at_, strides_;
    std::vector<bool> half_;
    uint64_t in_use_at_start_ = 0, planned_bytes_ = 0;
};

VulkanProgram::VulkanProgram(CompiledPlan plan, VulkanExecutor& executor)
    : plan_(std::move(plan)), executor_(executor), commands_(executor.context()) {
    const ExecutionPlan& p = plan_.plan;
    VulkanContext& context = executor.context();
    check_backend_supports(p, vulkan_adapters(), vulkan_capabilities(), "vulkan");
    limits_ = step_limits(p, executor.slots());
    const uint64_t guard = executor.check_memory() ? kGuardBytes : 0;
    offset_ = register_offsets(plan_, executor.layout(), guard);
    arena_ = Buffer(context, register_arena_bytes(p, offset_, guard), MemoryKind::Device,
                    p.name + " registers");
    if (executor.check_memory())
        check_ = std::make_unique<DeviceMemoryCheck>(context, plan_, offset_, arena_);
    workspace_ = Buffer(context, std::max<uint64_t>(plan_workspace_floats(p), 1) * sizeof(float),
                        MemoryKind::Device, p.name + " workspace");
    rows_ = Buffer(context, 2 * uint64_t(p.rows) * sizeof(uint32_t), MemoryKind::Device,
                   p.name + " rows");
    prepare_attention(context);
    for (const Buffer* b : {&arena_, &workspace_, &rows_, &scores_, &rope_})
        executor.account(*b);
    staging_ = Buffer(context, 3 * uint64_t(p.rows) * sizeof(uint32_t), MemoryKind::Host,
                      p.name + " staging");
    const RegisterRef logits = p.plan_outputs[0];
    vocab_ = p.registers[logits.id].view.shape[1];
    logits_ = Buffer(context, uint64_t(p.rows) * vocab_ * sizeof(float), MemoryKind::Host,
                     p.name + " logits");
    bound_ = bind_instructions(
        p, vulkan_adapters(), device_pointer<char>(arena_.address()), offset_,
        [&](WeightRef w) { return executor.weight(w); },
        [&](uint8_t block) {
            return StateBinding{executor.state(block), executor.stride(block)};
        });
    mark_half_weights(bound_, p, executor.half());
}

// Attention's scores buffer (the most any attention instruction needs at the plan's rows)
// and the RoPE tables of every (theta, head size) the plan rotates by, up to its cache length.
// The kernels find a table by theta and head size (what GpuAdapters passes), so two rotations
// that share those but scale differently are refused rather than given the wrong table.
void VulkanProgram::prepare_attention(VulkanContext& context) {
    const ExecutionPlan& p = plan_.plan;
    uint64_t scores = 1;
    for (const Instruction& insn : p.instructions) {
        if (insn.opcode != Opcode::MultiheadAttention) continue;
        const auto a = param_view<AttentionParams>(p.params[insn.param_block]);
        if (a.head_dim > kMaxHeadDim || a.head_dim % 2 != 0)
            fail(FailureCode::DeviceError, p.name,
                 fmt::format("attention heads of {} values: the Vulkan kernels take even head "
                             "sizes up to {}",
                             a.head_dim, kMaxHeadDim));
        scores = std::max(scores, uint64_t(p.rows) * a.n_heads * limits_.max_seq);
    }
    scores_ = Buffer(context, scores * sizeof(float), MemoryKind::Device, p.name + " scores");
    RopeTables tables = plan_rope_tables(p, limits_.max_seq, "Vulkan");
    rope_ = Buffer(context, std::max<uint64_t>(tables.values.size(), 1) * sizeof(float),
                   MemoryKind::Device, p.name + " RoPE tables");
    if (!tables.values.empty())
        upload(context, tables.values.data(), tables.values.size() * sizeof(float), rope_, 0,
               "RoPE tables");
    rope_tables_ = std::move(tables.tables);
    for (RopeTable& t : rope_tables_)
        t.address += rope_.address(); // from offsets in `values` to device addresses
}

void VulkanProgram::record(uint32_t rows) {
    const ExecutionPlan& p = plan_.plan;
    VulkanContext& context = executor_.context();
    const uint32_t instructions = uint32_t(bound_.size());
    if (counting_ && context.timestamp_bits() > 0 && !timestamps_)
        timestamps_ = std::make_unique<QueryPool>(context, instructions + 1);
    const bool timed = counting_ && timestamps_;
    commands_.begin();
    commands_.copy(staging_, 0, arena_, offset_[p.plan_inputs[0].id], rows * sizeof(int32_t));
    commands_.copy(staging_, p.rows * sizeof(uint32_t), rows_, 0, 2 * p.rows * sizeof(uint32_t));
    commands_.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    const VulkanFns& fn = context.fn();
    if (timed) fn.vkCmdResetQueryPool(commands_.get(), timestamps_->get(), 0, instructions + 1);
    Recorder recorder(context, executor_.pipelines(), commands_.get());
    recorder.scores = scores_.address();
    recorder.scores_floats = scores_.bytes() / sizeof(float);
    recorder.rope_tables = rope_tables_;
    const auto* device_rows = device_pointer<const uint32_t>(rows_.address());
    ExecutionContext ctx;
    ctx.mode = p.mode;
    ctx.rows = rows;
    ctx.slot_of_row = {device_rows, rows};
    ctx.position_of_row = {device_rows + p.rows, rows};
    ctx.workspace = {device_pointer<float>(workspace_.address()),
                     workspace_.bytes() / sizeof(float)};
    ctx.queue = &recorder;
    if (check_) check_->start(commands_, recorder);
    for (uint32_t i = 0; i <= instructions; ++i) {
        if (timed)
            fn.vkCmdWriteTimestamp(commands_.get(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                                   timestamps_->get(), i);
        if (i == instructions) break;
        if (check_) check_->before(i, commands_, recorder);
        bound_[i].fn(ctx, bound_[i].operands);
        if (check_) check_->after(i, commands_, recorder);
    }
    commands_.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    commands_.copy(arena_, offset_[p.plan_outputs[0].id], logits_, 0,
                   rows * vocab_ * sizeof(float));
    commands_.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    commands_.end();
    recorded_ = true;
    recorded_rows_ = rows;
    recorded_counting_ = counting_;
}

std::span<const float> VulkanProgram::run(std::span<const int32_t> tokens,
                                          std::span<const uint32_t> slots,
                                          std::span<const uint32_t> positions) {
    const ExecutionPlan& p = plan_.plan;
    check_step(p, limits_, tokens, slots, positions);
    const auto rows = uint32_t(tokens.size());
    auto* staged = static_cast<uint32_t*>(staging_.mapped());
    std::memcpy(staged, tokens.data(), tokens.size_bytes());
    std::memcpy(staged + p.rows, slots.data(), slots.size_bytes());
    std::memcpy(staged + 2 * p.rows, positions.data(), positions.size_bytes());
    if (!recorded_ || recorded_rows_ != rows || recorded_counting_ != counting_) record(rows);
    executor_.context().submit_and_wait(commands_.get(), p.name + " step");
    if (check_) check_->finish();
    if (counting_) {
        const std::vector<double> seconds =
            timestamps_ ? timestamps_->intervals() : std::vector<double>(bound_.size(), 0.0);
        if (timestamps_) instruction_seconds_.resize(bound_.size(), 0.0);
        for (size_t i = 0; i < bound_.size(); ++i) {
            ++counters_.per_opcode[bound_[i].opcode];
            counters_.device_seconds[bound_[i].opcode] += seconds[i];
            if (timestamps_) instruction_seconds_[i] += seconds[i];
        }
        counters_.total += bound_.size();
        ++counters_.launches; // one submission per step, whatever it holds
    }
    return {static_cast<const float*>(logits_.mapped()), rows * vocab_};
}

} // namespace

const AdapterTable& vulkan_adapters() {
    return GpuAdapters<VulkanKernels>::table;
}

std::unique_ptr<Executor> make_vulkan_executor(const ExecutionPlan& decode, WeightStore weights,
                                               const RunRequest& request) {
    return std::make_unique<VulkanExecutor>(decode, std::move(weights), request);
}

RunResult generate(const TransformerConfig& config, const RunRequest& request,
                   const Progress& progress) {
    return runtime::generate(config, request, make_vulkan_executor, progress);
}

} // namespace tmmu::vulkan
