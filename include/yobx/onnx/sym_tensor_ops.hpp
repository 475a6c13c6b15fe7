// yobx/onnx/sym_tensor_ops.hpp — ShapeInference: ONNX operators on SymTensors.
//
// Each method runs the operator's rule from the registry's families (yobx/onnx/ops/), the
// same function the ONNX walk runs for a node of the newest opset yobx knows, through a
// NodeContext: its shapes and, for shape tensors, the partial data propagation of the
// ONNX proposal (the values of Shape, Gather, Concat... are computed, symbolically), so
// that `Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))` is [a, b*c] and not a
// shape of unknowns. What cannot be expressed (NonZero's count, a Reshape to values
// nobody knows) gets a fresh symbol `unk__N` per dimension; the rank is always kept.
//
// What this header adds to the rules is the typed API's own contract: the dtypes an
// operator's schema requires (the walk leaves them to ONNX's checker) and the inputs that
// decide a rank (a shape of constant length), checked before the rule runs.
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/dtype.hpp>
#include <yobx/error.hpp>
#include <yobx/onnx/elem_type.hpp>
#include <yobx/onnx/node_context.hpp>
#include <yobx/onnx/ops/elementwise.hpp>
#include <yobx/onnx/ops/indexing.hpp>
#include <yobx/onnx/ops/math.hpp>
#include <yobx/onnx/ops/reshaping.hpp>
#include <yobx/shape/rules.hpp>
#include <yobx/shape/sym_tensor.hpp>
#include <yobx/sym.hpp>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <tuple>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// Runs ONNX operators on SymTensors with one ShapeEnv and one broadcast policy.
///
///   ShapeEnv env;
///   ShapeInference si(env);
///   SymTensor x({env.create_symbol("a", 2, ValueRange::at_least(1)), 3, 4}, DType::float32);
///   SymTensor shape = si.concat({si.unsqueeze(si.gather(si.shape(x), SymTensor::scalar(0)), {0}),
///                                SymTensor::from_values({-1})}, 0);
///   si.reshape(x, shape).shape()   // [a, 12]
///
/// Methods that may ask the ShapeEnv a question take a source_location, reported with it.
class ShapeInference {
public:
    /// The opset whose rules the methods run: the newest yobx knows.
    static constexpr int opset = onnx::max_known_opset;

    explicit ShapeInference(ShapeEnv& env, BroadcastPolicy policy = BroadcastPolicy::strict) noexcept
        : env_(&env), policy_(policy) {}

    ShapeEnv& env() const noexcept { return *env_; }
    BroadcastPolicy policy() const noexcept { return policy_; }

    /// Elementwise Add, Sub, Mul with broadcasting; the inputs' dtypes must match.
    /// Values of shape tensors are computed: [a, b] + [1, 1] has values [a + 1, b + 1].
    template <class = void>
    SymTensor add(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Add", onnx::ops::add, a, b, where);
    }
    template <class = void>
    SymTensor sub(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Sub", onnx::ops::sub, a, b, where);
    }
    template <class = void>
    SymTensor mul(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Mul", onnx::ops::mul, a, b, where);
    }
    /// Integer division truncates toward zero, as ONNX Runtime does. A symbolic quotient is
    /// `x//y` when x >= 0 and y > 0 are proven or y divides x exactly; other values (a
    /// quotient of unknown sign, a division by zero) are left unknown.
    template <class = void>
    SymTensor div(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Div", onnx::ops::div, a, b, where);
    }

    /// Any elementwise unary operator (Relu, Neg, Exp...): same shape and dtype; values are not propagated.
    template <class = void>
    SymTensor unary(const SymTensor& x) const {
        return run("Relu", onnx::ops::same_as_input, {&x});
    }
    /// Identity: the same tensor, values included.
    template <class = void>
    SymTensor identity(const SymTensor& x) const {
        return run("Identity", onnx::ops::identity, {&x});
    }

    /// Cast to `to`. Values survive a cast to an integer type that holds them.
    template <class = void>
    SymTensor cast(const SymTensor& x, DType to) const {
        return run("Cast", onnx::ops::cast, {&x}, attributes(cast_slot, {{"to", int_attr(onnx::elem_type_of(to))}}));
    }

    /// Concat along `axis`; values are concatenated when every input has them.
    template <class = void>
    SymTensor concat(std::span<const SymTensor> inputs, std::int64_t axis, source_location where = source_location::current()) {
        std::vector<const SymTensor*> tensors;
        for (const auto& t : inputs) tensors.push_back(&t);
        same_dtype("Concat", tensors);
        return run("Concat", onnx::ops::concat, tensors, attributes(concat_slot, {{"axis", int_attr(axis)}}), where);
    }
    template <class = void>
    SymTensor concat(std::initializer_list<SymTensor> inputs, std::int64_t axis, source_location where = source_location::current()) {
        return concat(std::span<const SymTensor>(inputs.begin(), inputs.size()), axis, where);
    }

    /// Gather along `axis`. Constant indices are checked against a constant
    /// dimension; the values of a 1-D shape tensor are gathered.
    template <class = void>
    SymTensor gather(const SymTensor& data, const SymTensor& indices, std::int64_t axis = 0) const {
        require_integer("Gather", "indices", indices);
        return run("Gather", onnx::ops::gather, {&data, &indices}, attributes(gather_slot, {{"axis", int_attr(axis)}}));
    }

    /// Reshape to the values of `target` (a 1-D integer tensor of constant length).
    /// Unknown values give a fresh symbol per output dimension, except for a
    /// 1-D result, which holds every element of x whatever the values.
    template <class = void>
    SymTensor reshape(const SymTensor& x, const SymTensor& target, bool allowzero = false,
                      source_location where = source_location::current()) {
        shape_input_length("Reshape", "shape", target);
        return run("Reshape", onnx::ops::reshape, {&x, &target}, attributes(reshape_slot, {{"allowzero", int_attr(allowzero ? 1 : 0)}}), where);
    }

    /// Slice with `starts` and `ends` given as 1-D integer tensors (their values,
    /// possibly symbolic), constant `axes` and `steps`. Unknown starts or ends give
    /// a fresh symbol for each sliced dimension.
    template <class = void>
    SymTensor slice(const SymTensor& x, const SymTensor& starts, const SymTensor& ends,
                    std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                    std::optional<std::vector<std::int64_t>> steps = std::nullopt,
                    source_location where = source_location::current()) {
        shape_input_length("Slice", "starts", starts);
        shape_input_length("Slice", "ends", ends);
        const std::optional<SymTensor> a = ints_input(axes), s = ints_input(steps);
        return run("Slice", onnx::ops::slice, {&x, &starts, &ends, a ? &*a : nullptr, s ? &*s : nullptr}, no_attributes(), where);
    }

    /// Squeeze `axes` (or every dimension equal to 1); values are kept.
    template <class = void>
    SymTensor squeeze(const SymTensor& x, std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                      source_location where = source_location::current()) {
        const std::optional<SymTensor> a = ints_input(axes);
        return run("Squeeze", onnx::ops::squeeze, {&x, a ? &*a : nullptr}, no_attributes(), where);
    }
    /// Unsqueeze at `axes`; values are kept while the rank is at most 1.
    template <class = void>
    SymTensor unsqueeze(const SymTensor& x, const std::vector<std::int64_t>& axes) const {
        const std::optional<SymTensor> a = ints_input(axes);
        return run("Unsqueeze", onnx::ops::unsqueeze, {&x, &*a});
    }
    /// Transpose by `perm` (default: reversed).
    template <class = void>
    SymTensor transpose(const SymTensor& x, std::optional<std::vector<std::int64_t>> perm = std::nullopt) const {
        if (!perm) return run("Transpose", onnx::ops::transpose, {&x});
        return run("Transpose", onnx::ops::transpose, {&x}, attributes(transpose_slot, {{"perm", ints_attr(std::move(*perm))}}));
    }

    /// MatMul; the dtypes must match.
    template <class = void>
    SymTensor matmul(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        same_dtype("MatMul", {&a, &b});
        return run("MatMul", onnx::ops::matmul, {&a, &b}, no_attributes(), where);
    }

    /// Expand to the values of `target`; unknown values give fresh symbols for
    /// the dimensions they decide (the rank is max(rank of x, length of target)).
    /// Values are expanded up to SymTensor::max_values elements.
    template <class = void>
    SymTensor expand(const SymTensor& x, const SymTensor& target, source_location where = source_location::current()) {
        shape_input_length("Expand", "shape", target);
        return run("Expand", onnx::ops::expand, {&x, &target}, no_attributes(), where);
    }

    /// Shape(start, end): a 1-D int64 tensor whose values are x's dimensions.
    template <class = void>
    SymTensor shape(const SymTensor& x, std::int64_t start = 0, std::int64_t end = std::numeric_limits<std::int64_t>::max()) const {
        return run("Shape", onnx::ops::shape_of, {&x}, attributes(shape_slot, {{"start", int_attr(start)}, {"end", int_attr(end)}}));
    }
    /// Size: a 0-D int64 tensor whose value is the number of elements.
    template <class = void>
    SymTensor size(const SymTensor& x) const {
        return run("Size", onnx::ops::size_of, {&x});
    }
    /// NonZero: int64 indices of shape [rank, u] with u a fresh symbol.
    template <class = void>
    SymTensor nonzero(const SymTensor& x) {
        return run("NonZero", onnx::ops::nonzero, {&x});
    }

private:
    ShapeEnv* env_;
    BroadcastPolicy policy_;

    static onnx::Attribute int_attr(std::int64_t i) {
        onnx::Attribute a;
        a.kind = onnx::Attribute::Kind::int_;
        a.i = i;
        return a;
    }
    static onnx::Attribute ints_attr(std::vector<std::int64_t> v) {
        onnx::Attribute a;
        a.kind = onnx::Attribute::Kind::ints;
        a.ints = std::move(v);
        return a;
    }
    /// An operator's list of ints as the input the newest opsets take it as (Squeeze's axes, Slice's steps).
    static std::optional<SymTensor> ints_input(const std::optional<std::vector<std::int64_t>>& v) {
        if (!v) return std::nullopt;
        return SymTensor::from_values(std::vector<SymInt>(v->begin(), v->end()));
    }

    /// The rule on `inputs` (nullptr where an optional one is absent), its output 0 as a SymTensor.
    template <class = void>
    SymTensor run(std::string_view op, onnx::Rule rule, std::initializer_list<const SymTensor*> inputs,
                  const onnx::Attributes& attrs = no_attributes(), std::optional<source_location> where = std::nullopt) const {
        return run(op, rule, std::span<const SymTensor* const>(inputs.begin(), inputs.size()), attrs, where);
    }
    template <class = void>
    SymTensor run(std::string_view op, onnx::Rule rule, std::span<const SymTensor* const> inputs,
                  const onnx::Attributes& attrs, std::optional<source_location> where) const {
        // the buffers of the last call are reused: assigning a shape into a TensorInfo that held
        // one keeps its capacity, so a chain of calls allocates little beyond its results
        Buffers& b = buffers_;
        if (b.infos.size() < inputs.size()) b.infos.resize(inputs.size());
        b.pointers.clear();
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const SymTensor* t = inputs[i];
            b.pointers.push_back(t ? &b.infos[i] : nullptr);
            if (!t) continue;
            onnx::TensorInfo& info = b.infos[i];
            info.elem_type = onnx::elem_type_of(t->dtype());
            info.shape = t->shape();
            info.values = t->values();
        }
        onnx::NodeContext ctx(*env_, policy_, "", op, "", opset, std::move(b.pointers), attrs, 1, std::move(b.outputs));
        if (where) ctx.set_where(*where);
        const auto give_back = [&] { std::tie(b.pointers, b.outputs) = ctx.release(); };
        try {
            rule(ctx);
        } catch (const onnx::UnknownInput& unknown) {
            give_back();
            throw value_error(std::string(op) + ": " + unknown.what);
        } catch (...) {
            give_back();
            throw;
        }
        std::optional<onnx::TensorInfo> out = std::move(ctx.outputs()[0]);
        give_back();
        if (!out || !out->shape) throw value_error(std::string(op) + ": the output's shape is not known");
        const std::optional<DType> dtype = onnx::dtype_of_elem(out->elem_type);
        if (!dtype) throw type_error(std::string(op) + ": an output of " + onnx::elem_name(out->elem_type) + ", which DType does not have");
        // SymTensor keeps the values of integer tensors of rank 0 or 1 (a rule may give more)
        if (!(is_integer(*dtype) && out->shape->size() <= 1)) out->values.reset();
        return SymTensor(std::move(*out->shape), *dtype, std::move(out->values));
    }

    /// The methods that pass attributes, each its own map in Buffers.
    enum Slot : std::size_t { cast_slot, concat_slot, gather_slot, reshape_slot, transpose_slot, shape_slot, slot_count };

    /// What run reuses from one call to the next.
    struct Buffers {
        std::vector<onnx::TensorInfo> infos;
        std::vector<const onnx::TensorInfo*> pointers;
        std::vector<std::optional<onnx::TensorInfo>> outputs;
        std::array<onnx::Attributes, slot_count> attributes;  // one per method that passes attributes (Slot)
    };
    mutable Buffers buffers_;

    static const onnx::Attributes& no_attributes() {
        static const onnx::Attributes none;
        return none;
    }
    /// The attribute map of one method (`slot`), holding exactly `wanted`: updated in place when it
    /// already has those names (the method's last call), else rebuilt.
    const onnx::Attributes& attributes(std::size_t slot, std::initializer_list<std::pair<std::string_view, onnx::Attribute>> wanted) const {
        onnx::Attributes& a = buffers_.attributes[slot];
        bool same = a.size() == wanted.size();
        for (auto it = wanted.begin(); same && it != wanted.end(); ++it) same = a.find(it->first) != a.end();
        if (!same) a.clear();
        for (const auto& [name, value] : wanted) {
            if (same) a.find(name)->second = value;
            else a.emplace(std::string(name), value);
        }
        return a;
    }

    /// Every input has the first one's dtype, else a type_error naming the op, the two dtypes and every shape.
    template <class = void>
    static void same_dtype(std::string_view op, std::span<const SymTensor* const> inputs) {
        for (const SymTensor* t : inputs) {
            if (t->dtype() == inputs[0]->dtype()) continue;
            std::vector<Shape> shapes;
            for (const SymTensor* u : inputs) shapes.push_back(u->shape());
            throw type_error(std::string(op) + ": input dtypes differ: " + std::string(to_string(inputs[0]->dtype())) +
                             " and " + std::string(to_string(t->dtype())) + " (shapes " + format_shapes(shapes) + ")");
        }
    }
    template <class = void>
    static void same_dtype(std::string_view op, std::initializer_list<const SymTensor*> inputs) {
        same_dtype(op, std::span<const SymTensor* const>(inputs.begin(), inputs.size()));
    }

    template <class = void>
    static void require_integer(std::string_view op, std::string_view what, const SymTensor& t) {
        if (!is_integer(t.dtype()))
            throw type_error(std::string(op) + ": " + std::string(what) + " must be an integer tensor, got " + t.to_string());
    }

    /// A 1-D integer input that holds a shape or indices: its length decides the output's rank, so
    /// it is a constant of at most SymTensor::max_rank (a length of 3e12 was an allocation of that
    /// many dims, found by fuzz_shape_graph).
    template <class = void>
    static void shape_input_length(std::string_view op, std::string_view what, const SymTensor& t) {
        require_integer(op, what, t);
        if (t.rank() != 1)
            throw value_error(std::string(op) + ": " + std::string(what) + " must be a 1-D tensor, got " + t.to_string());
        const auto n = t.shape()[0].maybe_constant();
        if (!n)
            throw value_error(std::string(op) + ": " + std::string(what) +
                              " must have a constant length (it decides the output's rank), got " + t.to_string());
        if (*n > SymTensor::max_rank)
            throw value_error(std::string(op) + ": " + std::string(what) + " has " + std::to_string(*n) +
                              " entries, more than the dims of a tensor yobx handles (" + std::to_string(SymTensor::max_rank) + ")");
    }

    template <class = void>
    SymTensor binary(std::string_view op, onnx::Rule rule, const SymTensor& a, const SymTensor& b, source_location where) {
        same_dtype(op, {&a, &b});
        return run(op, rule, {&a, &b}, no_attributes(), where);
    }
};

}  // namespace yobx
