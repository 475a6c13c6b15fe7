// yobx/onnx/ops/generator.hpp — operators that make tensors: Constant, ConstantOfShape, Range, OneHot, EyeLike, Random*.
//
// Their sizes come from attributes or from the values data propagation knows
// (ConstantOfShape(Shape(x)) has x's shape; Range(0, n, 1) has n elements).
#pragma once

#include <yobx/onnx/ops/common.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yobx::onnx::ops {

/// Constant: its value attribute (a tensor, or value_int(s), value_float(s)), values included.
inline void constant(NodeContext& ctx) {
    if (const Attribute* a = ctx.attribute("value"); a && a->tensor) return ctx.set_output(0, *a->tensor);
    if (const Attribute* a = ctx.attribute("value_int")) return ctx.set_output(0, elem::int64, {}, std::vector<SymInt>{a->i});
    if (const Attribute* a = ctx.attribute("value_ints")) {
        const auto n = static_cast<std::int64_t>(a->ints.size());  // before the move: arguments have no order
        return ctx.set_output(0, elem::int64, {n}, std::vector<SymInt>(a->ints.begin(), a->ints.end()));
    }
    if (const Attribute* a = ctx.attribute("value_float")) {
        return ctx.set_output(0, TensorInfo{elem::float32, Shape{}, std::nullopt, std::vector<double>{a->f}, std::nullopt});
    }
    if (const Attribute* a = ctx.attribute("value_floats")) {
        return ctx.set_output(0, TensorInfo{elem::float32, Shape{static_cast<std::int64_t>(a->floats.size())}, std::nullopt, a->floats, std::nullopt});
    }
    if (ctx.attribute("value_string")) return ctx.set_output(0, elem::string, {});
    if (const Attribute* a = ctx.attribute("value_strings"))
        return ctx.set_output(0, elem::string, {static_cast<std::int64_t>(a->strings.size())});
    if (ctx.attribute("sparse_value")) throw UnknownInput{"a sparse constant"};
    ctx.fail("no value attribute");
}

/// ConstantOfShape: the shape from input 0's values, the type and fill from `value` (float 0 by default).
inline void constant_of_shape(NodeContext& ctx) {
    const Shape& s = ctx.shape(0);
    int type = elem::float32;
    std::optional<SymInt> fill = SymInt(0);
    if (const Attribute* a = ctx.attribute("value"); a && a->tensor) {
        type = a->tensor->elem_type;
        fill.reset();
        if (auto c = a->tensor->constant_values(); c && c->size() == 1) fill = SymInt((*c)[0]);
    }
    Shape out;
    if (const auto* v = ctx.values(0)) {
        for (const auto& d : **v) {
            if (const auto c = d.maybe_constant(); c && *c < 0) ctx.fail("negative dimension " + std::to_string(*c) + " in the shape " + format_shape(**v));
            out.push_back(d);
        }
    } else {
        if (s.size() != 1 || !s[0].maybe_constant()) throw UnknownInput{"the rank of the output is not known"};
        for (std::int64_t i = 0; i < ctx.output_rank(*s[0].maybe_constant()); ++i) out.push_back(ctx.fresh("ConstantOfShape of a shape whose values are not known"));
    }
    std::optional<std::vector<SymInt>> values;
    if (fill && out.size() <= 1) {
        const auto n = out.empty() ? std::optional<std::int64_t>(1) : out[0].maybe_constant();
        if (n && *n <= SymTensor::max_values) values = std::vector<SymInt>(static_cast<std::size_t>(*n), *fill);
    }
    ctx.set_output(0, type, std::move(out), std::move(values));
}

/// Range(start, limit, delta): max(ceil((limit - start) / delta), 0) elements; the values when short and constant.
inline void range(NodeContext& ctx) {
    const int type = ctx.elem_type(0);
    SymInt n;
    const auto* s = ctx.values(0);
    const auto* l = ctx.values(1);
    const auto* d = ctx.values(2);
    const auto rs = ctx.real_values(0), rl = ctx.real_values(1), rd = ctx.real_values(2);
    if (s && l && d && (*s)->size() == 1 && (*l)->size() == 1 && (*d)->size() == 1 && (**d)[0].maybe_constant()) {
        const std::int64_t step = *(**d)[0].maybe_constant();
        if (step == 0) ctx.fail("delta is 0");
        const SymInt span = ctx.simplify((**l)[0] - (**s)[0]);
        const SymInt count = step > 0 ? ceil_div(span, step) : ceil_div(-span, -step);
        n = ctx.simplify(ctx.env().statically_known_true(count >= 0) ? count : sym_max(count, 0));
    } else if (rs && rl && rd && rs->size() == 1 && rl->size() == 1 && rd->size() == 1) {
        if ((*rd)[0] == 0) ctx.fail("delta is 0");
        const double c = std::ceil(((*rl)[0] - (*rs)[0]) / (*rd)[0]);
        n = c > 0 ? static_cast<std::int64_t>(c) : 0;
    } else {
        n = ctx.fresh("Range with bounds that are not known");
    }
    std::optional<std::vector<SymInt>> values;
    if (const auto c = n.maybe_constant(); c && *c <= SymTensor::max_values && s && d) {
        values.emplace();
        for (std::int64_t i = 0; i < *c; ++i) values->push_back(ctx.simplify((**s)[0] + (**d)[0] * i));
    }
    ctx.set_output(0, type, {n}, std::move(values));
}

/// OneHot(indices, depth, values): the indices' shape with depth inserted at axis.
inline void one_hot(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    const auto r = static_cast<std::int64_t>(in.size()) + 1;
    const std::int64_t ax = ctx.axis(ctx.attr_int("axis", -1), r);
    SymInt depth;
    if (auto v = ctx.single_value(1)) depth = *v;
    else if (auto f = ctx.real_values(1); f && f->size() == 1) depth = static_cast<std::int64_t>((*f)[0]);
    else depth = ctx.fresh("OneHot with a depth that is not known");
    Shape out = in;
    out.insert(out.begin() + ax, depth);
    ctx.set_output(0, ctx.elem_type(2), std::move(out));
}

/// EyeLike: the input's shape, dtype from the attribute or the input.
inline void eye_like(NodeContext& ctx) {
    ctx.set_output(0, static_cast<int>(ctx.attr_int("dtype", ctx.elem_type(0))), ctx.shape(0));
}

/// RandomNormal, RandomUniform: shape and dtype (float by default) from attributes.
inline void random(NodeContext& ctx) {
    const auto s = ctx.attr_ints("shape");
    if (!s) ctx.fail("attribute 'shape' is required");
    ctx.set_output(0, static_cast<int>(ctx.attr_int("dtype", elem::float32)), Shape(s->begin(), s->end()));
}
/// RandomNormalLike, RandomUniformLike, Bernoulli: the input's shape, dtype from the attribute or the input.
inline void random_like(NodeContext& ctx) {
    ctx.set_output(0, static_cast<int>(ctx.attr_int("dtype", ctx.elem_type(0))), ctx.shape(0));
}
/// Multinomial: [batch, sample_size], int32 by default.
inline void multinomial(NodeContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.size() != 2) ctx.fail("input must have rank 2");
    ctx.set_output(0, static_cast<int>(ctx.attr_int("dtype", elem::int32)), {in[0], ctx.attr_int("sample_size", 1)});
}

/// The generator family in the registry.
inline void register_generator(OpRegistry& r) {
    r.add("", "Constant", 1, constant);
    r.add("", "ConstantOfShape", 9, constant_of_shape);
    r.add("", "Range", 11, range);
    r.add("", "OneHot", 9, one_hot);
    r.add("", "EyeLike", 9, eye_like);
    r.add_all("", {"RandomNormal", "RandomUniform"}, 1, random);
    r.add_all("", {"RandomNormalLike", "RandomUniformLike", "Bernoulli"}, 1, random_like);
    r.add("", "Multinomial", 7, multinomial);
}

}  // namespace yobx::onnx::ops
