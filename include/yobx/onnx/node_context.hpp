// yobx/onnx/node_context.hpp — what an ONNX operator's shape rule sees, free of protobuf.
//
// A rule reads its inputs (TensorInfo: element type, symbolic shape, the values
// of small integer tensors), its attributes and the opset, and writes its
// outputs. It knows nothing of protobuf or of the graph: the walk
// (yobx/adapters/onnx/shapes.hpp) builds a NodeContext per node, so the same rules run
// on a graph built in C++ as on a file, like ONNX's own InferenceContext.
#pragma once

#include <yobx/detail/source_location.hpp>
#include <yobx/error.hpp>
#include <yobx/onnx/elem_type.hpp>
#include <yobx/shape/rules.hpp>
#include <yobx/shape/sym_tensor.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// The newest default-domain opset whose operators yobx knows: ONNX's main branch at commit
/// f7546912001bc31e92a238b17068a21b373d882e (2026-08-22; opset 27 is its newest release, 1.22).
inline constexpr int max_known_opset = 28;
/// The oldest default-domain opset yobx reads.
inline constexpr int min_known_opset = 7;

/// The float values a Mul or Div by a constant left between integers: element i is
/// `values[i] * factors[i]` (`/` with `divide`) as the tensor's float type computes it, which
/// a Floor, Ceil or Cast to an integer type that follows turns back into values
/// (ops/rounding.hpp): `int(h * 0.5)` is h//2.
struct ScaledValues {
    std::vector<SymInt> values;
    std::vector<double> factors;  ///< as many as values
    bool divide = false;
};

/// What inference knows of one value of the graph. `shape` is nullopt when
/// even the rank is unknown; a dimension nobody knows is a fresh symbol.
/// `values` (integer tensors of at most SymTensor::max_values elements, row-major,
/// and the integer values of float32 and float64 tensors a Cast of them made), `reals`
/// (constant floating-point tensors of rank 0 or 1 of the same sizes: Resize's scales)
/// and `scaled` are what data propagation knows of the contents. Values of
/// rank 2 or more only come from the rules that move elements without reading
/// them (torch's dynamic pads: Reshape to [-1, 2], Slice backwards, Transpose,
/// Reshape to [-1]); the other rules see values of rank 0 and 1 only.
struct TensorInfo {
    int elem_type = elem::undefined;
    std::optional<Shape> shape;
    std::optional<std::vector<SymInt>> values;
    std::optional<std::vector<double>> reals;
    std::optional<ScaledValues> scaled;

    static TensorInfo of(int elem_type, Shape shape, std::optional<std::vector<SymInt>> values = std::nullopt) {
        return TensorInfo{elem_type, std::move(shape), std::move(values), std::nullopt, std::nullopt};
    }
    std::optional<std::int64_t> rank() const {
        return shape ? std::optional<std::int64_t>(static_cast<std::int64_t>(shape->size())) : std::nullopt;
    }
    /// The values when every one is a constant.
    std::optional<std::vector<std::int64_t>> constant_values() const {
        if (!values) return std::nullopt;
        std::vector<std::int64_t> out;
        out.reserve(values->size());
        for (const auto& v : *values) {
            const auto c = v.maybe_constant();
            if (!c) return std::nullopt;
            out.push_back(*c);
        }
        return out;
    }
};

/// One attribute of a node, as the rules read it. A tensor attribute is a TensorInfo
/// (its dims and, for small integer or float tensors, its contents); a graph attribute
/// is only named here: subgraphs are the walk's business.
struct Attribute {
    enum class Kind { int_, float_, string, ints, floats, strings, tensor, graph, other };
    Kind kind = Kind::other;
    std::int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<std::int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strings;
    std::optional<TensorInfo> tensor;
};
/// A node's attributes by name.
using Attributes = std::map<std::string, Attribute, std::less<>>;

/// A rule found nothing it could say for an output: the walk leaves the output unknown
/// (or asks ONNX's own inference). Thrown when a needed input's rank is unknown.
struct UnknownInput {
    std::string what;
};

/// A fresh symbol a rule made, and why (the report explains each).
struct FreshSymbol {
    std::string name;
    std::string why;
};

/// An output whose shape onnxruntime and ONNX's reference compute differently (a Slice end of
/// INT64_MAX with a negative step): both readings, for the report.
struct Divergence {
    std::size_t output = 0;
    std::string readings;
};

/// What the walk gives a control-flow rule (If, Loop, Scan), as ONNX's GraphInferencer does: the
/// outputs of the node's graph attribute `attribute` walked with `inputs` (nullopt: the type the
/// subgraph declares for that input), each nullopt where the subgraph gives it no type; nullopt
/// where the node has no such graph attribute. A callable by reference, for the node's time only.
class SubgraphInferencer {
public:
    using Outputs = std::vector<std::optional<TensorInfo>>;
    template <class F>
    explicit SubgraphInferencer(const F& f) noexcept
        : self_(&f), call_([](const void* self, std::string_view attribute, const Outputs& inputs) {
              return (*static_cast<const F*>(self))(attribute, inputs);
          }) {}
    std::optional<Outputs> operator()(std::string_view attribute, const Outputs& inputs) const { return call_(self_, attribute, inputs); }

private:
    const void* self_;
    std::optional<Outputs> (*call_)(const void*, std::string_view, const Outputs&);
};

/// The node a rule runs on: its inputs, attributes and opset, the ShapeEnv, and its outputs to fill.
///
///   void relu(NodeContext& ctx) { ctx.set_output(0, ctx.elem_type(0), ctx.shape(0)); }
class NodeContext {
public:
    /// `attributes` is kept by address: it must outlive the context. `storage`, if given, holds
    /// the outputs (its capacity reused: a walk hands a node's vectors on to the next, release()).
    NodeContext(ShapeEnv& env, BroadcastPolicy policy, std::string_view domain, std::string_view op_type, std::string_view name,
                int opset, std::vector<const TensorInfo*> inputs, const Attributes& attributes,
                std::size_t n_outputs, std::vector<std::optional<TensorInfo>> storage = {})
        : env_(&env), policy_(policy), domain_(domain), op_type_(op_type), name_(name), opset_(opset), inputs_(std::move(inputs)),
          attributes_(&attributes), outputs_(std::move(storage)) {
        outputs_.assign(n_outputs, std::nullopt);
    }
    /// A temporary attribute map would be gone before the rule reads it: pass one that outlives the context.
    NodeContext(ShapeEnv& env, BroadcastPolicy policy, std::string_view domain, std::string_view op_type, std::string_view name,
                int opset, std::vector<const TensorInfo*> inputs,
                const Attributes&& attributes, std::size_t n_outputs, std::vector<std::optional<TensorInfo>> storage = {}) = delete;

    /// The vectors of the inputs and the outputs, emptied, for the next context to reuse; this
    /// one has neither after.
    std::pair<std::vector<const TensorInfo*>, std::vector<std::optional<TensorInfo>>> release() noexcept {
        inputs_.clear();
        outputs_.clear();
        return {std::move(inputs_), std::move(outputs_)};
    }

    ShapeEnv& env() const noexcept { return *env_; }
    BroadcastPolicy policy() const noexcept { return policy_; }
    std::string_view domain() const noexcept { return domain_; }
    std::string_view op_type() const noexcept { return op_type_; }
    std::string_view name() const noexcept { return name_; }
    /// The version of the node's domain the model imports.
    int opset() const noexcept { return opset_; }

    std::size_t input_count() const noexcept { return inputs_.size(); }
    std::size_t output_count() const noexcept { return outputs_.size(); }
    /// The input, or nullptr when it is absent (an empty name or past the end).
    const TensorInfo* input(std::size_t i) const noexcept { return i < inputs_.size() ? inputs_[i] : nullptr; }
    /// Every input, nullptr where it is absent.
    const std::vector<const TensorInfo*>& inputs() const noexcept { return inputs_; }
    bool has_input(std::size_t i) const noexcept { return input(i) != nullptr; }
    /// The shape of a present input of known rank, else UnknownInput.
    const Shape& shape(std::size_t i) const {
        const TensorInfo* t = input(i);
        if (t == nullptr) throw UnknownInput{"input " + std::to_string(i) + " is absent"};
        if (!t->shape) throw UnknownInput{"the rank of input " + std::to_string(i) + " is unknown"};
        return *t->shape;
    }
    /// The shape of a present input of known rank, else nullptr (an optional input's, which a
    /// rule reads only when it is there).
    const Shape* known_shape(std::size_t i) const noexcept {
        const TensorInfo* t = input(i);
        return t && t->shape ? &*t->shape : nullptr;
    }
    std::int64_t rank(std::size_t i) const { return static_cast<std::int64_t>(shape(i).size()); }
    int elem_type(std::size_t i) const noexcept { return input(i) ? input(i)->elem_type : elem::undefined; }
    /// The values of an input of rank 0 or 1 (possibly symbolic), when data propagation knows them.
    const std::optional<std::vector<SymInt>>* values(std::size_t i) const noexcept {
        const TensorInfo* t = input(i);
        return t && t->values && t->shape && t->shape->size() <= 1 ? &t->values : nullptr;
    }
    /// The value of an input holding one element (rank 0, or [1]), when data propagation knows it.
    std::optional<SymInt> single_value(std::size_t i) const {
        const auto* v = values(i);
        return v && (*v)->size() == 1 ? std::optional<SymInt>((**v)[0]) : std::nullopt;
    }
    /// The values of an input of rank 0 or 1 when each is a constant.
    std::optional<std::vector<std::int64_t>> constant_values(std::size_t i) const {
        return values(i) ? input(i)->constant_values() : std::nullopt;
    }
    /// An input's values of any rank, row-major, with its dims (each a constant).
    struct ValueBlock {
        std::vector<std::int64_t> dims;
        const std::vector<SymInt>* values;
    };
    /// The values of input i whatever its rank, for the rules that move elements
    /// without reading them as sizes (Reshape, Transpose, Slice, Cast...); nullopt
    /// when they are not known.
    std::optional<ValueBlock> value_block(std::size_t i) const {
        const TensorInfo* t = input(i);
        if (t == nullptr || !t->values || !t->shape) return std::nullopt;
        ValueBlock b{{}, &*t->values};
        if (!constant_dims(*t->shape, b.dims) || !holds_count(b.dims, t->values->size())) return std::nullopt;
        return b;
    }
    /// A constant floating-point input's values (or an integer one's, converted).
    std::optional<std::vector<double>> real_values(std::size_t i) const {
        const TensorInfo* t = input(i);
        if (t == nullptr) return std::nullopt;
        if (t->reals) return t->reals;
        if (auto c = constant_values(i)) return std::vector<double>(c->begin(), c->end());
        return std::nullopt;
    }

    const Attribute* attribute(std::string_view name) const {
        const auto it = attributes_->find(name);
        return it == attributes_->end() ? nullptr : &it->second;
    }
    std::int64_t attr_int(std::string_view name, std::int64_t fallback) const {
        const Attribute* a = attribute(name);
        if (a == nullptr) return fallback;
        if (a->kind != Attribute::Kind::int_) fail("attribute '" + std::string(name) + "' must be an int");
        return a->i;
    }
    double attr_float(std::string_view name, double fallback) const {
        const Attribute* a = attribute(name);
        if (a == nullptr) return fallback;
        if (a->kind != Attribute::Kind::float_) fail("attribute '" + std::string(name) + "' must be a float");
        return a->f;
    }
    std::string attr_string(std::string_view name, std::string fallback) const {
        const Attribute* a = attribute(name);
        if (a == nullptr) return fallback;
        if (a->kind != Attribute::Kind::string) fail("attribute '" + std::string(name) + "' must be a string");
        return a->s;
    }
    std::optional<std::vector<std::int64_t>> attr_ints(std::string_view name) const {
        const Attribute* a = attribute(name);
        if (a == nullptr) return std::nullopt;
        if (a->kind != Attribute::Kind::ints) fail("attribute '" + std::string(name) + "' must be a list of ints");
        return a->ints;
    }
    std::optional<std::vector<double>> attr_floats(std::string_view name) const {
        const Attribute* a = attribute(name);
        if (a == nullptr) return std::nullopt;
        if (a->kind != Attribute::Kind::floats) fail("attribute '" + std::string(name) + "' must be a list of floats");
        return a->floats;
    }

    /// Writes output i (an index past the node's outputs is ignored: optional outputs).
    void set_output(std::size_t i, TensorInfo t) {
        if (i >= outputs_.size()) return;
        if (t.shape) output_rank(static_cast<std::int64_t>(t.shape->size()));
        if (t.shape)
            for (const auto& d : *t.shape)
                if (const auto c = d.maybe_constant(); c && *c < 0)
                    fail("output " + std::to_string(i) + " would have a negative dimension: " + format_shape(*t.shape));
        if (t.values && (!elem::carries_values(t.elem_type) || !t.shape || t.shape->size() > 1)) t.values.reset();
        if (t.scaled && (!elem::holds_integer_floats(t.elem_type) || !t.shape || t.shape->size() > 1)) t.scaled.reset();
        outputs_[i] = std::move(t);
    }
    void set_output(std::size_t i, int elem_type, Shape shape, std::optional<std::vector<SymInt>> values = std::nullopt) {
        set_output(i, TensorInfo::of(elem_type, std::move(shape), std::move(values)));
    }
    /// Writes output i keeping values of any rank (row-major) when its dims are constants
    /// whose product is the number of values, else without values: for the rules that
    /// move elements (a Reshape to a length nobody knows keeps none).
    void set_output_block(std::size_t i, TensorInfo t) {
        std::vector<std::int64_t> dims;
        std::optional<std::vector<SymInt>> values = std::move(t.values);
        t.values.reset();
        if (values && !(t.shape && elem::carries_values(t.elem_type) && constant_dims(*t.shape, dims) && holds_count(dims, values->size())))
            values.reset();
        set_output(i, std::move(t));
        if (i < outputs_.size() && outputs_[i]) outputs_[i]->values = std::move(values);
    }
    /// Output i with a known element type and an unknown rank.
    void set_output_type(std::size_t i, int elem_type) {
        if (i < outputs_.size()) outputs_[i] = TensorInfo{elem_type, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    }
    const std::vector<std::optional<TensorInfo>>& outputs() const noexcept { return outputs_; }
    std::vector<std::optional<TensorInfo>>& outputs() noexcept { return outputs_; }

    /// The largest rank yobx gives an output (SymTensor's).
    static constexpr std::int64_t max_rank = SymTensor::max_rank;
    /// The rank `n` of an output, checked against max_rank.
    std::int64_t output_rank(std::int64_t n) const {
        if (n < 0 || n > max_rank) fail("an output of rank " + std::to_string(n) + " (yobx handles ranks up to " + std::to_string(max_rank) + ")");
        return n;
    }

    /// A new symbol for a size nobody can know before running the model (NonZero's
    /// count) or that the rules cannot express; `why` goes to the report.
    SymInt fresh(std::string why) {
        SymInt s = env_->fresh_symbol("unk__", std::nullopt, ValueRange::size());
        fresh_.push_back(FreshSymbol{s.to_string(), std::move(why)});
        return s;
    }
    const std::vector<FreshSymbol>& fresh_symbols() const noexcept { return fresh_; }
    /// Output i's shape depends on the runtime: `readings` says how each computes it.
    void note_divergence(std::size_t i, std::string readings) { divergences_.push_back(Divergence{i, std::move(readings)}); }
    const std::vector<Divergence>& divergences() const noexcept { return divergences_; }

    /// value_error naming the node: `Conv 'conv1': <what>`.
    [[noreturn]] void fail(const std::string& what) const {
        throw value_error(std::string(op_type_) + (name_.empty() ? "" : " '" + std::string(name_) + "'") + ": " + what);
    }
    /// An axis in [-rank, rank - 1], returned in [0, rank - 1], else an error naming the node.
    std::int64_t axis(std::int64_t a, std::int64_t rank, std::string_view what = "axis") const {
        if (a < -rank || a >= rank)
            fail(std::string(what) + " " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
        return a < 0 ? a + rank : a;
    }
    /// The ShapeEnv's simplified form.
    SymInt simplify(const SymInt& e) const { return env_->simplify(e); }

    /// Where a question the rule asks the ShapeEnv is reported: the caller's line when one was
    /// set (ShapeInference gives its user's), else `here`, the rule's own line.
    source_location where(source_location here = source_location::current()) const noexcept { return where_ ? *where_ : here; }
    void set_where(source_location where) noexcept { where_ = where; }

    /// Gives the node's subgraphs to its rule (the walk does, for a node with graph attributes).
    void set_subgraphs(const SubgraphInferencer* subgraphs) noexcept { subgraphs_ = subgraphs; }
    /// The outputs of the graph attribute `attribute` walked with `inputs` (SubgraphInferencer),
    /// else an error naming the node: `attribute 'body' is required`.
    SubgraphInferencer::Outputs subgraph(std::string_view attribute, const SubgraphInferencer::Outputs& inputs = {}) const {
        std::optional<SubgraphInferencer::Outputs> out;
        if (subgraphs_ != nullptr) out = (*subgraphs_)(attribute, inputs);
        if (!out) fail("attribute '" + std::string(attribute) + "' is required");
        return std::move(*out);
    }

private:
    static bool constant_dims(const Shape& shape, std::vector<std::int64_t>& dims) {
        dims.clear();
        for (const auto& d : shape) {
            const auto c = d.maybe_constant();
            if (!c) return false;
            dims.push_back(*c);
        }
        return true;
    }
    /// The product of dims is n (dims within a block are small: no overflow past n).
    static bool holds_count(const std::vector<std::int64_t>& dims, std::size_t n) {
        std::int64_t p = 1;
        for (auto d : dims) {
            if (d < 0 || (d > 0 && p > SymTensor::max_values / d)) return false;
            p *= d;
        }
        return static_cast<std::size_t>(p) == n;
    }

    ShapeEnv* env_;
    BroadcastPolicy policy_;
    std::string_view domain_, op_type_, name_;
    int opset_;
    std::vector<const TensorInfo*> inputs_;
    const Attributes* attributes_;
    std::vector<std::optional<TensorInfo>> outputs_;
    std::vector<FreshSymbol> fresh_;
    std::vector<Divergence> divergences_;
    const SubgraphInferencer* subgraphs_ = nullptr;
    std::optional<source_location> where_;
};

/// A shape rule: fills ctx's outputs from its inputs.
using Rule = void (*)(NodeContext& ctx);

/// The rules, found by (domain, op type, since-version) as ONNX finds its schemas:
/// the rule of a node is the one with the largest since-version not above the model's opset.
class OpRegistry {
public:
    struct Entry {
        int since;
        Rule rule;
    };
    /// Adds the rule of `op_type` in `domain` ("" is the default domain) from opset `since` on.
    OpRegistry& add(std::string_view domain, std::string_view op_type, int since, Rule rule) {
        auto& v = rules_[key(domain, op_type)];
        // a second rule for the same version replaces the first
        std::erase_if(v, [&](const Entry& e) { return e.since == since; });
        v.push_back(Entry{since, rule});
        std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.since < b.since; });
        return *this;
    }
    /// The same rule for each op type.
    OpRegistry& add_all(std::string_view domain, std::initializer_list<std::string_view> op_types, int since, Rule rule) {
        for (auto op : op_types) add(domain, op, since, rule);
        return *this;
    }
    /// The rule for this node, or nullptr when the operator (or this version of it) is not covered.
    Rule find(std::string_view domain, std::string_view op_type, int opset) const {
        const auto it = rules_.find(key(domain, op_type));
        if (it == rules_.end()) return nullptr;
        Rule found = nullptr;
        for (const Entry& e : it->second)
            if (e.since <= opset) found = e.rule;
        return found;
    }
    /// Every (domain, op type) covered, with its since-versions: the operator table of the docs.
    const std::map<std::string, std::vector<Entry>, std::less<>>& table() const noexcept { return rules_; }

private:
    static std::string key(std::string_view domain, std::string_view op_type) {
        return (domain == "ai.onnx" ? std::string() : std::string(domain)) + "::" + std::string(op_type);
    }
    std::map<std::string, std::vector<Entry>, std::less<>> rules_;
};

}  // namespace yobx::onnx
