// yobx/shape/inference.hpp — ShapeInference: ONNX operators on SymTensors.
//
// Each method runs one operator: its shape rule (yobx/shape/rules.hpp) and,
// for shape tensors, the partial data propagation of the ONNX proposal (the
// values of Shape, Gather, Concat... are computed, symbolically), so that
// `Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))` is [a, b*c] and
// not a shape of unknowns. What cannot be expressed (NonZero's count, a
// Reshape to values nobody knows) gets a fresh symbol per dimension; the rank
// is always kept.
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/dtype.hpp>
#include <yobx/error.hpp>
#include <yobx/shape/rules.hpp>
#include <yobx/shape/sym_tensor.hpp>
#include <yobx/sym.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

namespace shape::detail {

/// ONNX's Slice of a range of n elements: the indices taken, in order. A negative
/// index counts from the end; then a positive step clamps start and end to [0, n],
/// a negative step clamps the start to [0, n - 1] and the end to [-1, n - 1]; an end
/// of exactly INT32_MAX or INT64_MAX reaches the last element, or the first for a
/// negative step (onnxruntime's reading, shape::slice's).
template <class = void>
std::vector<std::int64_t> slice_indices(std::int64_t n, std::int64_t start, std::int64_t end, std::int64_t step) {
    // Min(Max(v, lo), hi): an empty range clamps a backward start to -1, nothing taken
    const auto norm = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) { return std::min(std::max(v < 0 ? v + n : v, lo), hi); };
    std::vector<std::int64_t> out;
    // the distances stay within [0, n + 1], so `distance - step` cannot overflow even for huge steps
    if (step > 0) {
        for (std::int64_t i = norm(start, 0, n), e = norm(end, 0, n); i < e; i += step) {
            out.push_back(i);
            if ((e - i) - step <= 0) break;
        }
    } else {
        for (std::int64_t i = norm(start, 0, n - 1), e = open_end(end) ? -1 : norm(end, -1, n - 1); i > e; i += step) {
            out.push_back(i);
            if ((i - e) + step <= 0) break;
        }
    }
    return out;
}

}  // namespace shape::detail

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
    explicit ShapeInference(ShapeEnv& env, BroadcastPolicy policy = BroadcastPolicy::strict) noexcept
        : env_(&env), policy_(policy) {}

    ShapeEnv& env() const noexcept { return *env_; }
    BroadcastPolicy policy() const noexcept { return policy_; }

    /// Elementwise Add, Sub, Mul with broadcasting; the inputs' dtypes must match.
    /// Values of shape tensors are computed: [a, b] + [1, 1] has values [a + 1, b + 1].
    template <class = void>
    SymTensor add(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Add", a, b, where, [](const SymInt& x, const SymInt& y) { return x + y; });
    }
    template <class = void>
    SymTensor sub(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Sub", a, b, where, [](const SymInt& x, const SymInt& y) { return x - y; });
    }
    template <class = void>
    SymTensor mul(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Mul", a, b, where, [](const SymInt& x, const SymInt& y) { return x * y; });
    }
    /// Integer division truncates toward zero, as ONNX Runtime does. A symbolic
    /// quotient is `x//y` when x >= 0 and y > 0 are proven, else a fresh symbol.
    template <class = void>
    SymTensor div(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        return binary("Div", a, b, where, [&](const SymInt& x, const SymInt& y) { return divide(x, y, a, b); });
    }

    /// Any elementwise unary operator (Relu, Neg, Exp...): same shape and dtype; values are not propagated.
    template <class = void>
    SymTensor unary(const SymTensor& x) const { return SymTensor(x.shape(), x.dtype()); }
    /// Identity: the same tensor, values included.
    template <class = void>
    SymTensor identity(const SymTensor& x) const { return x; }

    /// Cast to `to`. Values survive a cast to an integer type that holds them.
    template <class = void>
    SymTensor cast(const SymTensor& x, DType to) const {
        if (!x.values() || !is_integer(to)) return SymTensor(x.shape(), to);
        if (to == DType::int32)
            for (const auto& v : *x.values())
                if (auto c = v.maybe_constant();
                    c && (*c < std::numeric_limits<std::int32_t>::min() || *c > std::numeric_limits<std::int32_t>::max()))
                    return SymTensor(x.shape(), to);
        return SymTensor(x.shape(), to, x.values());
    }

    /// Concat along `axis`; values are concatenated when every input has them.
    template <class = void>
    SymTensor concat(std::span<const SymTensor> inputs, std::int64_t axis, source_location where = source_location::current()) {
        std::vector<Shape> shapes;
        std::vector<const SymTensor*> tensors;
        for (const auto& t : inputs) {
            shapes.push_back(t.shape());
            tensors.push_back(&t);
        }
        Shape out = shape::concat(*env_, shapes, axis, where);
        same_dtype("Concat", tensors);
        const DType dtype = inputs.front().dtype();
        std::vector<SymInt> values;
        for (const auto& t : inputs) {
            if (!t.values() || out.size() != 1) return SymTensor(std::move(out), dtype);
            values.insert(values.end(), t.values()->begin(), t.values()->end());
        }
        return SymTensor(std::move(out), dtype, std::move(values));
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
        Shape out = shape::gather(data.shape(), indices.shape(), axis);
        const std::int64_t ax = shape::detail::normalize_axis("Gather", axis, data.rank(), data.shape());
        const auto dim = data.shape()[static_cast<std::size_t>(ax)].maybe_constant();
        std::vector<std::int64_t> picked;
        if (indices.values())
            for (const auto& i : *indices.values()) {
                const auto c = i.maybe_constant();
                // A negative index into an axis of symbolic size has no constant position (and data with
                // values has a constant length): nothing to pick.
                if (!c || (*c < 0 && !dim)) break;
                if (dim && (*c < -*dim || *c >= *dim))
                    throw value_error("Gather: index " + std::to_string(*c) + " is out of range for axis " + std::to_string(ax) +
                                      " of size " + std::to_string(*dim) + " (data shape " + format_shape(data.shape()) + ")");
                picked.push_back(*c < 0 ? *c + *dim : *c);
            }
        if (!data.values() || out.size() > 1 || !indices.values() || picked.size() != indices.values()->size())
            return SymTensor(std::move(out), data.dtype());
        std::vector<SymInt> values;
        for (std::int64_t i : picked) values.push_back((*data.values())[static_cast<std::size_t>(i)]);
        return SymTensor(std::move(out), data.dtype(), std::move(values));
    }

    /// Reshape to the values of `target` (a 1-D integer tensor of constant length).
    /// Unknown values give a fresh symbol per output dimension, except for a
    /// 1-D result, which holds every element of x whatever the values.
    template <class = void>
    SymTensor reshape(const SymTensor& x, const SymTensor& target, bool allowzero = false,
                      source_location where = source_location::current()) {
        const std::int64_t n = shape_input_length("Reshape", "shape", target);
        Shape out;
        if (target.values())
            out = shape::reshape(*env_, x.shape(), *target.values(), allowzero, where);
        else if (n == 1)
            out.push_back(env_->simplify(shape::numel(x.shape())));
        else
            for (std::int64_t i = 0; i < n; ++i) out.push_back(env_->fresh_symbol("u"));
        return with_values_if_small(std::move(out), x);
    }

    /// Slice with `starts` and `ends` given as 1-D integer tensors (their values,
    /// possibly symbolic), constant `axes` and `steps`. Unknown starts or ends give
    /// a fresh symbol for each sliced dimension.
    template <class = void>
    SymTensor slice(const SymTensor& x, const SymTensor& starts, const SymTensor& ends,
                    std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                    std::optional<std::vector<std::int64_t>> steps = std::nullopt,
                    source_location where = source_location::current()) {
        const std::int64_t n = shape_input_length("Slice", "starts", starts);
        shape_input_length("Slice", "ends", ends);
        if (!starts.values() || !ends.values()) {
            // The sliced axes are known even if the bounds are not.
            const Shape zeros(static_cast<std::size_t>(n), SymInt(0));
            Shape out = shape::slice(*env_, x.shape(), zeros, zeros, axes, steps, where);
            for (std::int64_t k = 0; k < n; ++k) {
                const std::int64_t a = axes ? (*axes)[static_cast<std::size_t>(k)] : k;
                out[static_cast<std::size_t>(shape::detail::normalize_axis("Slice", a, x.rank(), x.shape()))] = env_->fresh_symbol("u");
            }
            return SymTensor(std::move(out), x.dtype());
        }
        Shape out = shape::slice(*env_, x.shape(), *starts.values(), *ends.values(), axes, steps, where);
        if (!x.values() || x.rank() != 1 || n != 1) return SymTensor(std::move(out), x.dtype());
        const auto start = (*starts.values())[0].maybe_constant(), end = (*ends.values())[0].maybe_constant();
        if (!start || !end) return SymTensor(std::move(out), x.dtype());
        std::vector<SymInt> values;
        for (std::int64_t i : shape::detail::slice_indices(static_cast<std::int64_t>(x.values()->size()), *start, *end,
                                                           steps ? (*steps)[0] : 1))
            values.push_back((*x.values())[static_cast<std::size_t>(i)]);
        return SymTensor(std::move(out), x.dtype(), std::move(values));
    }

    /// Squeeze `axes` (or every dimension equal to 1); values are kept.
    template <class = void>
    SymTensor squeeze(const SymTensor& x, std::optional<std::vector<std::int64_t>> axes = std::nullopt,
                      source_location where = source_location::current()) {
        return with_values_if_small(shape::squeeze(*env_, x.shape(), std::move(axes), where), x);
    }
    /// Unsqueeze at `axes`; values are kept while the rank is at most 1.
    template <class = void>
    SymTensor unsqueeze(const SymTensor& x, const std::vector<std::int64_t>& axes) const {
        return with_values_if_small(shape::unsqueeze(x.shape(), axes), x);
    }
    /// Transpose by `perm` (default: reversed).
    template <class = void>
    SymTensor transpose(const SymTensor& x, std::optional<std::vector<std::int64_t>> perm = std::nullopt) const {
        return with_values_if_small(shape::transpose(x.shape(), std::move(perm)), x);
    }

    /// MatMul; the dtypes must match.
    template <class = void>
    SymTensor matmul(const SymTensor& a, const SymTensor& b, source_location where = source_location::current()) {
        same_dtype("MatMul", a, b);
        return SymTensor(shape::matmul(*env_, a.shape(), b.shape(), policy_, where), a.dtype());
    }

    /// Expand to the values of `target`; unknown values give fresh symbols for
    /// the dimensions they decide (the rank is max(rank of x, length of target)).
    /// Values are expanded up to SymTensor::max_values elements.
    template <class = void>
    SymTensor expand(const SymTensor& x, const SymTensor& target, source_location where = source_location::current()) {
        const std::int64_t n = shape_input_length("Expand", "shape", target);
        if (!target.values()) {
            Shape out = x.shape();
            if (n > x.rank()) out.insert(out.begin(), static_cast<std::size_t>(n - x.rank()), SymInt(1));
            for (std::size_t i = out.size() - static_cast<std::size_t>(n); i < out.size(); ++i) out[i] = env_->fresh_symbol("u");
            return SymTensor(std::move(out), x.dtype());
        }
        Shape out = shape::expand(*env_, x.shape(), *target.values(), policy_, where);
        const auto length = out.empty() ? std::optional<std::int64_t>(1) : out.size() == 1 ? out[0].maybe_constant() : std::nullopt;
        if (!x.values() || !length || *length > SymTensor::max_values) return SymTensor(std::move(out), x.dtype());
        const auto len = static_cast<std::size_t>(*length);
        std::vector<SymInt> values;
        for (std::size_t i = 0; i < len; ++i) values.push_back((*x.values())[x.values()->size() == 1 ? 0 : i]);
        return SymTensor(std::move(out), x.dtype(), std::move(values));
    }

    /// Shape(start, end): a 1-D int64 tensor whose values are x's dimensions.
    template <class = void>
    SymTensor shape(const SymTensor& x, std::int64_t start = 0, std::int64_t end = std::numeric_limits<std::int64_t>::max()) const {
        return SymTensor::from_values(shape::shape_values(x.shape(), start, end));
    }
    /// Size: a 0-D int64 tensor whose value is the number of elements.
    template <class = void>
    SymTensor size(const SymTensor& x) const { return SymTensor::scalar(env_->simplify(shape::numel(x.shape()))); }
    /// NonZero: int64 indices of shape [rank, u] with u a fresh symbol.
    template <class = void>
    SymTensor nonzero(const SymTensor& x) { return SymTensor(shape::nonzero(*env_, x.shape()), DType::int64); }

private:
    ShapeEnv* env_;
    BroadcastPolicy policy_;

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
    static void same_dtype(std::string_view op, const SymTensor& a, const SymTensor& b) {
        const SymTensor* both[] = {&a, &b};
        same_dtype(op, both);
    }

    template <class = void>
    static void require_integer(std::string_view op, std::string_view what, const SymTensor& t) {
        if (!is_integer(t.dtype()))
            throw type_error(std::string(op) + ": " + std::string(what) + " must be an integer tensor, got " + t.to_string());
    }

    /// The length of a 1-D integer input that holds a shape or indices: at most SymTensor::max_rank,
    /// as it decides the output's rank or indexes its dims (a length of 3e12 was an
    /// allocation of that many dims, found by fuzz_shape_graph).
    template <class = void>
    static std::int64_t shape_input_length(std::string_view op, std::string_view what, const SymTensor& t) {
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
        return *n;
    }

    /// out with x's values when x has them and out is still a shape tensor
    /// whose length is proven (a rule that made the length a symbol drops them).
    template <class = void>
    static SymTensor with_values_if_small(Shape out, const SymTensor& x) {
        if (!x.values() || out.size() > 1 || (out.size() == 1 && !out[0].maybe_constant()))
            return SymTensor(std::move(out), x.dtype());
        return SymTensor(std::move(out), x.dtype(), x.values());
    }

    template <class F>
    SymTensor binary(std::string_view op, const SymTensor& a, const SymTensor& b, source_location where, F f) {
        same_dtype(op, a, b);
        Shape out = shape::broadcast(*env_, {a.shape(), b.shape()}, policy_, op, where);
        if (!a.values() || !b.values() || out.size() > 1) return SymTensor(std::move(out), a.dtype());
        auto values = shape::detail::broadcast_pairs(*a.values(), *b.values(),
                                                     [&](const SymInt& x, const SymInt& y) { return std::optional(env_->simplify(f(x, y))); });
        if (!values) return SymTensor(std::move(out), a.dtype());
        return SymTensor(std::move(out), a.dtype(), std::move(*values));
    }

    template <class = void>
    SymInt divide(const SymInt& x, const SymInt& y, const SymTensor& a, const SymTensor& b) {
        const auto cx = x.maybe_constant(), cy = y.maybe_constant();
        if (cy == 0)
            throw value_error("Div: division by zero in the values " + format_shape(*a.values()) + " / " + format_shape(*b.values()));
        if (cx && cy) {
            if (*cx == std::numeric_limits<std::int64_t>::min() && *cy == -1)
                throw value_error("Div: integer overflow in " + x.to_string() + " / " + y.to_string());
            return *cx / *cy;  // C++ truncates toward zero, like ONNX Runtime
        }
        if (env_->statically_known_true(x >= 0) && env_->statically_known_true(y > 0)) return floordiv(x, y);
        const auto hx = env_->size_hint(x), hy = env_->size_hint(y);
        std::optional<std::int64_t> hint;
        if (hx && hy && *hy != 0 && !(*hx == std::numeric_limits<std::int64_t>::min() && *hy == -1)) hint = *hx / *hy;
        return env_->fresh_symbol("s", hint, ValueRange::unknown());
    }
};

}  // namespace yobx
