// yobx/adapters/onnx/detail/walker.hpp — the graph walk: one ShapeEnv, the rules looked up per node, the types written.
//
// Walker reads a GraphProto (inputs' dim_params as symbols, initializers,
// nodes in topological order, subgraphs walked when a rule asks), runs each
// node's rule from the registry (or an op profile, or ONNX's own inference as
// the fallback), and writes every value's type into value_info and the
// outputs. It knows no operator. Its parts: the order (graph_order.hpp),
// ONNX's inference (onnx_fallback.hpp), what the report learns of each node
// (walk_record.hpp), the types written once the walk is over (type_writer.hpp, into the
// sinks of type_sinks.hpp); run_node
// composes context_of, run_with_policy (dispatch under the error policy) and
// store_outputs.
#pragma once

#include <yobx/adapters/onnx/detail/protobuf.hpp>

#include <yobx/adapters/onnx/detail/graph_order.hpp>
#include <yobx/adapters/onnx/detail/light_model.hpp>
#include <yobx/adapters/onnx/detail/onnx_fallback.hpp>
#include <yobx/adapters/onnx/detail/tensors.hpp>
#include <yobx/adapters/onnx/detail/type_sinks.hpp>
#include <yobx/adapters/onnx/detail/type_writer.hpp>
#include <yobx/adapters/onnx/detail/walk_record.hpp>
#include <yobx/adapters/onnx/detail/wire.hpp>
#include <yobx/adapters/onnx/inference_options.hpp>
#include <yobx/onnx/ops.hpp>
#include <yobx/onnx/report.hpp>
#include <yobx/sym/abbreviate.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory_resource>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace yobx::onnx::detail {

/// The graph walk: one ShapeEnv, values by name in nested scopes (subgraphs see the outer values).
class Walker {
public:
    Walker(const InferenceOptions& options, ShapeReport& report, const std::map<std::string_view, int, std::less<>>& opsets)
        : options_(options), report_(report), opsets_(opsets),
          env_(options.hints.empty() ? ShapeEnvMode::strict : ShapeEnvMode::draft),
          policy_(options.strict || !options.hints.empty() ? BroadcastPolicy::strict
                  : options.auto_merge                        ? BroadcastPolicy::merge
                                                              : BroadcastPolicy::new_symbol),
          record_(report, env_), types_(options, report, env_, record_, onnx_) {}

    ShapeEnv& env() { return env_; }
    /// The model ONNX's own inference runs on when a node needs the fallback.
    void set_model(const ::onnx::ModelProto* model) { onnx_.set_model(model); }
    /// ... or where it comes from, asked at the first node that needs it (a LightModel's
    /// walk parses the model then); none: no fallback.
    void set_model_source(std::function<const ::onnx::ModelProto*()> source) { onnx_.set_model_source(std::move(source)); }

    using Scope = detail::Scope;
    using Produced = detail::Produced;

    /// The symbol (or expression) of a dim_param, created on first sight.
    SymInt dim_param(const std::string& text) {
        if (auto it = params_.find(text); it != params_.end()) return it->second;
        SymInt value;
        bool parsed = false;
        if (!hyphenated_name(text)) {  // ("seq-len": a name, seq_len, not seq - len)
            try {
                value = parse_sym(text);
                parsed = true;
            } catch (const yobx::error&) {
                parsed = false;  // not an expression: a name to make valid
            }
        }
        if (parsed) {
            for (const auto& name : value.free_symbols())
                if (!env_.has_symbol(name)) new_symbol(name);  // a bad hint is the user's error, not a renaming
        } else {
            std::string name = symbol_name(text);
            while (env_.has_symbol(name)) name += "_";
            value = new_symbol(name, text);
            report_.name_mapping.emplace_back(text, name);
        }
        params_.emplace(text, value);
        return value;
    }

    /// What a ValueInfoProto's type says, dims as symbols.
    std::optional<TensorInfo> declared(const ::onnx::TypeProto& type) {
        if (!type.has_tensor_type()) return std::nullopt;
        const auto& tt = type.tensor_type();
        TensorInfo info;
        info.elem_type = tt.elem_type();
        if (!tt.has_shape()) return info;
        Shape shape;
        for (const auto& d : tt.shape().dim()) {
            if (d.has_dim_value()) {
                if (d.dim_value() < 0) throw value_error("a declared dimension is negative: " + std::to_string(d.dim_value()));
                shape.push_back(d.dim_value());
            } else if (d.has_dim_param() && !d.dim_param().empty()) {
                shape.push_back(dim_param(d.dim_param()));
            } else {
                shape.push_back(record_.fresh_symbol("", "graph input", "a dimension the model declares with neither a value nor a name"));
            }
        }
        info.shape = std::move(shape);
        return info;
    }

    /// Walks a graph (a GraphProto, or a LightGraph) in `scope` (which holds the outer values),
    /// filling it with every value; `produced`, if given, gets where each node's outputs went.
    template <class Graph>
    void walk(Graph& g, Scope& scope, std::vector<const Scope*> outer, Produced* produced = nullptr) {
        scope.reserve(scope.size() + values_of(g));
        for (auto& init : g.initializer()) scope[init.name()] = initializer_info(init);
        for (const auto& in : g.input()) {
            if (scope.count(in.name())) continue;
            // a sequence, map or optional input is a value of unknown shape
            scope[in.name()] = declared(in.type()).value_or(TensorInfo{});
        }
        outer.push_back(&scope);
        const auto order = topological_order(g, [&](std::string_view name) {
            for (const Scope* known : outer)
                if (known->find(name) != known->end()) return true;
            return false;
        });
        if (produced != nullptr) {
            produced->first.assign(static_cast<std::size_t>(g.node_size()) + 1, 0);
            for (int i = 0; i < g.node_size(); ++i)
                produced->first[static_cast<std::size_t>(i) + 1] = produced->first[static_cast<std::size_t>(i)] + static_cast<std::size_t>(g.node(i).output_size());
            produced->slots.assign(produced->first.back(), nullptr);
        }
        for (int index : order)  // (a node without outputs points one past its predecessor's, never read)
            run_node(*g.mutable_node(index), scope, outer, produced ? produced->slots.data() + produced->first[static_cast<std::size_t>(index)] : nullptr);
    }

    /// About how many values a graph's walk adds to its scope (its initializers, inputs, and two
    /// outputs a node).
    template <class Graph>
    static std::size_t values_of(const Graph& g) {
        return static_cast<std::size_t>(g.initializer_size() + g.input_size() + 2 * g.node_size());
    }

    TensorInfo initializer_info(const ::onnx::TensorProto& init) const {
        return tensor_info(init, TensorName{"initializer", init.name()}, options_.model_dir);
    }
    static TensorInfo initializer_info(LightInitializer& init) {
        if (init.error) std::rethrow_exception(init.error);
        return std::move(init.info);
    }

    static const TensorInfo* lookup(std::string_view name, const std::vector<const Scope*>& scopes) {
        for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
            if (auto f = (*it)->find(name); f != (*it)->end()) return &f->second;
        return nullptr;
    }

    int opset_of(std::string_view domain) const {
        const auto it = opsets_.find(domain == "ai.onnx" ? "" : domain);
        return it == opsets_.end() ? 1 : it->second;
    }

    /// A node as the report and the errors name it, made only when one needs it.
    template <class Node>
    struct NodeName {
        const Node& node;
        mutable std::string text;
        const std::string& operator()() const {
            if (text.empty()) text = describe(node);
            return text;
        }
    };

    /// One node: its context, its rule under the error policy, what the report learns of it,
    /// its outputs into the scope. `slots`, if given, gets where each output went (Produced).
    template <class Node>
    void run_node(Node& node, Scope& scope, const std::vector<const Scope*>& scopes, const TensorInfo** slots = nullptr) {
        ++report_.nodes;
        const std::string_view domain = node.domain() == "ai.onnx" ? std::string_view() : std::string_view(node.domain());
        Attributes attributes;
        for (const auto& a : node.attribute()) attributes.emplace(a.name(), attribute_of(a, node.name(), options_.model_dir));
        NodeContext ctx = context_of(node, domain, attributes, scopes);
        // a node with graph attributes (If, Loop, Scan) gets them walked on request
        const auto subgraph = [&](std::string_view attribute, const SubgraphInferencer::Outputs& in) -> std::optional<SubgraphInferencer::Outputs> {
            if constexpr (std::is_same_v<Node, ::onnx::NodeProto>) return walk_subgraph(node, attribute, in, scopes);
            else {
                (void)attribute, (void)in;
                return std::nullopt;  // (a LightModel holds no subgraph)
            }
        };
        const SubgraphInferencer subgraphs(subgraph);
        ctx.set_subgraphs(&subgraphs);
        const WalkRecord::Mark before = record_.mark(env_.mode() == ShapeEnvMode::draft);
        const NodeName<Node> where{node, {}};
        run_with_policy(node, ctx, where);
        record_.record_checks(before, where);
        record_.note_reasons(ctx.fresh_symbols());
        for (const auto& d : ctx.divergences())
            if (static_cast<int>(d.output) < node.output_size())
                report_.divergences.push_back({std::string(node.output(static_cast<int>(d.output))), where(), d.readings});
        store_outputs(node, ctx, scope, slots, where);
        std::tie(spare_inputs_, spare_outputs_) = ctx.release();  // their memory for the next node
    }

    /// The node's context, its inputs looked up in the scopes, in the last node's vectors.
    template <class Node>
    NodeContext context_of(const Node& node, std::string_view domain, const Attributes& attributes, const std::vector<const Scope*>& scopes) {
        std::vector<const TensorInfo*> inputs = std::move(spare_inputs_);
        inputs.reserve(static_cast<std::size_t>(node.input_size()));
        for (const auto& i : node.input()) inputs.push_back(i.empty() ? nullptr : lookup(i, scopes));
        return NodeContext(env_, policy_, domain, node.op_type(), node.name(), opset_of(domain), std::move(inputs), attributes,
                           static_cast<std::size_t>(node.output_size()), std::move(spare_outputs_));
    }

    /// What shapes the node: its rule, else a custom operator's profile, else (an operator not
    /// covered) ONNX's own inference and, with guess_output_rank, the first input's rank.
    template <class Node>
    void dispatch(const Node& node, NodeContext& ctx) {
        if (const Rule rule = rule_of(ctx.domain(), node.op_type(), ctx.opset())) {
            rule(ctx);
        } else if (const auto* profile = options_.op_profiles.match(ctx.domain(), node.op_type(), ctx.inputs())) {
            profile->apply(ctx);
        } else {
            report_.not_covered[(ctx.domain().empty() ? std::string() : std::string(ctx.domain()) + ".") + std::string(node.op_type())] += 1;
            fallback(node, ctx);
            if (options_.guess_output_rank) guess_output_rank(ctx);
        }
    }

    /// dispatch under the error policy: strict mode stops at a rule's error or an undecidable
    /// question, a draft walk at a question its hints do not settle; the default mode never
    /// stops (ONNX's answer, else fresh symbols, and the error or question in the report).
    template <class Node>
    void run_with_policy(const Node& node, NodeContext& ctx, const NodeName<Node>& where) {
        try {
            dispatch(node, ctx);
        } catch (const UnknownInput&) {
            fallback(node, ctx);
        } catch (const GuardOnDataDependentSymNode& e) {
            if (options_.strict)
                throw value_error("node " + where() + ": strict mode cannot decide " + abbreviated(e.condition()) +
                                  " from the model's dims; without strict mode ONNX's rule gives a fresh symbol, and hints "
                                  "(--hint NAME=VALUE) make a draft walk that records the assumption");
            if (!options_.hints.empty())
                throw value_error("node " + where() + ": the draft walk cannot decide " + abbreviated(e.condition()) +
                                  ": give a hint for each of its symbols (--hint NAME=VALUE)");
            ctx.outputs().assign(ctx.outputs().size(), std::nullopt);
            fallback(node, ctx, "a question the ShapeEnv could not decide: " + e.condition());
        } catch (const yobx::error& e) {
            if (options_.strict) throw value_error("node " + where() + ": " + e.what());
            report_.node_errors.push_back({where(), e.what()});
            ctx.outputs().assign(ctx.outputs().size(), std::nullopt);
            fallback(node, ctx);
        }
    }

    /// The node's outputs into the scope, the symbols first seen there noted fresh.
    template <class Node>
    void store_outputs(const Node& node, NodeContext& ctx, Scope& scope, const TensorInfo** slots, const NodeName<Node>& where) {
        // every symbol of the env an input's or one noted fresh already: no output holds a new one
        const bool new_symbols = record_.new_symbols();
        for (int k = 0; k < node.output_size(); ++k) {
            const std::string_view name = node.output(k);
            if (name.empty()) continue;
            auto& out = ctx.outputs()[static_cast<std::size_t>(k)];
            TensorInfo info = out ? std::move(*out) : TensorInfo{};
            if (new_symbols) record_.note_fresh(info, where());
            const auto [it, fresh] = scope.try_emplace(name);
            it->second = std::move(info);
            if (slots != nullptr && fresh) slots[k] = &it->second;
        }
    }

    /// The registry's rule, looked up once per operator (a domain's opset is the model's).
    Rule rule_of(std::string_view domain, std::string_view op_type, int opset) {
        auto d = rules_.begin();
        while (d != rules_.end() && d->first != domain) ++d;  // (a model imports a few domains)
        if (d == rules_.end()) d = rules_.emplace(rules_.end(), domain, std::unordered_map<std::string_view, Rule>{});
        auto it = d->second.find(op_type);
        if (it == d->second.end()) it = d->second.emplace(op_type, registry_rule(domain, op_type, opset)).first;
        return it->second;
    }

    /// The registry's rule, found once per thread: the registry never changes, and a walk of a
    /// small model otherwise spends more finding its few operators than running them.
    static Rule registry_rule(std::string_view domain, std::string_view op_type, int opset) {
        thread_local std::map<RuleKey, Rule, RuleKeyLess> found;
        auto it = found.find(RuleKeyView(domain, op_type, opset));
        if (it == found.end()) it = found.emplace(RuleKey(domain, op_type, opset), default_registry().find(domain, op_type, opset)).first;
        return it->second;
    }
    using RuleKey = std::tuple<std::string, std::string, int>;  // (domain, op type, opset)
    using RuleKeyView = std::tuple<std::string_view, std::string_view, int>;
    struct RuleKeyLess {  // keys compared as views: looked up without a copy
        using is_transparent = void;
        static RuleKeyView view(const RuleKey& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k)}; }
        static RuleKeyView view(const RuleKeyView& k) { return k; }
        template <class A, class B>
        bool operator()(const A& a, const B& b) const {
            return view(a) < view(b);
        }
    };

    /// onnxruntime's guess_output_rank: each output still without a shape takes the rank of
    /// the first input, with fresh dims, and its type where the output has none.
    void guess_output_rank(NodeContext& ctx) {
        const TensorInfo* first = ctx.input(0);
        if (first == nullptr || !first->shape) return;
        for (auto& out : ctx.outputs()) {
            if (out && out->shape) continue;
            TensorInfo info = out ? std::move(*out) : TensorInfo{};
            if (info.elem_type == elem::undefined) info.elem_type = first->elem_type;
            Shape shape;
            for (std::size_t i = 0; i < first->shape->size(); ++i)
                shape.push_back(ctx.fresh("guess_output_rank: an operator no rule covers, given the rank of its first input"));
            info.shape = std::move(shape);
            out = std::move(info);
        }
    }

    /// ONNX's own inference for a node yobx cannot run: its type and shape where it says something.
    template <class Node>
    void fallback(const Node& node, NodeContext& ctx, const std::string& why = "a dimension ONNX's own inference leaves unknown") {
        if (!options_.onnx_fallback || !onnx_.has_model() || !onnx_.run()) return;  // run once, at the first node that needs it
        std::optional<bool> known;  // whether ONNX has a schema for the node, asked once
        for (int k = 0; k < node.output_size(); ++k) {
            auto& out = ctx.outputs()[static_cast<std::size_t>(k)];
            if (out && out->shape) continue;
            const OnnxFallback::Type* type = onnx_.type_of(node.output(k));
            if (type == nullptr || type->other) continue;
            TensorInfo info;
            info.elem_type = type->elem_type;
            if (type->dims) {
                Shape s;
                for (const auto& d : *type->dims) {
                    if (d.value) s.push_back(*d.value);
                    else if (!d.param.empty() && params_.count(d.param)) s.push_back(params_.at(d.param));
                    else s.push_back(ctx.fresh(why));
                }
                info.shape = std::move(s);
            }
            out = std::move(info);
            ++report_.from_onnx_inference;
            if (!known) known = onnx_.knows(node, opsets_);
            if (!*known) onnx_.add_declared_only(node.output(k));
        }
    }

    /// The outputs of the node's graph attribute `attribute`, walked in a scope of its own with
    /// `inputs` (nullopt: its declared type) inside the node's: what NodeContext::subgraph gives a
    /// control-flow rule. The subgraph's types are written once the whole walk succeeded.
    std::optional<SubgraphInferencer::Outputs> walk_subgraph(::onnx::NodeProto& node, std::string_view attribute,
                                                              const SubgraphInferencer::Outputs& inputs, const std::vector<const Scope*>& scopes) {
        ::onnx::GraphProto* g = nullptr;
        for (auto& a : *node.mutable_attribute())
            if (a.name() == attribute && a.type() == ::onnx::AttributeProto::GRAPH) {
                g = a.mutable_g();
                break;
            }
        if (g == nullptr) return std::nullopt;
        Scope inner;
        for (int i = 0; i < g->input_size() && i < static_cast<int>(inputs.size()); ++i)
            if (inputs[static_cast<std::size_t>(i)]) inner[g->input(i).name()] = *inputs[static_cast<std::size_t>(i)];
            else inner[g->input(i).name()] = declared(g->input(i).type()).value_or(TensorInfo{});
        walk(*g, inner, scopes);
        SubgraphInferencer::Outputs out;
        for (const auto& o : g->output()) {
            const TensorInfo* t = lookup(o.name(), {&inner});
            if (t == nullptr) t = lookup(o.name(), scopes);
            out.push_back(t ? std::optional<TensorInfo>(*t) : std::nullopt);
        }
        pending_.emplace_back(g, std::move(inner));
        return out;
    }

    /// Every value's type into the graph (TypeWriter::write_graph_types).
    template <class Graph>
    void write_graph_types(Graph& g, const Scope& scope, std::string* value_info = nullptr, const Produced* produced = nullptr) {
        types_.write_graph_types(g, scope, value_info, produced);
    }

    const std::map<std::string, SymInt, std::less<>>& params() const { return params_; }

    /// A hint that names no input dim is a mistake the user wants to hear of (a misspelt name).
    void check_hints() const {
        for (const auto& [name, value] : options_.hints)
            if (!record_.input_symbols().count(name) && !input_dim_params_.count(name)) {
                std::string known;
                for (const auto& s : record_.input_symbols()) known += (known.empty() ? "" : ", ") + s;
                throw value_error("hint '" + name + "': no input dim is named so (the model's: " + (known.empty() ? "none" : known) + ")");
            }
    }

    /// Writes the subgraphs' types, deferred so that a failed walk leaves the model as it was.
    void write_subgraphs() {
        types_.set_in_subgraph(true);
        for (auto& [g, scope] : pending_) write_graph_types(*g, scope);
        types_.set_in_subgraph(false);
        pending_.clear();
    }

private:
    const InferenceOptions& options_;
    ShapeReport& report_;
    const std::map<std::string_view, int, std::less<>>& opsets_;
    ShapeEnv env_;
    BroadcastPolicy policy_;
    WalkRecord record_;  // the report's symbols, facts and assumptions, as nodes make them
    std::map<std::string, SymInt, std::less<>> params_;
    OnnxFallback onnx_;  // ONNX's own inference, for the nodes no rule covers
    std::set<std::string, std::less<>> input_dim_params_;  // the dim_params renamed to a symbol, as written
    std::vector<std::pair<::onnx::GraphProto*, Scope>> pending_;
    TypeWriter types_;  // the types written once the walk is over
    // a node context's two vectors, emptied, for the next node's (run_node): one allocation each a walk
    std::vector<const TensorInfo*> spare_inputs_;
    std::vector<std::optional<TensorInfo>> spare_outputs_;
    // rule_of's rules by domain, then op type (views of the model's strings)
    std::vector<std::pair<std::string_view, std::unordered_map<std::string_view, Rule>>> rules_;

    /// An input dim's symbol `name`; `written`, the model's dim_param it stands for when that is
    /// not a symbol name ("batch size" for batch_size): a hint may name either.
    SymInt new_symbol(const std::string& name, std::string_view written = {}) {
        std::optional<std::int64_t> hint;
        if (const auto it = options_.hints.find(name); it != options_.hints.end()) hint = it->second;
        if (!written.empty()) {
            input_dim_params_.emplace(written);
            if (const auto it = options_.hints.find(written); it != options_.hints.end()) {
                if (hint && *hint != it->second) throw same_dim_twice("hints", it->first, it->second, name, *hint);
                hint = it->second;
            }
        }
        record_.add_input_symbol(name);
        // a named dim is at least 1, as onnxruntime's tool and torch.export (2) assume: without it a
        // Reshape entry `batch` could be the 0 that copies the input's dim, and nothing would be known
        // (a hint of 0 says the user means empty tensors: then [0, oo])
        return env_.create_symbol(name, hint, ValueRange{hint == 0 ? 0 : 1, ValueRange::inf});
    }

};

}  // namespace yobx::onnx::detail
