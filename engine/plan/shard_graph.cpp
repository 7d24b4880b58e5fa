#include "plan/shard_graph.h"

#include "core/checked.h"
#include "core/failure.h"
#include "core/units.h"
#include "ir/validate.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <unordered_set>

namespace tmmu {
namespace {

// A tensor's bytes inside the storage of the tensor its view chain ends at (its root).
struct Extent {
    uint64_t begin = 0, end = 0;
};

class Sharder {
  public:
    Sharder(const Graph& g, const ShardSpec& spec) : g_(g), spec_(spec) {}

    ShardedGraph run() {
        out_.graph.name = g_.name;
        out_.graph.tensors.reserve(g_.tensors.size());
        for (const Tensor& t : g_.tensors)
            out_.graph.tensors.push_back(unlinked(t));
        held_ = std::vector<std::optional<Extent>>(g_.tensors.size());
        for (TensorIndex t = 0; t < g_.tensors.size(); ++t)
            cut(t);
        out_.graph.nodes = g_.nodes;
        schedule();
        finalize_graph(out_.graph);
        describe();
        return std::move(out_);
    }

  private:
    // A copy without the fields finalize_graph derives (it refuses a second producer).
    static Tensor unlinked(const Tensor& t) {
        Tensor c = t;
        c.producer = kNone;
        c.consumers.clear();
        c.bytes = 0;
        return c;
    }

    TensorIndex root_of(TensorIndex t) const {
        while (g_.tensors[t].view)
            t = g_.tensors[t].view->base;
        return t;
    }

    // Whether tensor t is cut to the rank's share where it is. Gradients are not: a parameter's
    // gradient gets a shard of its own (reduce_scatter), activation gradients stay whole.
    bool sharded(TensorIndex t) const {
        const Role role = g_.tensors[root_of(t)].role;
        return role != Role::Gradient && spec_.sharded(role);
    }

    // A parameter gradient as the optimizer reads it: the last of its accumulation chain.
    bool optimizer_reads(TensorIndex t) const {
        for (NodeIndex n : g_.tensors[t].consumers)
            if (g_.nodes[n].phase == Phase::Optimizer) return true;
        return false;
    }

    // The bytes of tensor t inside its root, unsharded.
    Extent extent_of(TensorIndex t) const {
        uint64_t begin = 0;
        const uint64_t length = g_.tensors[t].bytes;
        for (; g_.tensors[t].view; t = g_.tensors[t].view->base)
            begin += g_.tensors[t].view->byte_offset;
        return {begin, begin + length};
    }

    // The part of tensor t this rank holds, in its root's unsharded bytes (empty: begin == end).
    // Invariant: held_[t] is set for every sharded tensor once cut(t) returned.
    Extent held_part(TensorIndex t) {
        if (held_[t]) return *held_[t];
        const TensorIndex root = root_of(t);
        const Tensor& r = g_.tensors[root];
        const uint64_t size = dtype_bytes(r.dtype);
        const ShardRange chunk = shard_range(r.bytes / size, spec_);
        const Extent whole = extent_of(t);
        const uint64_t begin = std::max(whole.begin, chunk.begin * size);
        const uint64_t end = std::min(whole.end, chunk.end * size);
        held_[t] = begin < end ? Extent{begin, end} : Extent{begin, begin};
        return *held_[t];
    }

    // Cuts a tensor of a sharded storage to the rank's part: a flat shape of its elements there,
    // and for a view, where that part starts in its base's part.
    void cut(TensorIndex t) {
        if (!sharded(t)) return;
        const Tensor& source = g_.tensors[t];
        Tensor& local = out_.graph.tensors[t];
        const Extent held = held_part(t);
        const uint64_t bytes = held.end - held.begin, size = dtype_bytes(source.dtype);
        if (bytes % size != 0)
            fail(FailureCode::InvalidIrShapes, fmt::format("tensor '{}'.view", source.id),
                 fmt::format("on rank {} of {} this view covers {} bytes of its sharded base, "
                             "not a whole number of its {}-byte elements",
                             spec_.rank, spec_.world_size, bytes, size));
        local.shape = {static_cast<int64_t>(bytes / size)};
        if (!source.view) {
            held_bytes_ = checked_add(held_bytes_, bytes, "sharded tensors' bytes");
            whole_bytes_ = checked_add(whole_bytes_, source.bytes, "sharded tensors' bytes");
            ++cut_tensors_;
            return;
        }
        const Extent base = held_part(source.view->base);
        local.view->byte_offset = bytes == 0 ? 0 : held.begin - base.begin;
        local.view->byte_length = bytes;
    }

    void take_name(std::unordered_set<std::string>& taken, const std::string& name,
                   std::string_view what) {
        if (!taken.insert(name).second)
            fail(FailureCode::InvalidIrShapes, fmt::format("{} '{}'", what, name),
                 "the graph already uses this name, which sharding gives a collective");
    }

    // The model's schedule with the collectives inserted: every forward or backward node
    // reading a sharded parameter (or a view of one) reads a whole copy instead, written by an
    // all_gather just before it; with gradients sharded, every parameter gradient the optimizer
    // reads is reduce-scattered into a shard just after the node completing it, and the
    // optimizer reads the shard.
    void schedule() {
        for (const Tensor& t : out_.graph.tensors)
            tensor_ids_.insert(t.id);
        for (const Node& n : out_.graph.nodes)
            node_ids_.insert(n.id);
        const bool gather_params = spec_.sharded(Role::Parameter);
        const bool scatter_grads = spec_.sharded(Role::Gradient);
        for (NodeIndex n : g_.execution_order) {
            if (gather_params && g_.nodes[n].phase != Phase::Optimizer) {
                std::vector<TensorIndex> read = g_.nodes[n].inputs;
                std::sort(read.begin(), read.end());
                read.erase(std::unique(read.begin(), read.end()), read.end());
                for (TensorIndex t : read)
                    if (sharded(t) && g_.tensors[root_of(t)].role == Role::Parameter) gather(t, n);
            }
            out_.graph.execution_order.push_back(n);
            if (!scatter_grads) continue;
            for (TensorIndex t : g_.nodes[n].outputs)
                if (g_.tensors[t].role == Role::Gradient && !g_.tensors[t].view &&
                    optimizer_reads(t))
                    reduce_scatter(t, n);
        }
    }

    // Appends a collective node writing `output` from `input`, next in the schedule.
    void add_collective(const char* opcode, std::string id, TensorIndex input, Tensor output,
                        Phase phase) {
        Graph& out = out_.graph;
        take_name(tensor_ids_, output.id, "tensor");
        take_name(node_ids_, id, "node");
        const auto written = static_cast<TensorIndex>(out.tensors.size());
        out.tensors.push_back(std::move(output));
        Node node;
        node.id = std::move(id);
        node.opcode = opcode;
        node.inputs = {input};
        node.outputs = {written};
        node.phase = phase;
        out.execution_order.push_back(static_cast<NodeIndex>(out.nodes.size()));
        out.nodes.push_back(std::move(node));
    }

    void reduce_scatter(TensorIndex t, NodeIndex producer) {
        const Tensor& source = g_.tensors[t];
        const uint64_t size = dtype_bytes(source.dtype);
        const ShardRange chunk = shard_range(source.bytes / size, spec_);
        Tensor shard;
        shard.id = source.id + "@shard";
        shard.name = source.name + " (shard)";
        shard.shape = {static_cast<int64_t>(chunk.end - chunk.begin)};
        shard.dtype = source.dtype;
        shard.role = Role::Gradient;
        const auto written = static_cast<TensorIndex>(out_.graph.tensors.size());
        add_collective("reduce_scatter", "reduce_scatter:" + source.id, t, std::move(shard),
                       g_.nodes[producer].phase);
        for (NodeIndex reader : source.consumers)
            if (g_.nodes[reader].phase == Phase::Optimizer) {
                std::vector<TensorIndex>& inputs = out_.graph.nodes[reader].inputs;
                std::replace(inputs.begin(), inputs.end(), t, written);
            }
        ++scatters_;
        ++cut_tensors_;
        scattered_bytes_ = checked_add(scattered_bytes_, source.bytes, "scattered bytes");
        held_bytes_ = checked_add(held_bytes_, (chunk.end - chunk.begin) * size, "held bytes");
        whole_bytes_ = checked_add(whole_bytes_, source.bytes, "sharded tensors' bytes");
    }

    void gather(TensorIndex t, NodeIndex reader) {
        const Tensor& source = g_.tensors[t];
        const Node& node = g_.nodes[reader];
        Tensor whole;
        whole.id = fmt::format("{}@gathered:{}", source.id, node.id);
        whole.name = fmt::format("{} (gathered for {} {})", source.name, node.opcode, node.id);
        whole.shape = source.shape;
        whole.dtype = source.dtype;
        whole.role = Role::Workspace;
        const auto copy = static_cast<TensorIndex>(out_.graph.tensors.size());
        add_collective("all_gather", fmt::format("all_gather:{}@{}", source.id, node.id), t,
                       std::move(whole), node.phase);
        std::vector<TensorIndex>& inputs = out_.graph.nodes[reader].inputs;
        std::replace(inputs.begin(), inputs.end(), t, copy);
        ++gathers_;
        gathered_bytes_ = checked_add(gathered_bytes_, source.bytes, "gathered bytes");
    }

    void describe() {
        out_.notes.push_back(
            fmt::format("{}: {} cut to this rank's share, {} of their {} held here",
                        describe_shard_spec(spec_), count_of(cut_tensors_, "tensor"),
                        format_bytes(held_bytes_), format_bytes(whole_bytes_)));
        if (gathers_ != 0)
            out_.notes.push_back(fmt::format(
                "{} of sharded parameters before their forward and backward readers ({} in "
                "all, each live from its gather to its reader)",
                count_of(gathers_, "all_gather"), format_bytes(gathered_bytes_)));
        if (scatters_ != 0)
            out_.notes.push_back(fmt::format(
                "{} of parameter gradients into this rank's shards right after each is complete "
                "({} whole, each live until its reduce_scatter); activation gradients stay "
                "whole",
                count_of(scatters_, "reduce_scatter"), format_bytes(scattered_bytes_)));
    }

    const Graph& g_;
    const ShardSpec& spec_;
    ShardedGraph out_;
    std::vector<std::optional<Extent>> held_;
    std::unordered_set<std::string> tensor_ids_, node_ids_; // taken names, collectives' included
    uint64_t cut_tensors_ = 0, held_bytes_ = 0, whole_bytes_ = 0, gathers_ = 0, gathered_bytes_ = 0,
             scatters_ = 0, scattered_bytes_ = 0;
};

} // namespace

ShardedGraph shard_graph(const Graph& g, const ShardSpec& spec) {
    return Sharder(g, spec).run();
}

} // namespace tmmu
