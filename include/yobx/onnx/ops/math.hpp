// yobx/onnx/ops/math.hpp — products, reductions and selections: MatMul, Gemm, Einsum, Reduce*, ArgMax, TopK.
#pragma once

#include <yobx/onnx/ops/common.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yobx::shape {

/// numpy's matmul: a 1-D left operand is a row, a 1-D right operand a column (the
/// added dimension is removed from the result); leading dimensions broadcast
/// through `shape_hooks.infer_size`; the contracted dimensions must be equal
/// (proven, or recorded with ShapeEnv::check).
///   matmul(env, {n, a, k}, {k, m})  is [n, a, m]
///   matmul(env, {k}, {k})           is []
template <class = void>
Shape matmul(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy = BroadcastPolicy::strict,
             source_location where = source_location::current()) {
    if (a.empty() || b.empty())
        detail::fail("MatMul", "operands must have rank >= 1, got shapes " + format_shape(a) + " and " + format_shape(b));
    // a 1-D operand as a matrix; a larger one as it is (not copied)
    const Shape a1 = a.size() == 1 ? Shape{1, a[0]} : Shape{}, b1 = b.size() == 1 ? Shape{b[0], 1} : Shape{};
    const Shape& a2 = a.size() == 1 ? a1 : a;
    const Shape& b2 = b.size() == 1 ? b1 : b;
    const SymInt& ka = a2[a2.size() - 1];
    const SymInt& kb = b2[b2.size() - 2];
    detail::require_equal(
        env, ka, kb, "MatMul",
        [&] {
            return "contracted dimensions differ: " + format_shape(a) + " @ " + format_shape(b) + " contracts " +
                   ka.to_string() + " with " + kb.to_string();
        },
        where);
    Shape out = infer_size(env, Shape(a2.begin(), a2.end() - 2), Shape(b2.begin(), b2.end() - 2), policy, "MatMul", where);
    out.reserve(out.size() + 2);
    if (a.size() > 1) out.push_back(a2[a2.size() - 2]);
    if (b.size() > 1) out.push_back(b2[b2.size() - 1]);
    return out;
}

}  // namespace yobx::shape

namespace yobx::onnx::ops {

/// MatMul, MatMulInteger, QLinearMatMul: numpy's matmul with batch broadcasting.
inline void matmul_at(NodeContext& ctx, std::size_t a, std::size_t b, int out_type) {
    const Shape &x = ctx.shape(a), &y = ctx.shape(b);
    Shape out = guarded(
        ctx, [&] { return shape::matmul(ctx.env(), x, y, ctx.policy(), ctx.where()); },
        [&] {
            // the batch axes one by one: only those the ShapeEnv cannot decide are fresh
            const auto batch = [&](const Shape& s) { return s.size() > 2 ? Shape(s.begin(), s.end() - 2) : Shape{}; };
            Shape o = broadcast_each_axis(ctx, {batch(x), batch(y)}, "MatMul batch broadcast the ShapeEnv could not decide");
            if (x.size() > 1) o.push_back(x[x.size() - 2]);
            if (y.size() > 1) o.push_back(y.back());
            return o;
        });
    ctx.set_output(0, out_type, std::move(out));
}
inline void matmul(NodeContext& ctx) { matmul_at(ctx, 0, 1, ctx.elem_type(0)); }
inline void matmul_integer(NodeContext& ctx) { matmul_at(ctx, 0, 1, elem::int32); }
inline void qlinear_matmul(NodeContext& ctx) { matmul_at(ctx, 0, 3, ctx.has_input(7) ? ctx.elem_type(7) : elem::uint8); }

/// Gemm: [M, N] from A (transA) and B (transB).
inline void gemm(NodeContext& ctx) {
    const Shape &a = ctx.shape(0), &b = ctx.shape(1);
    if (a.size() != 2 || b.size() != 2) ctx.fail("A and B must have rank 2, got " + format_shape(a) + " and " + format_shape(b));
    const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
    ctx.set_output(0, ctx.elem_type(0), {ta ? a[1] : a[0], tb ? b[0] : b[1]});
}

/// Einsum(equation): each letter's size from the inputs, the ellipsis broadcast, the
/// output explicit (`->`) or implicit (the letters seen once, in alphabetical order).
inline void einsum(NodeContext& ctx) {
    std::string eq = ctx.attr_string("equation", "");
    std::string clean;
    for (char c : eq)
        if (c != ' ') clean += c;
    const auto arrow = clean.find("->");
    const std::string lhs = clean.substr(0, arrow);
    std::vector<std::string> terms{""};
    for (char c : lhs) {
        if (c == ',') terms.emplace_back();
        else terms.back() += c;
    }
    if (terms.size() != ctx.input_count()) ctx.fail("equation '" + eq + "' has " + std::to_string(terms.size()) + " operands for " + std::to_string(ctx.input_count()) + " inputs");
    // each term: letters and at most one '...'
    const auto well_formed = [](const std::string& t) {
        const auto dots = t.find("...");
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (dots != std::string::npos && i >= dots && i < dots + 3) continue;
            if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z'))) return false;
        }
        return true;
    };
    for (const auto& t : terms)
        if (!well_formed(t)) ctx.fail("equation '" + eq + "': operand '" + t + "' is not letters with at most one '...'");
    if (arrow != std::string::npos && !well_formed(clean.substr(arrow + 2)))
        ctx.fail("equation '" + eq + "': the output is not letters with at most one '...'");
    std::map<char, SymInt> size;
    std::map<char, int> count;
    std::vector<Shape> ellipses;
    for (std::size_t k = 0; k < terms.size(); ++k) {
        const Shape& s = ctx.shape(k);
        const std::string& t = terms[k];
        const auto dots = t.find("...");
        const std::size_t letters = t.size() - (dots == std::string::npos ? 0 : 3);
        if (letters > s.size() || (dots == std::string::npos && letters != s.size()))
            ctx.fail("operand " + std::to_string(k) + " '" + t + "' does not match the rank of " + format_shape(s));
        const std::size_t ell = s.size() - letters;
        std::size_t dim = 0;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i] == '.') {
                ellipses.emplace_back(s.begin() + static_cast<std::ptrdiff_t>(dim), s.begin() + static_cast<std::ptrdiff_t>(dim + ell));
                dim += ell;
                i += 2;
                continue;
            }
            const SymInt& d = s[dim++];
            ++count[t[i]];
            auto it = size.find(t[i]);
            if (it == size.end()) size.emplace(t[i], d);
            else if (it->second.maybe_constant() == 1) it->second = d;  // a 1 broadcasts
        }
    }
    const Shape ellipsis = ellipses.empty() ? Shape{} : broadcast_shapes(ctx, ellipses);
    std::string rhs;
    if (arrow != std::string::npos) rhs = clean.substr(arrow + 2);
    else {
        if (!ellipses.empty()) rhs = "...";
        for (const auto& [c, n] : count)
            if (n == 1) rhs += c;
    }
    Shape out;
    for (std::size_t i = 0; i < rhs.size(); ++i) {
        if (rhs[i] == '.') {
            out.insert(out.end(), ellipsis.begin(), ellipsis.end());
            i += 2;
            continue;
        }
        const auto it = size.find(rhs[i]);
        if (it == size.end()) ctx.fail("output letter '" + std::string(1, rhs[i]) + "' of '" + eq + "' is in no operand");
        out.push_back(it->second);
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// Reduce* with axes an input whose values are not known: an empty axes input (shape [0])
/// is known to be empty; otherwise the rank still is known, with keepdims (each dim 1 where the
/// input's is 1, else a fresh symbol: reduced or not) or with the axes' count (fresh dims): the
/// output is set then, and `done`.
inline std::optional<std::vector<std::int64_t>> reduce_axes(NodeContext& ctx, const Shape& in, bool keep, int since, bool& done) {
    try {
        return ints_from(ctx, "axes", 1, since);
    } catch (const UnknownInput&) {
        const TensorInfo* a = ctx.input(1);
        const auto count = a && a->shape && a->shape->size() == 1 ? (*a->shape)[0].maybe_constant() : std::nullopt;
        if (count == 0) return std::vector<std::int64_t>{};
        const auto r = static_cast<std::int64_t>(in.size());
        if (!keep && !(count && *count <= r)) throw;
        Shape out;
        const std::string why = std::string(ctx.op_type()) + " with axes whose values are not known";
        for (std::int64_t i = 0; i < (keep ? r : r - *count); ++i)
            out.push_back(keep && in[static_cast<std::size_t>(i)].maybe_constant() == 1 ? SymInt(1) : ctx.fresh(why));
        ctx.set_output(0, ctx.elem_type(0), std::move(out));
        done = true;
        return std::nullopt;
    }
}

/// Reduce*: axes an attribute before opset 13 (ReduceSum) or 18 (the others), an input since;
/// keepdims; noop_with_empty_axes. Values of a 1-D tensor reduced by ReduceProd/Sum/Max/Min are kept.
inline void reduce(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const int since = ctx.op_type() == "ReduceSum" ? 13 : 18;
    const bool keep = ctx.attr_int("keepdims", 1) != 0;
    bool done = false;
    const auto axes = reduce_axes(ctx, in, keep, since, done);
    if (done) return;
    const bool noop = ctx.opset() >= since && ctx.attr_int("noop_with_empty_axes", 0) != 0;
    const auto r = static_cast<std::int64_t>(in.size());
    if ((!axes || axes->empty()) && noop) return ctx.set_output(0, *ctx.input(0));
    std::vector<bool> reduced(in.size(), !axes || axes->empty());
    if (axes)
        for (auto a : *axes) reduced[static_cast<std::size_t>(ctx.axis(a, r))] = true;
    Shape out;
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (!reduced[i]) out.push_back(in[i]);
        else if (keep) out.push_back(1);
    }
    std::optional<std::vector<SymInt>> values;
    const auto* v = ctx.values(0);
    if (v && in.size() == 1 && !(*v)->empty()) {
        const std::string_view op = ctx.op_type();
        SymInt acc = (**v)[0];
        bool known = true;
        for (std::size_t i = 1; i < (*v)->size(); ++i) {
            const SymInt& x = (**v)[i];
            if (op == "ReduceProd") acc = acc * x;
            else if (op == "ReduceSum") acc = acc + x;
            else if (op == "ReduceMax") acc = sym_max(acc, x);
            else if (op == "ReduceMin") acc = sym_min(acc, x);
            else known = false;
        }
        if (known && (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin"))
            values = std::vector<SymInt>{ctx.simplify(acc)};
    }
    ctx.set_output(0, ctx.elem_type(0), std::move(out), std::move(values));
}

/// ArgMax, ArgMin: int64, the axis kept as 1 or dropped.
inline void arg_reduce(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const auto ax = static_cast<std::size_t>(ctx.axis(ctx.attr_int("axis", 0), static_cast<std::int64_t>(in.size())));
    Shape out = in;
    if (ctx.attr_int("keepdims", 1) != 0) out[ax] = 1;
    else out.erase(out.begin() + static_cast<std::ptrdiff_t>(ax));
    ctx.set_output(0, elem::int64, std::move(out));
}

/// TopK: k an attribute before opset 10, an input since; values and int64 indices.
inline void topk(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const auto ax = static_cast<std::size_t>(ctx.axis(ctx.attr_int("axis", -1), static_cast<std::int64_t>(in.size())));
    Shape out = in;
    if (ctx.opset() < 10) out[ax] = ctx.attr_int("k", 0);
    else if (auto v = ctx.single_value(1)) out[ax] = *v;
    else out[ax] = ctx.fresh("TopK with a k that is not known");
    ctx.set_output(1, elem::int64, out);
    ctx.set_output(0, ctx.elem_type(0), std::move(out));
}

/// Det: the batch dimensions.
inline void det(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.size() < 2) ctx.fail("input must have rank >= 2");
    ctx.set_output(0, ctx.elem_type(0), Shape(in.begin(), in.end() - 2));
}

/// The math family in the registry.
inline void register_math(OpRegistry& r) {
    r.add("", "MatMul", 1, matmul);
    r.add("", "MatMulInteger", 10, matmul_integer);
    r.add("", "QLinearMatMul", 10, qlinear_matmul);
    r.add("", "Gemm", 1, gemm);
    r.add("", "Einsum", 12, einsum);
    r.add_all("", {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                   "ReduceLogSumExp", "ReduceSumSquare"},
              1, reduce);
    r.add_all("", {"ArgMax", "ArgMin"}, 1, arg_reduce);
    r.add("", "TopK", 1, topk);
    r.add("", "Det", 11, det);
}

}  // namespace yobx::onnx::ops
