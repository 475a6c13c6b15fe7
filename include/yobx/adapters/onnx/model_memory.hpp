// yobx/adapters/onnx/model_memory.hpp — the memory of a shaped ONNX model: reads its graph into the
// MemoryGraph yobx/onnx/memory.hpp plans, and its weights from the tensors' dims and types.
//
// Run it on the model infer_shapes wrote (the dim_params it writes are expressions parse_sym
// reads; an input's dim_param that is not a symbol name is read through the report's
// name_mapping). The weights are the initializers and the Constant nodes' tensors, of every
// graph, counted from their dims, never read (external data included); Constant outputs are
// weights, not activations.
//
//   ShapeReport report = yobx::onnx::infer_shapes(model);
//   MemoryReport memory = yobx::onnx::memory_of(model, report);
//   memory.at = memory.evaluate({{"batch", 8}, {"seq", 4096}});
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>

#include <yobx/adapters/onnx/detail/walker.hpp>
#include <yobx/onnx/memory.hpp>
#include <yobx/onnx/report.hpp>
#include <yobx/sym/parse.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace yobx::onnx {

namespace detail {

/// Reads a shaped graph into a MemoryGraph; `names` maps a dim_param that is not a symbol name to its symbol.
class MemoryReader {
public:
    explicit MemoryReader(const std::map<std::string, std::string, std::less<>>& names) : names_(names) {}

    Weights weights;

    /// Every dim the graphs read so far write, as expressions (the constant ones left out).
    std::vector<SymInt> symbolic_dims() const {
        std::vector<SymInt> out;
        for (const auto& [written, e] : dims_)
            if (e && !e->maybe_constant()) out.push_back(*e);
        return out;
    }

    /// The symbols of the dims of `g`'s inputs.
    std::set<std::string, std::less<>> input_symbols(const ::onnx::GraphProto& g) {
        std::set<std::string, std::less<>> out;
        for (const auto& v : g.input()) {
            if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
            for (const auto& d : v.type().tensor_type().shape().dim())
                if (const auto e = dim(d))
                    for (auto& s : e->free_symbols()) out.insert(std::move(s));
        }
        return out;
    }

    MemoryGraph graph(const ::onnx::GraphProto& g) {
        MemoryGraph out;
        std::unordered_map<std::string_view, const ::onnx::TypeProto*> types;
        for (const auto& v : g.input()) types[v.name()] = &v.type();
        for (const auto& v : g.value_info()) types[v.name()] = &v.type();
        for (const auto& v : g.output()) types[v.name()] = &v.type();
        std::set<std::string_view> weight_names;
        for (const auto& t : g.initializer()) {
            add_weight(t);
            weight_names.insert(t.name());
        }
        for (const auto& t : g.sparse_initializer()) {
            add_weight(t.values());
            add_weight(t.indices());
            weight_names.insert(t.values().name());
        }
        std::unordered_map<std::string_view, std::size_t> index;
        const auto value = [&](std::string_view name) -> std::optional<std::size_t> {
            if (name.empty() || weight_names.count(name)) return std::nullopt;
            if (const auto it = index.find(name); it != index.end()) return it->second;
            const auto t = types.find(name);
            out.values.push_back(t == types.end() ? MemoryGraph::Value{std::string(name), std::nullopt, "tensor", "no type written", std::nullopt}
                                                  : value_of(std::string(name), *t->second));
            index.emplace(name, out.values.size() - 1);
            return out.values.size() - 1;
        };
        for (const auto& v : g.input())
            if (const auto i = value(v.name())) out.inputs.push_back(*i);
        const auto order = order_of(g, out.order);
        std::vector<std::string_view> deps;
        for (const int k : order) {
            const auto& n = g.node(k);
            MemoryGraph::Step step{n.name().empty() ? (n.output_size() ? n.output(0) : std::string()) : n.name(),
                                   (n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + ".") + n.op_type(), {}, {}, std::nullopt};
            node_inputs(n, deps);
            for (const auto d : deps)
                if (index.count(d)) step.consumed.push_back(index[d]);  // an outer value is not this graph's
            const bool constant = (n.domain().empty() || n.domain() == "ai.onnx") && n.op_type() == "Constant";
            for (const auto& o : n.output()) {
                if (o.empty()) continue;
                if (constant) {
                    weight_names.insert(o);
                    continue;
                }
                if (const auto i = value(o)) step.produced.push_back(*i);
            }
            std::vector<SymInt> inner;  // If: the larger branch; Loop and Scan: one body at a time
            for (const auto& a : n.attribute()) {
                if (constant) add_constant(a);
                if (a.has_g()) inner.push_back(plan_memory(graph(a.g())).peak.expression());
                for (const auto& s : a.graphs()) inner.push_back(plan_memory(graph(s)).peak.expression());
            }
            if (!inner.empty()) step.inner = peak_of(inner).expression();
            out.steps.push_back(std::move(step));
        }
        for (const auto& v : g.output())
            if (const auto i = value(v.name())) out.outputs.push_back(*i);
        return out;
    }

private:
    const std::map<std::string, std::string, std::less<>>& names_;
    std::map<std::string, std::optional<SymInt>, std::less<>> dims_;

    /// A dim as an expression: dim_value, or a dim_param parse_sym reads (or the report maps).
    std::optional<SymInt> dim(const ::onnx::TensorShapeProto_Dimension& d) {
        if (d.has_dim_value()) return d.dim_value() >= 0 ? std::optional<SymInt>(SymInt(d.dim_value())) : std::nullopt;
        if (!d.has_dim_param() || d.dim_param().empty()) return std::nullopt;
        auto it = dims_.find(d.dim_param());
        if (it == dims_.end()) {
            std::optional<SymInt> e;
            const auto mapped = names_.find(d.dim_param());
            try {
                if (mapped != names_.end()) e = parse_sym(mapped->second);
                else if (!hyphenated_name(d.dim_param())) e = parse_sym(d.dim_param());  // ("seq-len": a name)
            } catch (const yobx::error&) {
                e = std::nullopt;
            }
            it = dims_.emplace(d.dim_param(), std::move(e)).first;
        }
        return it->second;
    }

    MemoryGraph::Value value_of(std::string name, const ::onnx::TypeProto& type) {
        MemoryGraph::Value v{std::move(name), std::nullopt, "tensor", {}, std::nullopt};
        const ::onnx::TypeProto* t = &type;
        for (int depth = 0; depth < 8; ++depth) {
            if (t->has_sequence_type() && t->sequence_type().has_elem_type()) {
                v.kind = "sequence element";
                t = &t->sequence_type().elem_type();
            } else if (t->has_optional_type() && t->optional_type().has_elem_type()) {
                if (v.kind == "tensor") v.kind = "optional";
                t = &t->optional_type().elem_type();
            } else {
                break;
            }
        }
        if (!t->has_tensor_type()) {
            v.why = t->has_sparse_tensor_type() ? "a sparse tensor" : t->has_map_type() ? "a map" : "no tensor type";
            return v;
        }
        const auto& tt = t->tensor_type();
        if (elem_bits(tt.elem_type()) == 0) {
            v.why = tt.elem_type() == elem::string ? "strings have no fixed size" : "element type " + elem_name(tt.elem_type());
            return v;
        }
        if (!tt.has_shape()) {
            v.why = "rank not known";
            return v;
        }
        SymInt elements(1);
        Product count{1, {}};  // the elements as written: the constant dims, then the others
        bool fits = true;      // count.coef fits in int64 (elements may still: `2**62*((4*n)//2**62)`)
        for (const auto& d : tt.shape().dim()) {
            auto e = dim(d);
            if (!e) {
                v.why = "a dim not known";
                return v;
            }
            elements = elements * *e;
            if (const auto c = e->maybe_constant()) {
                fits = fits && !__builtin_mul_overflow(count.coef, *c, &count.coef);
                continue;
            }
            // a dim that is a constant times a product (`49*batch`) gives its constant to the coefficient:
            // `1204224*batch`, not `24576*(49*batch)`, and it adds up with the other terms in `batch`
            auto p = e->poly();
            std::int64_t folded = 0;
            if (p.constant == 0 && p.terms.size() == 1 && p.terms[0].coef > 1 &&
                !__builtin_mul_overflow(count.coef, p.terms[0].coef, &folded)) {
                count.coef = folded;
                p.terms[0].coef = 1;
                p.hash = 0;
                e = SymInt(std::move(p));
            }
            count.factors += (count.factors.empty() ? "" : "*") + Product::factor(e->to_string());
        }
        v.bytes = bytes_of_elements(tt.elem_type(), elements);
        const std::int64_t bits = elem_bits(tt.elem_type());
        std::int64_t coef = 0;
        if (count.factors.empty()) v.written = Product{*v.bytes->maybe_constant(), {}};
        else if (!fits || (bits % 8 == 0 && __builtin_mul_overflow(count.coef, bits / 8, &coef))) return v;  // the canonical form
        else if (bits % 8 == 0) v.written = Product{coef, count.factors};
        else v.written = Product{1, "((" + count.to_string() + " + " + std::to_string(8 / bits - 1) + ")//" + std::to_string(8 / bits) + ")"};
        return v;
    }

    void add_weight(const ::onnx::TensorProto& t) {
        const auto too_large = [&] { return value_error("memory: the size of tensor '" + t.name() + "' does not fit in int64"); };
        std::int64_t bytes = 0;
        if (t.data_type() == elem::string) {
            for (const auto& s : t.string_data())
                if (__builtin_add_overflow(bytes, static_cast<std::int64_t>(s.size()), &bytes)) throw too_large();
        } else {
            std::int64_t n = 1;
            for (const auto d : t.dims())
                if (d < 0 || __builtin_mul_overflow(n, d, &n)) throw too_large();
            const std::int64_t bits = elem_bits(t.data_type());
            if (bits % 8 == 0 ? __builtin_mul_overflow(bits / 8, n, &bytes) : __builtin_add_overflow(n, 8 / bits - 1, &bytes))
                throw too_large();
            if (bits % 8 != 0) bytes /= 8 / bits;
        }
        add_bytes(elem_name(t.data_type()), bytes);
        if (t.data_location() == ::onnx::TensorProto::EXTERNAL) weights.external += bytes;  // at most the total
    }

    void add_bytes(const std::string& dtype, std::int64_t bytes) {
        if (__builtin_add_overflow(weights.total, bytes, &weights.total))
            throw value_error("memory: the weights' total does not fit in int64");
        weights.count += 1;
        weights.by_dtype[dtype] += bytes;  // at most the total
    }

    void add_constant(const ::onnx::AttributeProto& a) {
        const std::string& n = a.name();
        if (n == "value") add_weight(a.t());
        else if (n == "sparse_value") {
            add_weight(a.sparse_tensor().values());
            weights.count -= 1;
            add_weight(a.sparse_tensor().indices());
        } else if (n == "value_float") add_bytes("float32", 4);
        else if (n == "value_floats") add_bytes("float32", std::int64_t{4} * a.floats_size());
        else if (n == "value_int") add_bytes("int64", 8);
        else if (n == "value_ints") add_bytes("int64", std::int64_t{8} * a.ints_size());  // 2**28 ints fit in a protobuf, not 8 times them in int
        else if (n == "value_string") add_bytes("string", static_cast<std::int64_t>(a.s().size()));
        else if (n == "value_strings") {
            std::int64_t b = 0;
            for (const auto& s : a.strings()) b += static_cast<std::int64_t>(s.size());
            add_bytes("string", b);
        }
    }

    /// The model's node order when each node's inputs are produced before it, else a topological one.
    static std::vector<int> order_of(const ::onnx::GraphProto& g, std::string& which) {
        std::unordered_map<std::string_view, int> producer;
        for (int i = 0; i < g.node_size(); ++i)
            for (const auto& o : g.node(i).output())
                if (!o.empty()) producer.emplace(o, i);
        std::vector<std::vector<int>> deps(static_cast<std::size_t>(g.node_size()));
        std::vector<std::string_view> names;
        bool sorted = true;
        for (int i = 0; i < g.node_size(); ++i) {
            node_inputs(g.node(i), names);
            for (const auto n : names)
                if (const auto it = producer.find(n); it != producer.end() && it->second != i) {
                    deps[static_cast<std::size_t>(i)].push_back(it->second);
                    sorted = sorted && it->second < i;
                }
        }
        std::vector<int> order;
        which = sorted ? "model" : "topological";
        // depth first, each node after what it reads, ties in the model's order (infer_shapes proved it a DAG)
        std::vector<char> state(deps.size(), 0);
        for (int start = 0; start < g.node_size(); ++start) {
            if (state[static_cast<std::size_t>(start)]) continue;
            std::vector<std::pair<int, std::size_t>> stack{{start, 0}};
            state[static_cast<std::size_t>(start)] = 1;
            while (!stack.empty()) {
                auto& [n, k] = stack.back();
                const auto& d = deps[static_cast<std::size_t>(n)];
                if (k < d.size()) {
                    const int m = d[k++];
                    if (state[static_cast<std::size_t>(m)] == 1) throw value_error("memory: the graph is not a DAG");
                    if (state[static_cast<std::size_t>(m)] == 0) {
                        state[static_cast<std::size_t>(m)] = 1;
                        stack.emplace_back(m, 0);
                    }
                    continue;
                }
                state[static_cast<std::size_t>(n)] = 2;
                order.push_back(n);
                stack.pop_back();
            }
        }
        return order;
    }
};

}  // namespace detail

/// The memory of a shaped model (what infer_shapes wrote): every value's bytes, the weights,
/// the peak activations over the node order and the outputs' growth. `report`: the walk's
/// report, whose name_mapping reads an input dim_param that is not a symbol name and whose facts
/// are requirements of the domain the peak is exact over. `minimum`: the smallest size of input
/// dims (by the model's name or the symbol; 1 for those not named); `sizes`: sizes the caller
/// will ask at, in the domain too (a size of 0 lowers a minimum of 1 not given; one below a
/// minimum given is a value_error).
inline MemoryReport memory_of(const ::onnx::ModelProto& model, const ShapeReport& report = {}, const SymbolValues& minimum = {},
                              const SymbolValues& sizes = {}) {
    const std::map<std::string, std::string, std::less<>> names(report.name_mapping.begin(), report.name_mapping.end());
    detail::MemoryReader reader(names);
    MemoryGraph g = reader.graph(model.graph());
    MemoryDomain& d = g.domain;
    d.input_dims = reader.input_symbols(model.graph());
    d.dims = reader.symbolic_dims();
    for (const auto& f : report.facts) d.requirements.emplace_back(parse_sym_bool(f.condition), f.node);
    std::set<std::string, std::less<>> known = d.input_dims;
    for (const auto& e : d.dims)
        for (auto& s : e.free_symbols()) known.insert(std::move(s));
    for (const auto& [name, v] : report.by_symbol(minimum)) {
        if (!known.count(name)) throw names_no_dim("minimum", name, known);
        if (v < 0) throw value_error("memory: minimum " + name + "=" + std::to_string(v) + " is not a size (an integer >= 0)");
        d.minimum[name] = v;
    }
    for (const auto& [name, v] : report.by_symbol(sizes)) {
        if (!known.count(name)) continue;  // evaluate() names it
        if (const auto it = d.minimum.find(name); it != d.minimum.end() && v < it->second)
            throw value_error("memory: size " + name + "=" + std::to_string(v) + " is below its minimum " + std::to_string(it->second));
        if (v >= 0 && v < d.minimum_of(name)) d.minimum[name] = v;
    }
    return plan_memory(g, reader.weights);
}

}  // namespace yobx::onnx
