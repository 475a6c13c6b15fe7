// yobx/onnx/memory.hpp — the memory a graph needs, from its shapes alone: bytes of every value,
// weights, peak activation memory over the order the nodes run in, growth per unit of a dim.
//
// The ONNX adapter (yobx/adapters/onnx/model_memory.hpp) reads a shaped model into a MemoryGraph:
// each value with its bytes as an expression of the input dims, each node a step with what it
// produces and consumes. plan_memory() applies one liveness rule: a value is live from the step
// that produces it (graph inputs: from the first) to the step of its last consumer (graph
// outputs: to the last; a value nobody consumes: its own step only); a step's sum is the bytes
// live during it plus what its subgraphs need at their own peak. The peak is the maximum of the
// sums, one expression the ShapeEnv simplifies (the steps no other provably dominates, in a Max).
//
//   MemoryReport r = plan_memory(graph, weights);
//   r.peak.to_string();                         // "4*Max(n**2 + 48*n, 2*n**2 + 32*n)"
//   r.evaluate({{"batch", 8}, {"seq", 4096}});  // the bytes, the step of the peak, its largest values
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/error.hpp>
#include <yobx/onnx/elem_type.hpp>
#include <yobx/onnx/memory_domain.hpp>
#include <yobx/onnx/memory_peak.hpp>
#include <yobx/onnx/node_context.hpp>
#include <yobx/sym/abbreviate.hpp>
#include <yobx/sym.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// The bytes of `elements` elements of a type, packed as ONNX packs them (two 4-bit
/// elements a byte, four 2-bit ones, the last byte padded); nullopt for string and unknown types.
inline std::optional<SymInt> bytes_of_elements(int elem_type, const SymInt& elements) {
    const std::int64_t bits = elem_bits(elem_type);
    if (bits == 0) return std::nullopt;
    if (bits % 8 == 0) return SymInt(bits / 8) * elements;
    const std::int64_t per_byte = 8 / bits;
    return floordiv(elements + SymInt(per_byte - 1), SymInt(per_byte));
}

/// Bytes as a reader writes them: a constant (bytes per element times the constant dims) times
/// the symbolic dims as the model writes them, `32*batch*((height + 1)//2)*((width + 1)//2)`,
/// where the canonical form expands the floors (`8*batch*height*width - 8*batch*height*Mod(...)`).
struct Product {
    std::int64_t coef = 0;
    std::string factors;  ///< the symbolic dims joined by `*`, each parenthesized unless a name; empty: a constant

    std::string to_string() const {
        if (factors.empty()) return std::to_string(coef);
        return coef == 1 ? factors : std::to_string(coef) + "*" + factors;
    }
    /// A dim as a factor: a name as it is, anything else in parentheses.
    static std::string factor(const std::string& dim) {
        const bool name = !dim.empty() && (std::isalpha(static_cast<unsigned char>(dim[0])) || dim[0] == '_') &&
                          std::all_of(dim.begin(), dim.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
        return name ? dim : "(" + dim + ")";
    }
};

/// A sum of products, those with the same factors added, in the order they come: `6144*batch*seq + 16*batch*seq*seq + 8`.
inline std::string sum_text(const std::vector<const Product*>& terms) {
    std::vector<std::pair<std::string, std::int64_t>> grouped;
    std::int64_t constant = 0;
    const auto add = [](std::int64_t& to, std::int64_t v) {
        if (__builtin_add_overflow(to, v, &to)) throw value_error("memory: a sum of bytes does not fit in int64");
    };
    for (const Product* p : terms) {
        if (p->factors.empty()) {
            add(constant, p->coef);
            continue;
        }
        auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == p->factors; });
        if (it == grouped.end()) grouped.emplace_back(p->factors, p->coef);
        else add(it->second, p->coef);
    }
    std::string s;
    for (const auto& [f, c] : grouped) s += (s.empty() ? "" : " + ") + Product{c, f}.to_string();
    if (constant || s.empty()) s += (s.empty() ? "" : " + ") + std::to_string(constant);
    return s;
}

/// A graph as liveness sees it: values, the steps in the order they run, inputs and outputs.
struct MemoryGraph {
    struct Value {
        std::string name;
        std::optional<SymInt> bytes;  ///< nullopt: a dim, the rank or the element size is not known
        std::string kind = "tensor";  ///< "tensor", "sequence element", "optional"
        std::string why;              ///< why bytes is nullopt
        std::optional<Product> written;  ///< bytes as the dims are written (default: the canonical form)
    };
    struct Step {
        std::string node, op;
        std::vector<std::size_t> produced;  ///< indices into values
        std::vector<std::size_t> consumed;  ///< its inputs and the outer values its subgraphs read
        std::optional<SymInt> inner;        ///< the peak of its subgraphs (If: the larger branch)
    };
    std::vector<Value> values;
    std::vector<std::size_t> inputs, outputs;
    std::vector<Step> steps;
    std::string order = "model";  ///< "model": the model's node order; "topological": the walk's
    MemoryDomain domain;          ///< the sizes the model runs at: the peak is exact over them
};

/// The initializers' and constants' bytes.
struct Weights {
    std::int64_t total = 0, count = 0, external = 0;  ///< external: the bytes stored outside the model file
    std::map<std::string, std::int64_t> by_dtype;
};

/// What plan_memory found; evaluate() puts sizes in.
struct MemoryReport {
    struct Value {
        std::string name, kind, why;
        std::optional<SymInt> bytes;
        std::size_t first = 0, last = 0;  ///< the steps it is live in
        Product written;                  ///< bytes as the dims are written (`bytes` is the canonical form)
    };
    struct Growth {
        std::string dim;
        std::vector<std::string> outputs;  ///< the graph outputs whose bytes depend on dim
        SymInt bytes, per_unit;            ///< their bytes, and how much more for dim + 1
        std::string bytes_text;            ///< their bytes as written
        /// Stepped growth (the bytes step every `period` of dim, by `step`, which does not depend
        /// on dim: framing by a stride, `(length + 240)//320`): where per_unit depends on dim.
        std::optional<SymInt> step;
        std::int64_t period = 1;

        /// How a person says it: `512*batch bytes per unit of past`, `256*batch bytes every 320
        /// of length`.
        std::string text() const {
            if (step) return abbreviated(step->to_string()) + " bytes every " + std::to_string(period) + " of " + dim;
            return abbreviated(per_unit.to_string()) + " bytes per unit of " + dim;
        }
    };
    /// The report at given sizes.
    struct At {
        SymbolValues sizes;
        std::int64_t peak = 0, weights = 0, total = 0;
        std::size_t step = 0;  ///< the first step at the peak
        std::string node, op;
        std::vector<std::pair<std::string, std::int64_t>> largest;  ///< the largest values live there
        std::vector<std::optional<std::int64_t>> value_bytes;        ///< per value of `values`
        std::vector<std::optional<std::int64_t>> per_unit;           ///< per growth
    };

    std::string order;
    std::vector<Value> values;
    std::size_t unknown = 0;
    Weights weights;
    std::vector<std::string> step_nodes, step_ops;
    std::vector<SymInt> step_sums;                               ///< per step
    std::vector<std::pair<std::size_t, SymInt>> subgraphs;       ///< (step, its subgraphs' peak)
    MaxOf peak;                           ///< the canonical form
    std::string peak_text;                ///< the same Max, each step a sum of the values' bytes as written
    std::vector<std::size_t> peak_steps;  ///< the steps the peak is the Max of
    std::vector<std::string> peak_step_texts;  ///< each one's sum as written
    /// Per kept step: sizes of the domain where it alone is the largest; nullopt: unresolved
    /// (neither witnessed nor proven dominated; `unresolved` counts them).
    std::vector<std::optional<SymbolValues>> peak_witnesses;
    std::size_t unresolved = 0;
    std::optional<LargePeak> large;          ///< the step (an index into peak_steps) proven the peak once every size is at least its `from`
    MemoryDomain domain;                     ///< the sizes the peak is exact over
    std::map<std::string, std::int64_t, std::less<>> smallest;  ///< each symbol's smallest size in the domain
    std::vector<Growth> growth;
    std::optional<At> at;

    /// The bytes at `sizes`: every symbol of the peak needs a size (a value_error names the missing).
    At evaluate(const SymbolValues& sizes, std::size_t largest = 5) const {
        const auto known = symbols();
        for (const auto& [name, v] : sizes)
            if (!known.count(name)) throw names_no_dim("size", name, known);
        std::vector<std::string> missing;
        for (const auto& s : peak.free_symbols())
            if (!sizes.count(s)) missing.push_back(s);
        if (!missing.empty()) {
            std::string m, all;
            for (const auto& s : missing) m += (m.empty() ? "'" : ", '") + s + "'";
            for (const auto& s : peak.free_symbols()) all += (all.empty() ? "" : ", ") + s;
            throw value_error("memory: no size for " + m + " (the peak's symbols: " + all + ")");
        }
        if (const std::string why = domain.outside(sizes); !why.empty())
            throw value_error("memory: the sizes are outside the domain the peak is exact over: " + why +
                              (domain.below_minimum(sizes).empty() ? "" : " (a smaller minimum widens it)"));
        At a;
        a.sizes = sizes;
        a.weights = weights.total;
        const auto value = [&](const auto& e, std::string_view what) {
            try {
                return e.evaluate_with(sizes);
            } catch (const yobx::error& err) {
                throw value_error("memory: " + std::string(what) + " '" + abbreviated(e.to_string()) + "' at the given sizes: " + err.what());
            }
        };
        a.peak = value(peak, "the peak");
        if (__builtin_add_overflow(a.peak, a.weights, &a.total)) throw value_error("memory: the total at the given sizes does not fit in int64");
        for (std::size_t i = 0; i < step_sums.size(); ++i)
            if (value(step_sums[i], "the bytes of step " + std::to_string(i)) == a.peak) {
                a.step = i;
                break;
            }
        if (!step_sums.empty()) {
            a.node = step_nodes[a.step];
            a.op = step_ops[a.step];
        }
        for (const auto& v : values) {
            std::optional<std::int64_t> b;
            if (v.bytes && covered(*v.bytes, sizes)) b = value(*v.bytes, "the bytes of '" + v.name + "'");
            a.value_bytes.push_back(b);
            if (b && !step_sums.empty() && v.first <= a.step && a.step <= v.last) a.largest.emplace_back(v.name, *b);
        }
        std::stable_sort(a.largest.begin(), a.largest.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
        if (a.largest.size() > largest) a.largest.resize(largest);
        for (const auto& g : growth)
            a.per_unit.push_back(covered(g.per_unit, sizes) ? std::optional<std::int64_t>(value(g.per_unit, "the growth")) : std::nullopt);
        return a;
    }

    /// The lines the CLI's summary adds: weights, peak, growth (and the values at `at`).
    std::string summary() const {
        std::string s = "memory: weights " + human(weights.total) + " (" + std::to_string(weights.count) + " tensors); peak activations " +
                        peak_phrase() + " (over " + std::to_string(step_sums.size()) + " steps in the " + order + " order";
        s += unknown ? ", " + std::to_string(unknown) + " values of unknown size not counted)" : ")";
        for (const auto& g : growth) s += "\nmemory: outputs grow by " + g.text();
        if (at) {
            std::string sizes;
            for (const auto& [k, v] : at->sizes) sizes += (sizes.empty() ? "" : ", ") + k + "=" + std::to_string(v);
            s += "\nmemory at " + sizes + ": peak activations " + human(at->peak) + " at step " + std::to_string(at->step) + " (" +
                 at->op + " '" + at->node + "'), weights " + human(at->weights) + ", total " + human(at->total);
        }
        return s;
    }

    /// The peak as the summary says it: the step that is the peak once every size is large, from
    /// which size on, and how many others can be at smaller sizes; the whole Max (abbreviated)
    /// when no step is alone the largest as every size grows.
    std::string peak_phrase() const {
        if (!large || peak_steps.size() < 2) {
            std::string s = abbreviated(peak_text);
            if (unresolved) s += " (" + std::to_string(unresolved) + " of its " + std::to_string(peak_steps.size()) + " steps unresolved)";
            return s;
        }
        const std::size_t k = peak_steps[large->step];
        std::string s = abbreviated(peak_step_texts[large->step]) + " (" + step_ops[k] + " '" + step_nodes[k] + "') ";
        s += "once every size is at least " + std::to_string(large->from);
        const std::size_t others = peak_steps.size() - 1;
        s += ", " + std::to_string(others) + " other step" + (others == 1 ? "" : "s") + " at smaller sizes";
        if (unresolved) s += " (" + std::to_string(unresolved) + " unresolved)";
        return s;
    }

    /// The report's "memory" section, as JSON.
    std::string to_json(std::string_view indent = "  ") const {
        std::string s;
        yobx::detail::json::Writer w(s, indent);
        write_json(w);
        return s;
    }

    /// The report as a member of a larger document (the shape report's "memory").
    void write_json(yobx::detail::json::Writer& w) const {
        using yobx::detail::json::Writer;
        const auto sizes = [&](const auto& by_name) {
            w.begin_object();
            for (const auto& [k, v] : by_name) w.member(k, v);
            w.end();
        };
        w.begin_object(Writer::lines).member("order", order);
        w.key("weights").begin_object().member("total", weights.total).member("count", weights.count).member("external", weights.external);
        w.key("by_dtype");
        sizes(weights.by_dtype);
        w.end().member("peak", peak_text).key("peak_steps").begin_array(Writer::lines);
        for (std::size_t i = 0; i < peak_steps.size(); ++i) {
            const std::size_t k = peak_steps[i];
            w.begin_object().member("step", k).member("node", step_nodes[k]).member("op", step_ops[k]).member("bytes", peak_step_texts[i]);
            w.key("witness");
            if (i < peak_witnesses.size() && peak_witnesses[i]) sizes(*peak_witnesses[i]);
            else w.null();
            w.end();
        }
        w.end().member("unresolved", unresolved).key("large");
        if (large) {
            w.begin_object().member("step", peak_steps[large->step]).member("from", large->from).end();
        } else {
            w.null();
        }
        w.key("smallest");
        sizes(smallest);
        w.member("steps", step_sums.size()).key("subgraphs").begin_array();
        for (const auto& [step, bytes] : subgraphs)
            w.begin_object().member("step", step).member("node", step_nodes[step]).member("bytes", bytes.to_string()).end();
        w.end().key("growth").begin_array(Writer::lines);
        for (std::size_t i = 0; i < growth.size(); ++i) {
            w.begin_object().member("dim", growth[i].dim).member("bytes", growth[i].bytes_text).member("per_unit", growth[i].per_unit.to_string());
            if (growth[i].step) w.member("step", growth[i].step->to_string()).member("period", growth[i].period);
            if (at) w.member("per_unit_at", at->per_unit[i]);
            w.key("outputs").begin_array();
            for (const auto& o : growth[i].outputs) w.value(o);
            w.end().end();
        }
        w.end().member("unknown", unknown).key("values").begin_array(Writer::lines);
        for (std::size_t i = 0; i < values.size(); ++i) {
            const auto& v = values[i];
            w.begin_object().member("name", v.name).member("kind", v.kind).key("bytes");
            if (v.bytes) w.value(v.written.to_string());
            else w.null();
            if (at) w.member("bytes_at", at->value_bytes[i]);
            w.member("first", v.first).member("last", v.last);
            if (!v.why.empty()) w.member("why", v.why);
            w.end();
        }
        w.end();
        if (at) {
            w.key("at").begin_object().key("sizes");
            sizes(at->sizes);
            w.member("peak", at->peak).member("weights", at->weights).member("total", at->total).member("step", at->step);
            w.member("node", at->node).member("op", at->op).key("largest").begin_array();
            for (const auto& [name, bytes] : at->largest) w.begin_object().member("name", name).member("bytes", bytes).end();
            w.end().end();
        }
        w.end();
    }

    /// The binary unit bytes read best in, `B` to `EiB`, and its size: {"MiB", 1048576}.
    static std::pair<const char*, double> unit_of(double bytes) {
        static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        std::size_t u = 0;
        double scale = 1;
        while (bytes / scale >= 1024 && u + 1 < std::size(units)) {
            scale *= 1024;
            ++u;
        }
        return {units[u], scale};
    }

    /// `1.5 MiB`, `512 B`: binary units, three significant digits.
    static std::string human(std::int64_t bytes) {
        const auto [unit, scale] = unit_of(static_cast<double>(bytes));
        const double v = static_cast<double>(bytes) / scale;
        char buf[48];
        if (scale == 1) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
        else std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, unit);
        return buf;
    }

    /// The symbols of the values' bytes and of the peak.
    std::set<std::string, std::less<>> symbols() const {
        std::set<std::string, std::less<>> out;
        for (const auto& s : peak.free_symbols()) out.insert(s);
        for (const auto& v : values)
            if (v.bytes)
                for (const auto& s : v.bytes->free_symbols()) out.insert(s);
        return out;
    }

private:
    static bool covered(const SymInt& e, const SymbolValues& sizes) {
        for (const auto& s : e.free_symbols())
            if (!sizes.count(s)) return false;
        return true;
    }
};

namespace detail {

/// The growth's step and period when per_unit depends on its dim: over the period of the bytes'
/// quotients and remainders in that dim, the bytes grow by a step that does not depend on it.
inline void stepped_growth(MemoryReport::Growth& g, const ShapeEnv& env) {
    const auto holds = [&](const SymInt& e) {
        const auto fs = e.free_symbols();
        return std::find(fs.begin(), fs.end(), g.dim) != fs.end();
    };
    if (!holds(g.per_unit)) return;
    const auto period = g.bytes.period_in(g.dim);
    if (!period || *period <= 1) return;
    try {
        const SymInt later = g.bytes.subs({{g.dim, SymInt::symbol(g.dim) + SymInt(*period)}});
        const SymInt step = env.simplify(later - g.bytes);
        if (holds(step)) return;
        g.step = step;
        g.period = *period;
    } catch (const yobx::error&) {
        // a shift past int64: said per unit only
    }
}

}  // namespace detail

/// The liveness of `g`'s values over its steps, the peak and the outputs' growth per unit of each dim.
inline MemoryReport plan_memory(const MemoryGraph& g, Weights weights = {}) {
    MemoryReport r;
    r.order = g.order;
    r.domain = g.domain;
    r.weights = std::move(weights);
    const std::size_t n = g.steps.size(), last = n ? n - 1 : 0;
    constexpr std::size_t none = static_cast<std::size_t>(-1);
    std::vector<std::size_t> first(g.values.size(), none), until(g.values.size(), none);
    for (std::size_t v : g.inputs) first[v] = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t v : g.steps[i].produced)
            if (first[v] == none) first[v] = i;
        for (std::size_t v : g.steps[i].consumed) until[v] = i;
    }
    for (std::size_t v : g.outputs) until[v] = last;
    for (std::size_t v = 0; v < g.values.size(); ++v) {
        if (first[v] == none) continue;  // an outer value a subgraph reads, or nobody's
        if (until[v] == none || until[v] < first[v]) until[v] = first[v];
        const auto& gv = g.values[v];
        Product written{1, gv.bytes ? Product::factor(gv.bytes->to_string()) : std::string()};
        if (gv.written) written = *gv.written;
        else if (gv.bytes && gv.bytes->maybe_constant()) written = {*gv.bytes->maybe_constant(), {}};
        r.values.push_back({gv.name, gv.kind, gv.why, gv.bytes, first[v], until[v], std::move(written)});
        if (!gv.bytes) ++r.unknown;
    }
    // the step sums, incrementally: a value enters at its first step and leaves after its last
    std::vector<std::vector<const MemoryReport::Value*>> enter(n + 1), leave(n + 1);
    for (const auto& v : r.values)
        if (v.bytes) {
            enter[v.first].push_back(&v);
            leave[v.last].push_back(&v);
        }
    SymInt live(0);
    for (std::size_t i = 0; i < n; ++i) {
        for (const auto* v : enter[i]) live = live + *v->bytes;
        r.step_nodes.push_back(g.steps[i].node);
        r.step_ops.push_back(g.steps[i].op);
        if (g.steps[i].inner) {
            r.subgraphs.emplace_back(i, *g.steps[i].inner);
            r.step_sums.push_back(live + *g.steps[i].inner);
        } else {
            r.step_sums.push_back(live);
        }
        for (const auto* v : leave[i]) live = live - *v->bytes;
    }
    if (n == 0) {  // no node: the inputs, which are the outputs, are all there is
        for (const auto* v : enter[0]) live = live + *v->bytes;
        r.peak = MaxOf({live});
    } else {
        StepParts parts;  // the values live over their steps, each subgraph's peak at its own
        for (const auto& v : r.values)
            if (v.bytes) {
                parts.terms.push_back(*v.bytes);
                parts.live.emplace_back(v.first, v.last);
            }
        for (const auto& [step, e] : r.subgraphs) {
            parts.terms.push_back(e);
            parts.live.emplace_back(step, step);
        }
        PeakSteps found;
        r.peak = peak_of(r.step_sums, g.domain, &found, &parts);
        r.peak_steps = std::move(found.kept);
        r.peak_witnesses = std::move(found.witness);
        r.unresolved = found.unresolved;
        r.large = found.large;
        r.smallest = std::move(found.smallest);
    }
    // the kept steps as sums of the values' bytes as written
    std::vector<Product> inner_written;
    for (const auto& [step, e] : r.subgraphs) inner_written.push_back({1, Product::factor(e.to_string())});
    std::vector<const Product*> terms;
    for (const std::size_t k : n ? r.peak_steps : std::vector<std::size_t>{0}) {
        terms.clear();
        for (const auto& v : r.values)
            if (v.bytes && v.first <= k && k <= v.last) terms.push_back(&v.written);
        for (std::size_t j = 0; j < r.subgraphs.size(); ++j)
            if (r.subgraphs[j].first == k) terms.push_back(&inner_written[j]);
        r.peak_step_texts.push_back(sum_text(terms));
    }
    if (r.peak_step_texts.size() == 1) r.peak_text = r.peak_step_texts[0];
    else {
        r.peak_text = "Max(";
        for (std::size_t i = 0; i < r.peak_step_texts.size(); ++i) r.peak_text += (i ? ", " : "") + r.peak_step_texts[i];
        r.peak_text += ")";
    }
    // growth: the outputs' bytes, per unit of each dim they depend on
    std::map<std::string, MemoryReport::Growth> growth;
    std::vector<std::string> dims;
    for (std::size_t v : g.outputs)
        if (g.values[v].bytes)
            for (const auto& s : g.values[v].bytes->free_symbols()) {
                auto [it, fresh] = growth.try_emplace(s);
                if (fresh) dims.push_back(s);
                it->second.dim = s;
                it->second.outputs.push_back(g.values[v].name);
                it->second.bytes = it->second.bytes + *g.values[v].bytes;
            }
    std::map<std::string, const Product*, std::less<>> written;
    for (const auto& v : r.values) written.emplace(v.name, &v.written);
    for (const auto& d : dims) {
        auto& gr = growth[d];
        terms.clear();
        for (const auto& o : gr.outputs)
            if (const auto it = written.find(o); it != written.end()) terms.push_back(it->second);
        gr.bytes_text = sum_text(terms);
        const SymInt next = gr.bytes.subs({{d, SymInt::symbol(d) + SymInt(1)}});
        const ShapeEnv env = g.domain.env(gr.bytes.free_symbols());
        gr.per_unit = env.simplify(next - gr.bytes);
        detail::stepped_growth(gr, env);
        r.growth.push_back(std::move(gr));
    }
    return r;
}

}  // namespace yobx::onnx
