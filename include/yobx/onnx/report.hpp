// yobx/onnx/report.hpp — what a walk over an ONNX graph found.
//
// ShapeReport counts the dims written (constant, symbolic, fresh), lists each
// fresh symbol with its node and why, each assumption of a draft walk, each
// operator not covered, each contradiction with the model's own shapes and the
// dim_param names that were not symbol names; it prints as one line or as JSON.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/error.hpp>
#include <yobx/onnx/memory.hpp>
#include <yobx/onnx/node_context.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::onnx {

/// What infer_shapes did: the counts of the one-line summary and the details of the JSON report.
/// The error of an input dim given two sizes by its two names (`what`: "sizes", "hints"): the
/// model's dim_param `written` and the symbol yobx named it (a ShapeReport's name_mapping).
inline value_error same_dim_twice(std::string_view what, const std::string& written, std::int64_t written_size,
                                  const std::string& symbol, std::int64_t symbol_size) {
    return value_error(std::string(what) + " '" + written + "' (" + std::to_string(written_size) + ") and '" + symbol + "' (" +
                       std::to_string(symbol_size) + ") name the same dim: the model's '" + written + "' is the symbol " + symbol);
}

struct ShapeReport {
    struct Fresh {
        std::string symbol, node, op, why;
    };
    struct Assumption {
        std::string node, question, answer;
        std::size_t count = 0;
    };
    struct Fact {
        std::string node, condition, why;
    };
    struct Contradiction {
        std::string value;
        std::int64_t axis = 0;
        std::string model, inferred;
    };
    /// A value whose shape onnxruntime and ONNX's reference compute differently.
    struct RuntimeDivergence {
        std::string value, node, readings;
    };
    struct NodeError {
        std::string node, error;
    };

    std::size_t nodes = 0;
    std::size_t values = 0;           ///< values written (value_info and outputs)
    std::size_t dims = 0;             ///< dims of values of known rank
    std::size_t constant = 0;         ///< written as dim_value
    std::size_t symbolic = 0;         ///< written as an expression of the inputs' dims
    std::size_t fresh = 0;            ///< written with a fresh symbol (data-dependent or undecidable)
    std::size_t dims_from_model = 0;  ///< kept from the model's own value_info
    std::size_t unknown_rank = 0;     ///< values written with a type only
    /// values of the main graph whose element type neither a rule nor ONNX's inference gives
    /// (written with the type the model declares, if any; an operator ONNX has no schema for
    /// gives its outputs only that): what onnxruntime's tool stops on
    std::size_t unknown_type = 0;
    std::size_t not_tensor = 0;       ///< sequences, maps and optionals: the type the model or ONNX's inference gives
    std::size_t from_onnx_inference = 0;
    std::map<std::string, std::size_t> not_covered;  ///< "domain.Op" -> count
    std::vector<Fresh> fresh_symbols;
    std::vector<Assumption> assumptions;
    std::vector<Fact> facts;  ///< what a rule took as given (a convolution's output is not empty)
    std::vector<Contradiction> contradictions;
    std::vector<std::pair<std::string, std::string>> name_mapping;  ///< dim_param as written -> symbol
    std::vector<NodeError> node_errors;
    std::vector<RuntimeDivergence> divergences;  ///< values whose shape depends on the runtime
    double seconds = 0;
    /// What the model needs in memory (yobx/adapters/onnx/model_memory.hpp), when asked for (--memory).
    std::optional<MemoryReport> memory;

    /// The symbol of an input dim the model names `dim`: name_mapping's symbol for a dim_param
    /// that is not a symbol name (`"batch size"` -> `batch_size`), else `dim` itself.
    [[nodiscard]] std::string symbol_of(std::string_view dim) const {
        for (const auto& [written, symbol] : name_mapping)
            if (written == dim) return symbol;
        return std::string(dim);
    }

    /// `sizes` by symbol: a size given by the name the model writes (`{"batch size": 2}`) is
    /// that of its symbol (`batch_size`), so either name can be given. Both names of one dim at
    /// two sizes are a value_error.
    [[nodiscard]] SymbolValues by_symbol(const SymbolValues& sizes) const {
        SymbolValues out = sizes;
        for (const auto& [written, symbol] : name_mapping) {
            const auto given = sizes.find(written);
            if (given == sizes.end()) continue;
            const auto [at, added] = out.emplace(symbol, given->second);
            if (!added && at->second != given->second) throw same_dim_twice("sizes", written, given->second, symbol, at->second);
            out.erase(written);
        }
        return out;
    }

    /// `12 values, 40 dims: 30 constant, 8 symbolic, 2 fresh, 0 unknown rank; 0 operators not covered; 0.001 s`.
    std::string summary() const {
        std::size_t uncovered = 0;
        for (const auto& [op, n] : not_covered) uncovered += n;
        char t[32];
        std::snprintf(t, sizeof t, "%.3f", seconds);
        return std::to_string(values) + " values, " + std::to_string(dims) + " dims: " + std::to_string(constant) + " constant, " +
               std::to_string(symbolic) + " symbolic, " + std::to_string(fresh) + " fresh, " + std::to_string(dims_from_model) +
               " from the model, " + std::to_string(unknown_rank) + " unknown rank; " + std::to_string(uncovered) +
               " nodes of operators not covered; " +
               (divergences.empty() ? std::string()
                                    : std::to_string(divergences.size()) + (divergences.size() == 1 ? " value" : " values") +
                                          " whose shape depends on the runtime (the report says how); ") +
               t + " s";
    }

    /// The report as JSON (the CLI's --report).
    std::string to_json() const {
        using yobx::detail::json::Writer;
        std::string s;
        Writer w(s);
        w.begin_object(Writer::lines);
        w.member("nodes", nodes).member("values", values).member("dims", dims).member("constant", constant);
        w.member("symbolic", symbolic).member("fresh", fresh).member("from_model", dims_from_model).member("unknown_rank", unknown_rank);
        w.member("unknown_type", unknown_type).member("not_tensor", not_tensor).member("from_onnx_inference", from_onnx_inference);
        // each list one item a line, each item an object of string members (and a count or an axis)
        const auto list = [&](std::string_view key, const auto& items, auto item) {
            w.key(key).begin_array(Writer::lines);
            for (const auto& x : items) {
                w.begin_object();
                item(x);
                w.end();
            }
            w.end();
        };
        list("not_covered", not_covered, [&](const auto& op) {
            // "domain.Op": the op type has no dot, the domain may have several
            const auto dot = op.first.rfind('.');
            w.member("domain", dot == std::string::npos ? std::string() : op.first.substr(0, dot));
            w.member("op_type", dot == std::string::npos ? op.first : op.first.substr(dot + 1));
            w.member("op", op.first).member("count", op.second);
        });
        list("fresh_symbols", fresh_symbols, [&](const auto& f) { w.member("symbol", f.symbol).member("node", f.node).member("why", f.why); });
        list("assumptions", assumptions, [&](const auto& a) {
            w.member("node", a.node).member("question", a.question).member("answer", a.answer).member("count", a.count);
        });
        list("facts", facts, [&](const auto& f) { w.member("node", f.node).member("condition", f.condition).member("why", f.why); });
        list("contradictions", contradictions, [&](const auto& c) {
            w.member("value", c.value).member("axis", c.axis).member("model", c.model).member("inferred", c.inferred);
        });
        list("name_mapping", name_mapping, [&](const auto& m) { w.member("dim_param", m.first).member("symbol", m.second); });
        list("runtime_divergences", divergences,
             [&](const auto& d) { w.member("value", d.value).member("node", d.node).member("readings", d.readings); });
        list("node_errors", node_errors, [&](const auto& e) { w.member("node", e.node).member("error", e.error); });
        char t[32];
        std::snprintf(t, sizeof t, "%.6f", seconds);
        w.key("seconds").raw(t);
        if (memory) {
            w.key("memory");
            memory->write_json(w);
        }
        w.end();
        s += "\n";
        return s;
    }
};

}  // namespace yobx::onnx
