#include "plan/shard_graph.h"

#include "core/failure.h"
#include "core/units.h"
#include "ir/validate.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace tmmu {
namespace {

// Bytes [begin, end) of a storage: a tensor's in its group's storage, or the rank's chunk.
struct Extent {
    uint64_t begin = 0, end = 0;
};

// The notes' byte sums: a figure, not a size anything is placed at, so they saturate.
uint64_t add_saturating(uint64_t a, uint64_t b) {
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// Tensors that share bytes (views and their bases, alias groups, in-place writes and their
// targets) are cut as one storage, the way liveness will lay them out: every non-view member
// starts at byte 0, a view at its base's start plus its offset. The storage is cut into
// world_size chunks of whole units, a unit being the largest element among its non-view
// members, so every non-view member keeps whole elements. A group is cut only when all its
// non-view members have a role that is cut: a storage cannot be both a shard and whole.
struct StorageGroup {
    TensorIndex anchor = kNone; // the largest non-view member (ties: the lowest index)
    uint64_t unit = 1;          // bytes
    bool cut = true;
    Extent chunk; // the rank's part of the storage's bytes (when cut)
};

class Sharder {
  public:
    Sharder(const Graph& g, const ShardSpec& spec, Mode mode) : g_(g), spec_(spec), mode_(mode) {}

    ShardedGraph run() {
        out_.graph.name = g_.name;
        for (const Tensor& t : g_.tensors)
            out_.graph.tensors.push_back(unlinked(t));
        out_.graph.nodes = g_.nodes;
        group_storages();
        for (TensorIndex t = 0; t < g_.tensors.size(); ++t)
            if (groups_[group_of(t)].cut) cut(t);
        for (TensorIndex t = 0; t < g_.tensors.size(); ++t)
            if (groups_[group_of(t)].cut) keep_pin(t);
        schedule();
        finalize_graph(out_.graph);
        describe();
        return std::move(out_);
    }

  private:
    // A copy without the fields finalize_graph derives (it refuses a second producer). A rank's
    // graph has the shapes of the model's binding: its cut tensors are flat byte ranges of the
    // tensors there, which follow no dimension (a run over iterations shards the model again at
    // each replan's binding).
    static Tensor unlinked(const Tensor& t) {
        Tensor c = t;
        c.shape_dims.clear();
        c.producer = kNone;
        c.consumers.clear();
        c.bytes = 0;
        return c;
    }

    bool runs(NodeIndex n) const {
        return mode_ == Mode::Training || g_.nodes[n].phase == Phase::Forward;
    }

    // Whether this mode's schedule touches tensor t (what the notes count).
    bool used(TensorIndex t) const {
        const Tensor& tensor = g_.tensors[t];
        if (tensor.producer != kNone) return runs(tensor.producer);
        return std::any_of(tensor.consumers.begin(), tensor.consumers.end(),
                           [&](NodeIndex n) { return runs(n); });
    }

    bool role_cut(Role r) const { return r != Role::Gradient && spec_.sharded(r); }

    TensorIndex root_of(TensorIndex t) const {
        while (g_.tensors[t].view)
            t = g_.tensors[t].view->base;
        return t;
    }

    uint32_t group_of(TensorIndex t) const { return group_index_[t]; }

    TensorIndex find(TensorIndex t) {
        while (parent_[t] != t)
            t = parent_[t] = parent_[parent_[t]];
        return t;
    }

    void unite(TensorIndex a, TensorIndex b) { parent_[find(a)] = find(b); }

    void group_storages() {
        const size_t n = g_.tensors.size();
        parent_.resize(n);
        std::iota(parent_.begin(), parent_.end(), TensorIndex{0});
        std::unordered_map<std::string_view, TensorIndex> alias_first;
        for (TensorIndex t = 0; t < n; ++t) {
            const Tensor& tensor = g_.tensors[t];
            if (tensor.view) unite(t, tensor.view->base);
            if (tensor.in_place_of != kNone) unite(t, tensor.in_place_of);
            if (!tensor.alias_group.empty())
                unite(t, alias_first.try_emplace(tensor.alias_group, t).first->second);
        }
        group_index_.assign(n, 0);
        std::unordered_map<TensorIndex, uint32_t> index_of_root;
        for (TensorIndex t = 0; t < n; ++t) {
            auto [it, added] = index_of_root.try_emplace(find(t), uint32_t(groups_.size()));
            if (added) groups_.emplace_back();
            group_index_[t] = it->second;
        }
        for (TensorIndex t = 0; t < n; ++t)
            join_group(t);
        for (TensorIndex t = 0; t < n; ++t)
            if (!groups_[group_of(t)].cut && role_cut(g_.tensors[t].role) && used(t)) ++kept_whole_;
        for (StorageGroup& group : groups_)
            if (group.cut) group.chunk = chunk_of(group);
    }

    void join_group(TensorIndex t) {
        const Tensor& tensor = g_.tensors[t];
        if (tensor.view) return;
        StorageGroup& group = groups_[group_of(t)];
        group.cut = group.cut && role_cut(tensor.role);
        group.unit = std::max(group.unit, dtype_bytes(tensor.dtype));
        if (group.anchor == kNone || tensor.bytes > g_.tensors[group.anchor].bytes)
            group.anchor = t;
    }

    Extent chunk_of(const StorageGroup& group) const {
        const uint64_t bytes = g_.tensors[group.anchor].bytes, unit = group.unit;
        const ShardRange units = shard_range(bytes / unit + (bytes % unit != 0), spec_);
        // units.end * unit may pass `bytes` (the last unit is partial), never 2^64: bytes fits.
        const auto clamp = [&](uint64_t u) { return u > bytes / unit ? bytes : u * unit; };
        return {clamp(units.begin), clamp(units.end)};
    }

    Extent extent_of(TensorIndex t) const {
        uint64_t begin = 0;
        const uint64_t length = g_.tensors[t].bytes;
        for (; g_.tensors[t].view; t = g_.tensors[t].view->base)
            begin += g_.tensors[t].view->byte_offset;
        return {begin, begin + length};
    }

    // The part of tensor t this rank holds, in its storage's unsharded bytes.
    Extent held_part(TensorIndex t) {
        const Extent chunk = groups_[group_of(t)].chunk;
        const Extent whole = extent_of(t);
        const uint64_t begin = std::clamp(whole.begin, chunk.begin, chunk.end);
        return {begin, std::max(begin, std::min(whole.end, chunk.end))};
    }

    // A tensor of a cut storage becomes a flat shape of its elements on this rank, and a view
    // starts where its part starts in its base's part.
    void cut(TensorIndex t) {
        const Tensor& source = g_.tensors[t];
        // A rank's part of a flat-cut storage is one byte range; a strided view's elements are
        // spread over its span, so no part of it is a shape of its own.
        if (source.view && !source.view->strides.empty())
            fail(FailureCode::InvalidArgument, fmt::format("tensor '{}'.view", source.id),
                 fmt::format("a strided view cannot be cut flat across {} ranks; leave the {} "
                             "role unsharded, or make the view contiguous",
                             spec_.world_size, role_name(source.role)));
        Tensor& local = out_.graph.tensors[t];
        const Extent held = held_part(t);
        const uint64_t bytes = held.end - held.begin, size = dtype_bytes(source.dtype);
        if (bytes % size != 0)
            fail(FailureCode::InvalidIrShapes, fmt::format("tensor '{}'.view", source.id),
                 fmt::format("on rank {} of {} this view covers {} bytes of its sharded base, "
                             "not a whole number of its {}-byte elements",
                             spec_.rank, spec_.world_size, bytes, size));
        local.shape = {elements(bytes / size, source)};
        if (source.view) {
            local.view->byte_offset =
                bytes == 0 ? 0 : held.begin - held_part(source.view->base).begin;
            local.view->byte_length = bytes;
        } else if (used(t)) {
            held_bytes_ = add_saturating(held_bytes_, bytes);
            whole_bytes_ = add_saturating(whole_bytes_, source.bytes);
            ++cut_tensors_;
        }
    }

    static int64_t elements(uint64_t n, const Tensor& t) {
        if (n > uint64_t(std::numeric_limits<int64_t>::max()))
            fail(FailureCode::AllocationOverflow, fmt::format("tensor '{}'.shape", t.id),
                 fmt::format("a shard of {} elements is more than a dimension holds", n));
        return int64_t(n);
    }

    // A pinned view keeps its storage where the model pins it: its own pin moves with its
    // offset inside the storage.
    void keep_pin(TensorIndex t) {
        const Tensor& source = g_.tensors[t];
        if (!source.view || !source.pinned_offset) return;
        const uint64_t before = extent_of(t).begin;
        uint64_t after = 0;
        for (TensorIndex v = t; out_.graph.tensors[v].view; v = out_.graph.tensors[v].view->base)
            after += out_.graph.tensors[v].view->byte_offset;
        if (*source.pinned_offset >= before)
            out_.graph.tensors[t].pinned_offset = *source.pinned_offset - before + after;
    }

    void take_name(std::unordered_set<std::string>& taken, const std::string& name,
                   std::string_view what) {
        if (!taken.insert(name).second)
            fail(FailureCode::InvalidIrShapes, fmt::format("{} '{}'", what, name),
                 "the graph already uses this name, which sharding gives a collective");
    }

    // The model's schedule with the collectives inserted for the nodes this mode runs: an
    // all_gather before each forward or backward node reading a cut parameter, a reduce_scatter
    // after each node completing a parameter gradient the optimizer reads.
    void schedule() {
        for (const Tensor& t : out_.graph.tensors)
            tensor_ids_.insert(t.id);
        for (const Node& n : out_.graph.nodes)
            node_ids_.insert(n.id);
        for (NodeIndex n : g_.execution_order) {
            if (runs(n) && spec_.sharded(Role::Parameter)) gather_inputs(n);
            out_.graph.execution_order.push_back(n);
            if (!runs(n) || !spec_.sharded(Role::Gradient)) continue;
            for (TensorIndex t : g_.nodes[n].outputs)
                if (g_.nodes[n].phase != Phase::Optimizer && parameter_gradient(t))
                    reduce_scatter(t, n);
        }
    }

    // A node writing over one of its inputs in place updates the shard it reads (as the
    // optimizer does), and a node whose outputs are all views computes nothing: neither
    // needs a whole copy. A node reading a parameter and views of it (a fused weight and its
    // splits) gathers the parameter once and reads the views inside that copy, as FSDP gathers
    // a flat parameter once per use.
    void gather_inputs(NodeIndex n) {
        const Node& node = g_.nodes[n];
        if (node.phase == Phase::Optimizer) return;
        const auto is_view = [&](TensorIndex o) { return g_.tensors[o].view.has_value(); };
        if (!node.outputs.empty() && std::all_of(node.outputs.begin(), node.outputs.end(), is_view))
            return;
        std::vector<TensorIndex> read = node.inputs;
        std::sort(read.begin(), read.end());
        read.erase(std::unique(read.begin(), read.end()), read.end());
        std::erase_if(read, [&](TensorIndex t) {
            const bool overwritten =
                std::any_of(node.outputs.begin(), node.outputs.end(),
                            [&](TensorIndex o) { return g_.tensors[o].in_place_of == t; });
            return overwritten || !groups_[group_of(t)].cut ||
                   g_.tensors[root_of(t)].role != Role::Parameter;
        });
        // In the order of the inputs' indices, as before views were read in copies: a root is
        // gathered when it or a view of it comes first.
        std::unordered_map<TensorIndex, TensorIndex> copies; // a read root -> its whole copy
        for (TensorIndex t : read)
            if (!g_.tensors[t].view) copies.emplace(t, kNone);
        const auto copy_of = [&](TensorIndex root) {
            TensorIndex& copy = copies.at(root);
            if (copy == kNone) copy = gather(root, n);
            return copy;
        };
        for (TensorIndex t : read) {
            if (!g_.tensors[t].view)
                copy_of(t);
            else if (copies.count(root_of(t)))
                view_in_copy(t, copy_of(root_of(t)), n);
            else
                gather(t, n);
        }
    }

    // A gradient the optimizer reads, computed before it. One the optimizer updates in place
    // (clipping, say) stays whole, as the update reads and writes it whole.
    bool parameter_gradient(TensorIndex t) {
        const Tensor& tensor = g_.tensors[t];
        if (tensor.role != Role::Gradient || tensor.view) return false;
        bool read = false;
        for (NodeIndex n : tensor.consumers) {
            if (g_.nodes[n].phase != Phase::Optimizer || !runs(n)) continue;
            read = true;
            for (TensorIndex o : g_.nodes[n].outputs)
                if (g_.tensors[o].in_place_of == t) {
                    ++kept_whole_;
                    return false;
                }
        }
        return read;
    }

    // Appends a collective node writing `output` from `input`, next in the schedule, and
    // returns the output's index.
    TensorIndex add_collective(const char* opcode, std::string id, TensorIndex input, Tensor output,
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
        return written;
    }

    // Tensor t whole for `reader`: "<t>@gathered:<reader>", a workspace tensor.
    Tensor gathered_copy_of(TensorIndex t, NodeIndex reader) const {
        const Tensor& source = g_.tensors[t];
        const Node& node = g_.nodes[reader];
        Tensor whole;
        whole.id = fmt::format("{}@gathered:{}", source.id, node.id);
        whole.name = fmt::format("{} (gathered for {} {})", source.name, node.opcode, node.id);
        whole.shape = source.shape;
        whole.dtype = source.dtype;
        whole.role = Role::Workspace;
        whole.alignment = source.alignment;
        return whole;
    }

    void read_instead(NodeIndex reader, TensorIndex t, TensorIndex copy) {
        std::vector<TensorIndex>& inputs = out_.graph.nodes[reader].inputs;
        std::replace(inputs.begin(), inputs.end(), t, copy);
    }

    // An all_gather writing t whole for `reader`, which reads the copy instead of t. Returns the
    // copy's index.
    TensorIndex gather(TensorIndex t, NodeIndex reader) {
        const Node& node = g_.nodes[reader];
        const TensorIndex copy =
            add_collective("all_gather", fmt::format("all_gather:{}@{}", g_.tensors[t].id, node.id),
                           t, gathered_copy_of(t, reader), node.phase);
        read_instead(reader, t, copy);
        ++gathers_;
        gathered_bytes_ = add_saturating(gathered_bytes_, g_.tensors[t].bytes);
        return copy;
    }

    // View t of a parameter whose whole copy the reader already gathers: the same bytes of the
    // copy (t's offset in its storage; contiguous, as cut() refuses strided views of a cut
    // storage), with no collective of its own. The all_gather writing the copy writes the view
    // too, as a slice writes a view of its input.
    void view_in_copy(TensorIndex t, TensorIndex copy, NodeIndex reader) {
        Tensor view = gathered_copy_of(t, reader);
        view.view = ViewDesc{copy, extent_of(t).begin, g_.tensors[t].view->byte_length, {}};
        take_name(tensor_ids_, view.id, "tensor");
        const auto index = static_cast<TensorIndex>(out_.graph.tensors.size());
        out_.graph.tensors.push_back(std::move(view));
        std::vector<Node>& nodes = out_.graph.nodes; // collectives write one tensor each
        std::find_if(nodes.rbegin(), nodes.rend(), [&](const Node& n) {
            return n.outputs.front() == copy;
        })->outputs.push_back(index);
        read_instead(reader, t, index);
        ++views_in_copies_;
    }

    void reduce_scatter(TensorIndex t, NodeIndex producer) {
        const Tensor& source = g_.tensors[t];
        const uint64_t size = dtype_bytes(source.dtype);
        const ShardRange chunk = shard_range(source.bytes / size, spec_);
        Tensor shard;
        shard.id = source.id + "@shard";
        shard.name = source.name + " (shard)";
        shard.shape = {elements(chunk.end - chunk.begin, source)};
        shard.dtype = source.dtype;
        shard.role = Role::Gradient;
        shard.alignment = source.alignment;
        const TensorIndex written = add_collective("reduce_scatter", "reduce_scatter:" + source.id,
                                                   t, std::move(shard), g_.nodes[producer].phase);
        for (NodeIndex reader : source.consumers)
            if (g_.nodes[reader].phase == Phase::Optimizer) {
                std::vector<TensorIndex>& inputs = out_.graph.nodes[reader].inputs;
                std::replace(inputs.begin(), inputs.end(), t, written);
            }
        ++scatters_;
        ++cut_tensors_;
        scattered_bytes_ = add_saturating(scattered_bytes_, source.bytes);
        held_bytes_ = add_saturating(held_bytes_, (chunk.end - chunk.begin) * size);
        whole_bytes_ = add_saturating(whole_bytes_, source.bytes);
    }

    void describe() {
        out_.notes.push_back(
            fmt::format("{}: {} cut to this rank's share, {} of their {} held here",
                        describe_shard_spec(spec_), count_of(cut_tensors_, "tensor"),
                        format_bytes(held_bytes_), format_bytes(whole_bytes_)));
        const auto note_if_any = [&](uint64_t count, std::string note) {
            if (count != 0) out_.notes.push_back(std::move(note));
        };
        note_if_any(gathers_,
                    fmt::format("{} of sharded parameters before their forward and "
                                "backward readers ({} in all, each live from its "
                                "gather to its reader){}",
                                count_of(gathers_, "all_gather"), format_bytes(gathered_bytes_),
                                views_in_copies_ == 0
                                    ? std::string()
                                    : fmt::format("; {} read inside the copy of the parameter "
                                                  "their reader also reads",
                                                  count_of(views_in_copies_, "view"))));
        note_if_any(scatters_,
                    fmt::format("{} of parameter gradients into this rank's shards right after "
                                "each is complete ({} whole, each freed after its reduce_scatter "
                                "unless a later node reads it); activation gradients stay whole",
                                count_of(scatters_, "reduce_scatter"),
                                format_bytes(scattered_bytes_)));
        note_if_any(kept_whole_,
                    fmt::format("{} of sharded roles kept whole: they share bytes with tensors "
                                "that are not cut (views, alias groups, in-place writes), or the "
                                "optimizer updates them in place",
                                count_of(kept_whole_, "tensor")));
    }

    const Graph& g_;
    const ShardSpec& spec_;
    const Mode mode_;
    ShardedGraph out_;
    std::vector<TensorIndex> parent_;   // union-find over tensors sharing bytes
    std::vector<uint32_t> group_index_; // per tensor: its group's index in groups_
    std::vector<StorageGroup> groups_;
    std::unordered_set<std::string> tensor_ids_, node_ids_; // taken names, collectives' included
    uint64_t cut_tensors_ = 0, held_bytes_ = 0, whole_bytes_ = 0, gathers_ = 0, gathered_bytes_ = 0,
             views_in_copies_ = 0, scatters_ = 0, scattered_bytes_ = 0, kept_whole_ = 0;
};

} // namespace

ShardedGraph shard_graph(const Graph& g, const ShardSpec& spec, Mode mode) {
    return Sharder(g, spec, mode).run();
}

} // namespace tmmu
