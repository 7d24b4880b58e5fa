// Fusion inside compiled regions (seed 004, 15.1-15.4): which elementwise nodes of a staged body
// run as one kernel, and that kernel. Outside compiled regions nothing comes here (section 7).
#include "lazy/compiled.h"
#include "lazy/engine_state.h"
#include "lazy/kernels.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tmmu::lazy {

BodyFacts body_facts(const std::vector<Node>& body, const std::map<ValueId, Value>& values) {
    BodyFacts f;
    for (uint32_t k = 0; k < body.size(); ++k) {
        for (ValueId v : body[k].inputs)
            f.readers[v].push_back(k);
        for (ValueId v : body[k].outputs)
            f.position[v] = k;
    }
    // Every holder of a value is a reader's input or something outside the body (a base, a
    // saved slot, a returned tensor): refs beyond the body's own reads mean it escapes.
    for (const auto& [v, k] : f.position) {
        const Value& val = values.at(v);
        const auto it = f.readers.find(v);
        const size_t inside = it == f.readers.end() ? 0 : it->second.size();
        if (!val.token && val.refs > inside) f.escaping.insert(v);
    }
    return f;
}

namespace {

// Whether an op can be a fused group's member. RandUniform cannot: a draw is a fusion barrier
// (15.4).
bool fusible(Op op) {
    return is_elementwise(op);
}

bool is_literal(const Node& n) {
    return n.op == Op::Constant && n.data.size() == 1;
}

int vector_width(const Shape& shape) {
    const int64_t inner = shape.empty() ? 1 : shape.back();
    return inner % 4 == 0 ? 4 : inner % 2 == 0 ? 2 : 1;
}

class GroupBuilder {
  public:
    GroupBuilder(const std::vector<Node>& body, const std::map<ValueId, Value>& values,
                 const BodyFacts& facts)
        : body_(body), values_(values), facts_(facts), group_(body.size(), -1) {}

    std::vector<FusedGroup> build() {
        absorb_producers();
        merge_shared_subexpressions();
        return finish();
    }

  private:
    const std::vector<Node>& body_;
    const std::map<ValueId, Value>& values_;
    const BodyFacts& facts_;
    std::vector<int32_t> group_;
    std::vector<std::vector<uint32_t>> members_;
    std::vector<Shape> shape_;

    const Shape& shape_of(uint32_t k) const { return values_.at(body_[k].outputs[0]).shape; }
    bool all_readers_in(ValueId v, int32_t g) const {
        const auto it = facts_.readers.find(v);
        return it != facts_.readers.end() &&
               std::all_of(it->second.begin(), it->second.end(),
                           [&](uint32_t r) { return group_[r] == g; });
    }

    // 15.1, consumers first: a producer joins its consumer's group when nothing else reads
    // its value, so only a group's root leaves it. Producers come before their readers in the
    // body, so a group's root is its last member.
    void absorb_producers() {
        for (uint32_t k = static_cast<uint32_t>(body_.size()); k-- > 0;) {
            if (!fusible(body_[k].op)) continue;
            if (group_[k] < 0) {
                group_[k] = static_cast<int32_t>(members_.size());
                members_.push_back({k});
                shape_.push_back(shape_of(k));
            }
            const int32_t g = group_[k];
            for (ValueId v : body_[k].inputs) {
                const auto p = facts_.position.find(v);
                if (p == facts_.position.end()) continue;
                const uint32_t pk = p->second;
                const Node& pn = body_[pk];
                const bool joins = (fusible(pn.op) && shape_of(pk) == shape_[g]) || is_literal(pn);
                if (!joins || group_[pk] >= 0 || facts_.escaping.count(v) || !all_readers_in(v, g))
                    continue;
                group_[pk] = g;
                members_[g].push_back(pk);
            }
        }
    }

    // 15.2: a group whose root is read only by two or more other groups of its shape merges
    // with them into one kernel computing it once, when every output of the merged group is
    // read only after the merged group's position (never by one of its members).
    void merge_shared_subexpressions() {
        for (size_t s = 0; s < members_.size(); ++s) {
            if (members_[s].empty()) continue;
            const uint32_t root = *std::max_element(members_[s].begin(), members_[s].end());
            const ValueId v = body_[root].outputs[0];
            const auto it = facts_.readers.find(v);
            if (facts_.escaping.count(v) || it == facts_.readers.end()) continue;
            std::set<int32_t> readers;
            for (uint32_t r : it->second)
                readers.insert(group_[r]);
            if (readers.size() < 2 || readers.count(-1) || readers.count(static_cast<int32_t>(s)))
                continue;
            if (std::any_of(readers.begin(), readers.end(),
                            [&](int32_t g) { return shape_[g] != shape_[s]; }))
                continue;
            std::vector<int32_t> merged(readers.begin(), readers.end());
            merged.push_back(static_cast<int32_t>(s));
            if (outputs_read_late(merged)) merge(merged);
        }
    }

    bool outputs_read_late(const std::vector<int32_t>& merged) const {
        uint32_t position = 0;
        std::set<uint32_t> all;
        for (int32_t g : merged)
            for (uint32_t k : members_[g]) {
                position = std::max(position, k);
                all.insert(k);
            }
        for (uint32_t k : all) {
            const auto it = facts_.readers.find(body_[k].outputs[0]);
            if (it == facts_.readers.end()) continue;
            const bool mixed = std::any_of(it->second.begin(), it->second.end(),
                                           [&](uint32_t r) { return !all.count(r); });
            if (!mixed) continue; // read by members only: stays inside
            for (uint32_t r : it->second)
                if (all.count(r) || r <= position) return false;
        }
        return true;
    }

    void merge(const std::vector<int32_t>& merged) {
        const int32_t into = merged.back();
        for (int32_t g : merged) {
            if (g == into) continue;
            for (uint32_t k : members_[g])
                group_[k] = into;
            members_[into].insert(members_[into].end(), members_[g].begin(), members_[g].end());
            members_[g].clear();
        }
    }

    // Groups of two or more members, in order of position; their outputs are the members read
    // outside the group or escaping the body.
    std::vector<FusedGroup> finish() {
        std::vector<FusedGroup> out;
        for (size_t g = 0; g < members_.size(); ++g) {
            if (members_[g].size() < 2) continue;
            FusedGroup fg;
            fg.members = members_[g];
            std::sort(fg.members.begin(), fg.members.end());
            fg.position = fg.members.back();
            fg.shape = shape_[g];
            fg.vector_width = vector_width(fg.shape);
            for (uint32_t k : fg.members) {
                const ValueId v = body_[k].outputs[0];
                if (!all_readers_in(v, static_cast<int32_t>(g)) || facts_.escaping.count(v))
                    fg.outputs.push_back(k);
            }
            out.push_back(std::move(fg));
        }
        std::sort(out.begin(), out.end(),
                  [](const FusedGroup& a, const FusedGroup& b) { return a.position < b.position; });
        return out;
    }
};

// One operand of a fused member: another member's register, or an input read through an index
// (none when the input has the group's shape, the lane's own element; a one-element input
// reads element 0; else its broadcast index).
struct Operand {
    int32_t member = -1; // register of this member, or -1
    std::span<const float> data;
    std::vector<int64_t> index;
    bool scalar = false;
};

struct Step {
    Op op = Op::Add;
    std::vector<Operand> operands;
    float literal = 0;
    bool is_literal = false;
};

// Runs `steps` over every element, `Width` lanes at a time (15.3): each step's lanes are one
// loop the compiler can vectorize; the arithmetic per element is the unfused kernels'.
template <int Width>
void evaluate(const std::vector<Step>& steps, int64_t count,
              const std::vector<std::pair<size_t, std::span<float>>>& outputs) {
    std::vector<float> regs(steps.size() * Width);
    const auto load = [&](const Operand& o, int64_t i, int lane) {
        if (o.member >= 0) return regs[static_cast<size_t>(o.member) * Width + lane];
        if (o.scalar) return o.data[0];
        const int64_t j = o.index.empty() ? i + lane : o.index[static_cast<size_t>(i + lane)];
        return o.data[static_cast<size_t>(j)];
    };
    for (int64_t i = 0; i < count; i += Width) {
        for (size_t s = 0; s < steps.size(); ++s) {
            const Step& st = steps[s];
            for (int lane = 0; lane < Width; ++lane) {
                float a = st.literal, b = 0;
                if (!st.is_literal) {
                    a = load(st.operands[0], i, lane);
                    b = st.operands.size() > 1 ? load(st.operands[1], i, lane) : 0.0f;
                    a = elementwise(st.op, a, b);
                }
                regs[s * Width + lane] = a;
            }
        }
        for (const auto& [s, out] : outputs)
            for (int lane = 0; lane < Width; ++lane)
                out[static_cast<size_t>(i + lane)] = regs[s * Width + lane];
    }
}

} // namespace

std::vector<FusedGroup> fusion_groups(const std::vector<Node>& body,
                                      const std::map<ValueId, Value>& values,
                                      const BodyFacts& facts) {
    return GroupBuilder(body, values, facts).build();
}

void EngineState::run_fused(CompiledCallRec& call, const FusedGroup& g, const EventKey& key) {
    current_key = key.text();
    std::map<ValueId, int32_t> reg;
    for (size_t s = 0; s < g.members.size(); ++s)
        reg[call.body[g.members[s]].outputs[0]] = static_cast<int32_t>(s);
    TraceEvent e;
    e.plan = current_plan;
    e.key = current_key;
    e.kind = EventKind::Op;
    e.op = "fused";
    std::vector<Step> steps;
    std::vector<std::string> ops;
    for (uint32_t k : g.members) {
        const Node& n = call.body[k];
        Step st;
        st.op = n.op;
        st.is_literal = n.op == Op::Constant;
        if (st.is_literal) st.literal = n.data[0];
        ops.emplace_back(op_name(n.op));
        for (ValueId v : n.inputs) {
            Operand o;
            if (const auto r = reg.find(v); r != reg.end()) {
                o.member = r->second;
            } else {
                const Value& val = values.at(v);
                o.data = pool.span(val.storage);
                o.scalar = element_count(val.shape) == 1;
                if (!o.scalar && val.shape != g.shape)
                    o.index = broadcast_index(val.shape, g.shape);
                if (std::find(e.values_in.begin(), e.values_in.end(), v) == e.values_in.end()) {
                    e.values_in.push_back(v);
                    e.data_from.push_back(val.event);
                }
            }
            st.operands.push_back(std::move(o));
        }
        steps.push_back(std::move(st));
    }
    std::vector<std::pair<size_t, std::span<float>>> outputs;
    std::vector<std::string> placed; // outputs in the call's region arena
    for (uint32_t k : g.outputs) {
        const ValueId v = call.body[k].outputs[0];
        const StorageId id = acquire_output(v);
        outputs.emplace_back(static_cast<size_t>(reg.at(v)), pool.span(id));
        e.values_out.push_back(v);
        if (e.storage == kNone) e.storage = static_cast<int64_t>(id);
        e.bytes += pool.at(id).bytes;
        if (std::string at = arena_part_at(id); !at.empty()) placed.push_back(std::move(at));
    }
    const int64_t count = element_count(g.shape);
    if (g.vector_width == 4)
        evaluate<4>(steps, count, outputs);
    else if (g.vector_width == 2)
        evaluate<2>(steps, count, outputs);
    else
        evaluate<1>(steps, count, outputs);
    e.detail = fmt::format("{} ops in one kernel ({}), {}", g.members.size(), fmt::join(ops, ", "),
                           g.vector_width > 1 ? fmt::format("vec{}", g.vector_width) : "scalar");
    if (!placed.empty()) e.detail += fmt::format(", outputs {}", fmt::join(placed, "; "));
    ++kernels;
    ++fused_groups;
    fused_ops += g.members.size();
    const uint64_t index = record(std::move(e));
    for (ValueId v : trace.events[index].values_out) {
        Value& val = values.at(v);
        val.ready = true;
        val.event = static_cast<int64_t>(index);
    }
    for (uint32_t k : g.members) {
        Node& n = call.body[k];
        n.done = true;
        for (ValueId in : n.inputs)
            drop(in);
    }
    for (ValueId v : trace.events[index].values_out)
        release_if_unread(v);
}

} // namespace tmmu::lazy
