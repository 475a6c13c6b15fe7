// yobx/onnx/ops/control_flow.hpp — If, Loop, Scan: operators whose bodies are graphs.
//
// A rule here asks the walk for its subgraphs' outputs (NodeContext::subgraph, as ONNX's
// GraphInferencer), given the types of the subgraph's inputs, and shapes the node's outputs
// from them; the walk knows no operator, the rules no protobuf.
//   If (1, 11, 13, 16, 19, 21, 23, 24, 25): the branch data propagation takes, else both merged.
//   Loop (1, 11, 13, 16, 19, 21, 23, 24, 25: one rule): carried values merged with their first
//     iteration, scan outputs one axis longer: the trip count where the graph states it (a
//     condition absent, or true and given back true), else a fresh symbol.
//   Scan 8: a batch axis then a sequence axis on the scan inputs; Scan 9 (9, 11, 16, 19, 21, 23, 24, 25):
//     scan_input_axes and scan_output_axes.
#pragma once

#include <yobx/onnx/ops/common.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace yobx::onnx::ops {

using Values = SubgraphInferencer::Outputs;

/// Two shapes a value may have (If's branches, a loop's first and later iterations):
/// a dimension equal in both is kept, else a new symbol; values kept only when identical.
inline TensorInfo merge(const TensorInfo& a, const TensorInfo& b, NodeContext& ctx) {
    TensorInfo out;
    out.elem_type = a.elem_type ? a.elem_type : b.elem_type;
    if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
        Shape s;
        for (std::size_t i = 0; i < a.shape->size(); ++i) {
            const SymInt &x = (*a.shape)[i], &y = (*b.shape)[i];
            s.push_back(x.identical(y) || ctx.env().statically_known_true(x == y) ? x : ctx.fresh("a dimension that differs between branches or iterations"));
        }
        out.shape = std::move(s);
        if (a.values && b.values && a.values->size() == b.values->size()) {
            bool same = true;
            for (std::size_t i = 0; i < a.values->size(); ++i) same = same && (*a.values)[i].identical((*b.values)[i]);
            if (same) out.values = a.values;
        }
    }
    return out;
}

/// If: a condition data propagation knows takes one branch: the other is never run (and may not
/// even be valid for these inputs, as ONNX's own function bodies show); else both branches
/// walked, a dimension equal in both kept.
inline void if_(NodeContext& ctx) {
    if (const auto c = ctx.constant_values(0); c && c->size() == 1) {
        const Values taken = ctx.subgraph((*c)[0] != 0 ? "then_branch" : "else_branch");
        for (std::size_t k = 0; k < ctx.output_count() && k < taken.size(); ++k)
            if (taken[k]) ctx.set_output(k, *taken[k]);
        return;
    }
    const Values a = ctx.subgraph("then_branch");
    const Values b = ctx.subgraph("else_branch");
    for (std::size_t k = 0; k < ctx.output_count() && k < a.size() && k < b.size(); ++k)
        if (a[k] && b[k]) ctx.set_output(k, merge(*a[k], *b[k], ctx));
}

namespace detail {

/// What a Loop's inputs state of its count before the body is walked: 0 iterations when the
/// condition starts false; `max(M, 0)` when the trip count M is known and the condition is absent
/// (a for loop) or starts true (`until_body_says`: if the body gives true again); nullopt else.
struct LoopCount {
    std::optional<SymInt> count;
    bool until_body_says = false;
};
inline LoopCount loop_count(NodeContext& ctx) {
    const bool has_cond = ctx.has_input(1);
    const auto cond = has_cond ? ctx.constant_values(1) : std::nullopt;
    if (cond && cond->size() == 1 && (*cond)[0] == 0) return {SymInt(0), false};
    const std::optional<SymInt> m = ctx.has_input(0) ? ctx.single_value(0) : std::nullopt;
    if (!m || (has_cond && !(cond && cond->size() == 1))) return {};
    return {ctx.simplify(sym_max(*m, SymInt(0))), has_cond};
}

}  // namespace detail

/// Loop: the body sees the iteration number, the condition (true: an iteration runs only then)
/// and the carried values; a carried output is its input merged with the body's (the input itself
/// when no iteration runs), a scan output the body's with the number of iterations first. The
/// number is the trip count when the graph states it: no condition, or a condition that starts
/// true and that the body gives back true whatever the carried values hold (a constant true,
/// the condition passed through); the body is then walked with the carried values' shapes only,
/// so that its answer holds for every iteration. Else a fresh symbol.
inline void loop(NodeContext& ctx) {
    const detail::LoopCount stated = detail::loop_count(ctx);
    Values in{TensorInfo::of(elem::int64, {}), TensorInfo::of(elem::bool_, {}, std::vector<SymInt>{SymInt(1)})};
    for (std::size_t i = 2; i < ctx.input_count(); ++i) {
        const TensorInfo* t = ctx.input(i);
        if (t != nullptr && stated.until_body_says) in.push_back(TensorInfo{t->elem_type, t->shape, std::nullopt, std::nullopt, std::nullopt});
        else in.push_back(t ? std::optional<TensorInfo>(*t) : std::nullopt);
    }
    const Values body = ctx.subgraph("body", in);
    std::optional<SymInt> count = stated.count;
    if (stated.until_body_says) {
        const auto again = !body.empty() && body[0] ? body[0]->constant_values() : std::nullopt;
        if (!(again && again->size() == 1 && (*again)[0] != 0)) count.reset();
    }
    const std::size_t carried = ctx.input_count() >= 2 ? ctx.input_count() - 2 : 0;
    const bool none = count && count->maybe_constant() == 0;
    const SymInt trips = count ? *count : ctx.fresh("Loop: the number of iterations depends on the data");
    for (std::size_t k = 0; k < ctx.output_count() && k + 1 < body.size(); ++k) {
        const auto& b = body[k + 1];
        if (!b) continue;
        const TensorInfo* given = k < carried ? ctx.input(k + 2) : nullptr;
        if (k < carried) {
            ctx.set_output(k, given ? (none ? *given : merge(*given, *b, ctx)) : *b);
        } else if (b->shape) {
            Shape s{trips};
            s.insert(s.end(), b->shape->begin(), b->shape->end());
            ctx.set_output(k, b->elem_type, std::move(s));
        }
    }
}

/// Scan 8: sequence_lens, then state variables [batch, ...], then scan inputs [batch, sequence,
/// ...]; the body sees neither the batch nor the sequence axis.
inline void scan_8(NodeContext& ctx) {
    const auto n_scan = static_cast<std::size_t>(ctx.attr_int("num_scan_inputs", 0));
    const std::size_t n_state = ctx.input_count() >= n_scan + 1 ? ctx.input_count() - n_scan - 1 : 0;
    Values in;
    std::optional<SymInt> batch, steps;
    for (std::size_t i = 1; i < ctx.input_count(); ++i) {
        const TensorInfo* t = ctx.input(i);
        const std::size_t drop = i <= n_state ? 1 : 2;
        if (t == nullptr || !t->shape || t->shape->size() < drop) {
            in.push_back(std::nullopt);
            continue;
        }
        if (!batch) batch = t->shape->at(0);
        if (drop == 2 && !steps) steps = t->shape->at(1);
        TensorInfo slice = *t;
        slice.values.reset();
        slice.shape->erase(slice.shape->begin(), slice.shape->begin() + static_cast<std::ptrdiff_t>(drop));
        in.push_back(std::move(slice));
    }
    const Values body = ctx.subgraph("body", in);
    for (std::size_t k = 0; k < ctx.output_count() && k < body.size(); ++k) {
        if (!body[k] || !body[k]->shape || !batch) continue;
        Shape s{*batch};
        if (k >= n_state) s.push_back(steps ? *steps : ctx.fresh("Scan: the number of iterations is not known"));
        s.insert(s.end(), body[k]->shape->begin(), body[k]->shape->end());
        ctx.set_output(k, body[k]->elem_type, std::move(s));
    }
}

/// Scan 9 and later: state variables then scan inputs; the body sees one slice of each scan
/// input (its scan_input_axes axis removed), a scan output gets the count at its scan_output_axes.
inline void scan(NodeContext& ctx) {
    const auto n_scan = static_cast<std::size_t>(ctx.attr_int("num_scan_inputs", 0));
    const std::size_t n_state = ctx.input_count() >= n_scan ? ctx.input_count() - n_scan : 0;
    const auto axes = ctx.attr_ints("scan_input_axes");
    const auto input_axis = [&](std::size_t i) {
        const std::size_t j = i - n_state;
        return axes && j < axes->size() ? ctx.axis((*axes)[j], static_cast<std::int64_t>(ctx.input(i)->shape->size())) : 0;
    };
    Values in;
    for (std::size_t i = 0; i < ctx.input_count(); ++i) {
        const TensorInfo* t = ctx.input(i);
        if (t == nullptr || i < n_state || !t->shape || t->shape->empty()) {
            in.push_back(t ? std::optional<TensorInfo>(*t) : std::nullopt);
            continue;
        }
        TensorInfo slice = *t;
        slice.values.reset();
        slice.shape->erase(slice.shape->begin() + input_axis(i));
        in.push_back(std::move(slice));
    }
    const Values body = ctx.subgraph("body", in);
    const SymInt steps = [&] {
        for (std::size_t i = n_state; i < ctx.input_count(); ++i)
            if (ctx.input(i) && ctx.input(i)->shape && !ctx.input(i)->shape->empty())
                return ctx.input(i)->shape->at(static_cast<std::size_t>(input_axis(i)));
        return ctx.fresh("Scan: the number of iterations is not known");
    }();
    const auto out_axes = ctx.attr_ints("scan_output_axes");
    for (std::size_t k = 0; k < ctx.output_count() && k < body.size(); ++k) {
        const auto& b = body[k];
        if (!b) continue;
        if (k < n_state) {
            ctx.set_output(k, in[k] ? merge(*in[k], *b, ctx) : *b);
        } else if (b->shape) {
            Shape s = *b->shape;
            const std::size_t j = k - n_state;
            const std::int64_t ax = out_axes && j < out_axes->size() ? ctx.axis((*out_axes)[j], static_cast<std::int64_t>(s.size()) + 1) : 0;
            s.insert(s.begin() + ax, steps);
            ctx.set_output(k, b->elem_type, std::move(s));
        }
    }
}

inline void register_control_flow(OpRegistry& r) {
    r.add("", "If", 1, if_);
    r.add("", "Loop", 1, loop);
    r.add("", "Scan", 8, scan_8);
    r.add("", "Scan", 9, scan);
}

}  // namespace yobx::onnx::ops
