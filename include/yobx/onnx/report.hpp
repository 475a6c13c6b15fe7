// yobx/onnx/report.hpp — what a walk over an ONNX graph found, and custom operators' profiles.
//
// ShapeReport counts the dims written (constant, symbolic, fresh), lists each
// fresh symbol with its node and why, each assumption of a draft walk, each
// operator not covered, each contradiction with the model's own shapes and the
// dim_param names that were not symbol names; it prints as one line or as JSON.
// OpProfiles read draft export's op_profiles (JSON) so that a walk goes
// through custom operators.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/error.hpp>
#include <yobx/onnx/elem_type.hpp>
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

/// One profile of a custom operator: the inputs it matches (rank, dtype) and what its outputs are.
struct OpProfile {
    struct Input {
        std::int64_t rank = 0;
        int elem_type = elem::undefined;
    };
    struct Output {
        std::int64_t rank = 0;
        int elem_type = elem::undefined;
        std::vector<std::string> dims;  ///< expressions over iK_J (input K's axis J); empty: fresh symbols
    };
    std::vector<Input> inputs;
    std::vector<Output> outputs;
};

/// draft export's op_profiles: `{"mydomain.MyOp": [{"inputs": [{"rank": 3, "dtype": "float32"}],
/// "outputs": [{"rank": 3, "dtype": "float32", "dims": ["i0_0", "i0_1", "2*i0_2"]}]}]}`.
class OpProfiles {
public:
    /// Reads the JSON; a value_error names the path of what is wrong.
    static OpProfiles from_json(std::string_view text) {
        using yobx::detail::json::Node;
        const Node root = yobx::detail::json::Parser(text, "op profiles").parse();
        const auto fail = [](const std::string& where, const std::string& why) -> void {
            throw value_error("op profiles: " + where + ": " + why);
        };
        if (root.kind != Node::Kind::object) fail("$", "expected an object of operator names");
        OpProfiles out;
        for (std::size_t i = 0; i < root.keys.size(); ++i) {
            const std::string path = "$['" + root.keys[i] + "']";
            const Node& list = root.array[i];
            if (list.kind != Node::Kind::array) fail(path, "expected an array of profiles");
            auto& profiles = out.profiles_[root.keys[i]];
            for (std::size_t j = 0; j < list.array.size(); ++j) {
                const std::string p = path + "[" + std::to_string(j) + "]";
                const Node& prof = list.array[j];
                if (prof.kind != Node::Kind::object) fail(p, "expected an object");
                OpProfile profile;
                const auto tensors = [&](std::string_view key, auto add) {
                    const Node* l = prof.find(key);
                    if (l == nullptr || l->kind != Node::Kind::array) fail(p, "'" + std::string(key) + "' must be an array");
                    for (std::size_t k = 0; k < l->array.size(); ++k) {
                        const std::string tp = p + "." + std::string(key) + "[" + std::to_string(k) + "]";
                        const Node& t = l->array[k];
                        const Node* rank = t.find("rank");
                        const Node* dtype = t.find("dtype");
                        if (rank == nullptr || rank->kind != Node::Kind::integer || rank->integer < 0 || rank->integer > 64)
                            fail(tp, "'rank' must be an integer in [0, 64]");
                        if (dtype == nullptr || dtype->kind != Node::Kind::string || elem_type_of(dtype->string) == elem::undefined)
                            fail(tp, "'dtype' must name a dtype (float32, int64, ...)");
                        add(t, rank->integer, elem_type_of(dtype->string), tp);
                    }
                };
                tensors("inputs", [&](const Node&, std::int64_t rank, int type, const std::string&) { profile.inputs.push_back({rank, type}); });
                tensors("outputs", [&](const Node& t, std::int64_t rank, int type, const std::string& tp) {
                    OpProfile::Output o{rank, type, {}};
                    if (const Node* dims = t.find("dims")) {
                        if (dims->kind != Node::Kind::array || static_cast<std::int64_t>(dims->array.size()) != rank)
                            fail(tp, "'dims' must be an array of " + std::to_string(rank) + " strings");
                        for (const auto& d : dims->array) {
                            if (d.kind != Node::Kind::string) fail(tp, "'dims' must hold strings");
                            try {
                                (void)parse_sym(d.string);
                            } catch (const yobx::error& e) {
                                fail(tp, e.what());
                            }
                            o.dims.push_back(d.string);
                        }
                    }
                    profile.outputs.push_back(std::move(o));
                });
                profiles.push_back(std::move(profile));
            }
        }
        return out;
    }

    /// The first profile of `domain.op_type` whose inputs have these ranks and types, or nullptr.
    const OpProfile* match(std::string_view domain, std::string_view op_type, const std::vector<const TensorInfo*>& inputs) const {
        const auto it = profiles_.find((domain.empty() ? std::string() : std::string(domain) + ".") + std::string(op_type));
        if (it == profiles_.end()) return nullptr;
        for (const auto& p : it->second) {
            if (p.inputs.size() != inputs.size()) continue;
            bool ok = true;
            for (std::size_t i = 0; i < inputs.size() && ok; ++i)
                ok = inputs[i] && inputs[i]->rank() == p.inputs[i].rank && inputs[i]->elem_type == p.inputs[i].elem_type;
            if (ok) return &p;
        }
        return nullptr;
    }
    bool empty() const noexcept { return profiles_.empty(); }

private:
    std::map<std::string, std::vector<OpProfile>, std::less<>> profiles_;
};

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
    double seconds = 0;
    /// What the model needs in memory (yobx/adapters/onnx/memory.hpp), when asked for (--memory).
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
               " nodes of operators not covered; " + t + " s";
    }

    /// The report as JSON (the CLI's --report).
    std::string to_json() const {
        using yobx::detail::json::write_string;
        std::string s = "{\n";
        const auto num = [&](std::string_view key, std::size_t v) { s += "  \"" + std::string(key) + "\": " + std::to_string(v) + ",\n"; };
        num("nodes", nodes);
        num("values", values);
        num("dims", dims);
        num("constant", constant);
        num("symbolic", symbolic);
        num("fresh", fresh);
        num("from_model", dims_from_model);
        num("unknown_rank", unknown_rank);
        num("unknown_type", unknown_type);
        num("not_tensor", not_tensor);
        num("from_onnx_inference", from_onnx_inference);
        const auto list = [&](std::string_view key, std::size_t n, auto item) {
            s += "  \"" + std::string(key) + "\": [";
            for (std::size_t i = 0; i < n; ++i) {
                s += i ? ",\n    " : "\n    ";
                item(i);
            }
            s += n ? "\n  ],\n" : "],\n";
        };
        const auto field = [&](std::string_view key, std::string_view value, bool last = false) {
            s += "\"" + std::string(key) + "\": ";
            write_string(s, value);
            s += last ? "" : ", ";
        };
        std::vector<std::pair<std::string, std::size_t>> ops(not_covered.begin(), not_covered.end());
        list("not_covered", ops.size(), [&](std::size_t i) {
            // "domain.Op": the op type has no dot, the domain may have several
            const auto dot = ops[i].first.rfind('.');
            s += "{";
            field("domain", dot == std::string::npos ? "" : ops[i].first.substr(0, dot));
            field("op_type", dot == std::string::npos ? ops[i].first : ops[i].first.substr(dot + 1));
            field("op", ops[i].first);
            s += "\"count\": " + std::to_string(ops[i].second) + "}";
        });
        list("fresh_symbols", fresh_symbols.size(), [&](std::size_t i) {
            s += "{";
            field("symbol", fresh_symbols[i].symbol);
            field("node", fresh_symbols[i].node);
            field("why", fresh_symbols[i].why, true);
            s += "}";
        });
        list("assumptions", assumptions.size(), [&](std::size_t i) {
            s += "{";
            field("node", assumptions[i].node);
            field("question", assumptions[i].question);
            field("answer", assumptions[i].answer);
            s += "\"count\": " + std::to_string(assumptions[i].count) + "}";
        });
        list("facts", facts.size(), [&](std::size_t i) {
            s += "{";
            field("node", facts[i].node);
            field("condition", facts[i].condition);
            field("why", facts[i].why, true);
            s += "}";
        });
        list("contradictions", contradictions.size(), [&](std::size_t i) {
            s += "{";
            field("value", contradictions[i].value);
            s += "\"axis\": " + std::to_string(contradictions[i].axis) + ", ";
            field("model", contradictions[i].model);
            field("inferred", contradictions[i].inferred, true);
            s += "}";
        });
        list("name_mapping", name_mapping.size(), [&](std::size_t i) {
            s += "{";
            field("dim_param", name_mapping[i].first);
            field("symbol", name_mapping[i].second, true);
            s += "}";
        });
        list("node_errors", node_errors.size(), [&](std::size_t i) {
            s += "{";
            field("node", node_errors[i].node);
            field("error", node_errors[i].error, true);
            s += "}";
        });
        char t[32];
        std::snprintf(t, sizeof t, "%.6f", seconds);
        s += "  \"seconds\": " + std::string(t);
        if (memory) s += ",\n  \"memory\": " + memory->to_json();
        s += "\n}\n";
        return s;
    }
};

}  // namespace yobx::onnx
