// yobx/adapters/onnx/walker.hpp — the graph walk: one ShapeEnv, the rules looked up per node, the types written.
//
// Walker reads a GraphProto (inputs' dim_params as symbols, initializers,
// nodes in topological order, subgraphs of If, Loop and Scan), runs each
// node's rule from the registry (or an op profile, or ONNX's own inference as
// the fallback), and writes every value's type into value_info and the
// outputs. It knows no operator.
#pragma once

#include <yobx/adapters/onnx/protobuf.hpp>

#include <yobx/adapters/onnx/light_model.hpp>
#include <yobx/adapters/onnx/options.hpp>
#include <yobx/adapters/onnx/tensors.hpp>
#include <yobx/adapters/onnx/wire.hpp>
#include <yobx/onnx/ops.hpp>
#include <yobx/onnx/report.hpp>

#include <onnx/shape_inference/implementation.h>

#include <cstdio>
#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <stdexcept>
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
                                                              : BroadcastPolicy::new_symbol) {}

    ShapeEnv& env() { return env_; }
    /// The model ONNX's own inference runs on when a node needs the fallback.
    void set_model(const ::onnx::ModelProto* model) {
        model_source_ = model != nullptr ? std::function<const ::onnx::ModelProto*()>([model] { return model; }) : nullptr;
    }
    /// ... or where it comes from, asked at the first node that needs it (a LightModel's
    /// walk parses the model then); none: no fallback.
    void set_model_source(std::function<const ::onnx::ModelProto*()> source) { model_source_ = std::move(source); }

    /// The values of a graph by name. The names are views of the model's strings (node outputs,
    /// inputs, initializers), which live as long as the walk and which it never changes.
    using Scope = std::pmr::unordered_map<std::string_view, TensorInfo>;

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
                shape.push_back(fresh_symbol("", "graph input", "a dimension the model declares with neither a value nor a name"));
            }
        }
        info.shape = std::move(shape);
        return info;
    }

    /// Where the walk put each node output of a graph in its scope, by node and output in the
    /// graph's order, so that write_graph_types reaches them without looking each name up again:
    /// null where the name was in the scope already (an input's or initializer's, written again).
    struct Produced {
        std::vector<std::size_t> first;  // a node's first output among `slots`
        std::vector<const TensorInfo*> slots;
    };

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
        const auto order = topological_order(g, outer);
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

    /// Node indices in an order where each input is produced before it is used; a cycle is an error.
    /// The names are views of the graph's strings, which the walk does not change.
    template <class Graph>
    std::vector<int> topological_order(const Graph& g, const std::vector<const Scope*>& known) {
        const auto n_nodes = static_cast<std::size_t>(g.node_size());
        // the map's nodes from one growing buffer (a small graph's on the stack), freed at once
        std::array<std::byte, 4096> first_buffer;
        std::pmr::monotonic_buffer_resource memory(first_buffer.data(), first_buffer.size());
        std::pmr::unordered_map<std::string_view, int> producer(&memory);
        producer.reserve(2 * n_nodes);
        for (int i = 0; i < g.node_size(); ++i)
            for (const auto& o : g.node(i).output())
                if (!o.empty()) producer[o] = i;
        const auto defined_outside = [&](std::string_view name) {
            for (const Scope* s : known)
                if (s->find(name) != s->end()) return true;
            return false;
        };
        // Exported models list their nodes in order: one pass proves it and the order is theirs
        // (what the search below would give, its errors included, which it alone reports).
        std::vector<int> order(n_nodes);
        std::vector<std::string_view> deps;
        bool sorted = true;
        for (int i = 0; i < g.node_size() && sorted; ++i) {
            order[static_cast<std::size_t>(i)] = i;
            node_inputs(g.node(i), deps);
            for (const std::string_view name : deps) {
                if (name.empty()) continue;
                // most inputs are an earlier node's output: one lookup
                if (const auto it = producer.find(name); it != producer.end() && it->second < i) continue;
                if (defined_outside(name)) continue;
                sorted = false;
                break;
            }
        }
        if (sorted) return order;
        order.clear();
        std::vector<std::vector<std::string_view>> inputs(n_nodes);
        std::vector<char> listed(n_nodes, 0);
        std::vector<int> state(n_nodes, 0);
        // iterative depth-first search, so that a long chain does not exhaust the stack
        for (int start = 0; start < g.node_size(); ++start) {
            if (state[static_cast<std::size_t>(start)] != 0) continue;
            std::vector<std::pair<int, int>> stack{{start, 0}};
            state[static_cast<std::size_t>(start)] = 1;
            while (!stack.empty()) {
                auto& [n, k] = stack.back();
                auto& d = inputs[static_cast<std::size_t>(n)];
                if (!listed[static_cast<std::size_t>(n)]) {
                    node_inputs(g.node(n), d);
                    listed[static_cast<std::size_t>(n)] = 1;
                }
                if (k < static_cast<int>(d.size())) {
                    const std::string_view name = d[static_cast<std::size_t>(k++)];
                    if (name.empty() || defined_outside(name)) continue;
                    const auto it = producer.find(name);
                    if (it == producer.end())
                        throw value_error("node " + describe(g.node(n)) + ": input '" + std::string(name) +
                                          "' is produced by no node, initializer or graph input");
                    auto& st = state[static_cast<std::size_t>(it->second)];
                    if (st == 1)
                        throw value_error("the graph is not a DAG: node " + describe(g.node(it->second)) + " depends on itself through '" +
                                          std::string(name) + "'");
                    if (st == 0) {
                        st = 1;
                        stack.emplace_back(it->second, 0);
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

    template <class Node>
    static std::string describe(const Node& n) {
        std::string out = "'";
        out += n.name().empty() ? (n.output_size() ? std::string_view(n.output(0)) : std::string_view("?")) : std::string_view(n.name());
        out += "' (";
        if (!n.domain().empty()) (out += n.domain()) += ".";
        return (out += n.op_type()) += ")";
    }

    /// A node's inputs and the outer values its subgraphs read, into `v` (views of the graph's names).
    static void node_inputs(const ::onnx::NodeProto& n, std::vector<std::string_view>& v) {
        v.assign(n.input().begin(), n.input().end());
        for (const auto& a : n.attribute())
            if (a.type() == ::onnx::AttributeProto::GRAPH) collect_outer(a.g(), v);
    }
    static void node_inputs(const LightNode& n, std::vector<std::string_view>& v) {  // (no subgraph)
        v.assign(n.input().begin(), n.input().end());
    }
    static void collect_outer(const ::onnx::GraphProto& g, std::vector<std::string_view>& v) {
        std::set<std::string_view> local;
        for (const auto& i : g.input()) local.insert(i.name());
        for (const auto& i : g.initializer()) local.insert(i.name());
        for (const auto& n : g.node())
            for (const auto& o : n.output()) local.insert(o);
        std::vector<std::string_view> inner;
        for (const auto& n : g.node()) {
            node_inputs(n, inner);
            for (const auto i : inner)
                if (!i.empty() && !local.count(i)) v.push_back(i);
        }
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

    template <class Node>
    void run_node(Node& node, Scope& scope, const std::vector<const Scope*>& scopes, const TensorInfo** slots = nullptr) {
        ++report_.nodes;
        const std::string_view domain = node.domain() == "ai.onnx" ? std::string_view() : std::string_view(node.domain());
        Attributes attributes;
        for (const auto& a : node.attribute()) attributes.emplace(a.name(), attribute_of(a, node.name(), options_.model_dir));
        std::vector<const TensorInfo*> inputs = std::move(spare_inputs_);  // the last node's vectors, their memory reused
        inputs.reserve(static_cast<std::size_t>(node.input_size()));
        for (const auto& i : node.input()) inputs.push_back(i.empty() ? nullptr : lookup(i, scopes));
        NodeContext ctx(env_, policy_, domain, node.op_type(), node.name(), opset_of(domain), std::move(inputs), attributes,
                        static_cast<std::size_t>(node.output_size()), std::move(spare_outputs_));
        const bool draft = env_.mode() == ShapeEnvMode::draft;
        const auto issues_before = draft ? draft_counts() : std::vector<std::size_t>{};
        const std::size_t asserts_before = env_.runtime_asserts().size();
        // the node as the report and the errors name it, made only when one needs it
        std::string where_text;
        const auto where = [&]() -> const std::string& {
            if (where_text.empty()) where_text = describe(node);
            return where_text;
        };
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
        try {
            if (const Rule rule = rule_of(domain, node.op_type(), ctx.opset())) {
                rule(ctx);
            } else if (const auto* profile = options_.op_profiles.match(domain, node.op_type(), ctx.inputs())) {
                apply_profile(*profile, ctx);
            } else {
                report_.not_covered[(domain.empty() ? std::string() : std::string(domain) + ".") + std::string(node.op_type())] += 1;
                fallback(node, ctx);
                if (options_.guess_output_rank) guess_output_rank(ctx);
            }
        } catch (const UnknownInput&) {
            fallback(node, ctx);
        } catch (const GuardOnDataDependentSymNode& e) {
            if (options_.strict)
                throw value_error("node " + where() + ": strict mode cannot decide " + e.condition() +
                                  " from the model's dims; without strict mode ONNX's rule gives a fresh symbol, and hints "
                                  "(--hint NAME=VALUE) make a draft walk that records the assumption");
            if (!options_.hints.empty())
                throw value_error("node " + where() + ": the draft walk cannot decide " + e.condition() +
                                  ": give a hint for each of its symbols (--hint NAME=VALUE)");
            // the default mode never throws: ONNX's answer, else fresh symbols, and the question in the report
            ctx.outputs().assign(ctx.outputs().size(), std::nullopt);
            fallback(node, ctx, "a question the ShapeEnv could not decide: " + e.condition());
        } catch (const yobx::error& e) {
            if (options_.strict) throw value_error("node " + where() + ": " + e.what());
            report_.node_errors.push_back({where(), e.what()});
            ctx.outputs().assign(ctx.outputs().size(), std::nullopt);
            fallback(node, ctx);
        }
        if (draft) record_assumptions(issues_before, where());
        if (env_.runtime_asserts().size() != asserts_before) record_facts(asserts_before, where());
        for (const auto& f : ctx.fresh_symbols()) fresh_reasons_[f.name] = f.why;
        // every symbol of the env an input's or one noted fresh already: no output holds a new one
        const bool new_symbols = env_.symbol_count() > input_symbols_.size() + fresh_names_.size();
        for (int k = 0; k < node.output_size(); ++k) {
            const std::string_view name = node.output(k);
            if (name.empty()) continue;
            auto& out = ctx.outputs()[static_cast<std::size_t>(k)];
            TensorInfo info = out ? std::move(*out) : TensorInfo{};
            if (new_symbols) note_fresh(info, where());
            const auto [it, fresh] = scope.try_emplace(name);
            it->second = std::move(info);
            if (slots != nullptr && fresh) slots[k] = &it->second;
        }
        std::tie(spare_inputs_, spare_outputs_) = ctx.release();
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
        if (!options_.onnx_fallback || !model_source_) return;
        if (onnx_types_ == nullptr) {  // once, at the first node that needs it
            const ::onnx::ModelProto* model = model_source_();
            if (model == nullptr) return;
            onnx_inference(*model);
        }
        std::optional<bool> known;                             // whether ONNX has a schema for the node, asked once
        for (int k = 0; k < node.output_size(); ++k) {
            auto& out = ctx.outputs()[static_cast<std::size_t>(k)];
            if (out && out->shape) continue;
            const auto it = onnx_types_->find(std::string(node.output(k)));
            if (it == onnx_types_->end() || it->second.other) continue;
            TensorInfo info;
            info.elem_type = it->second.elem_type;
            if (it->second.dims) {
                Shape s;
                for (const auto& d : *it->second.dims) {
                    if (d.value) s.push_back(*d.value);
                    else if (!d.param.empty() && params_.count(d.param)) s.push_back(params_.at(d.param));
                    else s.push_back(ctx.fresh(why));
                }
                info.shape = std::move(s);
            }
            out = std::move(info);
            ++report_.from_onnx_inference;
            if (!known) known = onnx_knows(node);
            if (!*known) declared_only_.emplace(node.output(k));
        }
    }

    /// Whether ONNX has a schema for the node, or the model a function of that name (whose body
    /// ONNX's inference walks): if neither, its inference gives the node's outputs nothing but
    /// the types the model declares for them.
    template <class Node>
    bool onnx_knows(const Node& node) const {
        const std::string_view domain = node.domain() == "ai.onnx" ? std::string_view() : std::string_view(node.domain());
        for (const auto& [d, name] : local_functions_)
            if (d == domain && name == node.op_type()) return true;
        const auto it = opsets_.find(domain);
        return it != opsets_.end() && ::onnx::OpSchemaRegistry::Schema(std::string(node.op_type()), it->second, std::string(it->first)) != nullptr;
    }

    /// ONNX's inference on a copy of the model, the types of its values by name (the fallback's source).
    struct OnnxDim {
        std::optional<std::int64_t> value;
        std::string param;
    };
    struct OnnxType {
        int elem_type = 0;
        std::optional<std::vector<OnnxDim>> dims;
        std::optional<::onnx::TypeProto> other;  // a sequence, map or optional type: written as ONNX gives it
    };
    void onnx_inference(const ::onnx::ModelProto& model) {
        for (const auto& f : model.functions()) local_functions_.emplace_back(f.domain(), f.name());
        auto types = std::make_unique<std::unordered_map<std::string, OnnxType>>();
        try {
            ::onnx::ModelProto copy = model;
            copy.mutable_graph()->clear_value_info();
            ::onnx::ShapeInferenceOptions o;
            o.check_type = false;
            o.error_mode = 0;
            // no data propagation: ONNX's (1.12 to 1.17) dereferences a null pointer on some
            // shape computations (an Add of an empty Shape slice), which would take the process
            // down; yobx propagates the values itself
            o.enable_data_propagation = false;
            ::onnx::shape_inference::InferShapes(copy, ::onnx::OpSchemaRegistry::Instance(), o);
            const auto add = [&](const ::onnx::ValueInfoProto& v) {
                OnnxType t;
                if (!v.type().has_tensor_type()) {
                    if (v.type().value_case() == ::onnx::TypeProto::VALUE_NOT_SET) return;
                    t.other = v.type();
                    (*types)[v.name()] = std::move(t);
                    return;
                }
                t.elem_type = v.type().tensor_type().elem_type();
                if (v.type().tensor_type().has_shape()) {
                    t.dims.emplace();
                    for (const auto& d : v.type().tensor_type().shape().dim())
                        t.dims->push_back(OnnxDim{d.has_dim_value() ? std::optional<std::int64_t>(d.dim_value()) : std::nullopt, d.dim_param()});
                }
                (*types)[v.name()] = std::move(t);
            };
            for (const auto& v : copy.graph().value_info()) add(v);
            for (const auto& v : copy.graph().output()) add(v);
        } catch (const std::exception&) {
            // ONNX's inference refused the model: no fallback, yobx's rules only
        }
        onnx_types_ = std::move(types);
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

    void apply_profile(const OpProfile& profile, NodeContext& ctx) {
        for (std::size_t k = 0; k < profile.outputs.size() && k < ctx.output_count(); ++k) {
            const auto& o = profile.outputs[k];
            Shape s;
            for (std::int64_t j = 0; j < o.rank; ++j) {
                if (o.dims.empty()) {
                    s.push_back(ctx.fresh("an output of a custom operator whose profile gives no dims"));
                    continue;
                }
                SymInt e = parse_sym(o.dims[static_cast<std::size_t>(j)]);
                std::map<std::string, SymInt, std::less<>> subs;
                for (const auto& name : e.free_symbols()) {
                    std::size_t in = 0, ax = 0;
                    if (std::sscanf(name.c_str(), "i%zu_%zu", &in, &ax) == 2 && ctx.input(in) && ctx.input(in)->shape &&
                        ax < ctx.input(in)->shape->size())
                        subs.emplace(name, ctx.input(in)->shape->at(ax));
                    else
                        ctx.fail("op profile dim '" + o.dims[static_cast<std::size_t>(j)] + "': '" + name + "' names no input axis");
                }
                s.push_back(ctx.simplify(e.subs(subs)));
            }
            ctx.set_output(k, o.elem_type, std::move(s));
        }
    }

    /// Every value's type into the graph: value_info for intermediate values, the outputs' types.
    /// With `value_info` given, the intermediate values are serialized there instead (each a
    /// GraphProto value_info field, the bytes protobuf writes for them) and the graph's own
    /// value_info is left out: what a caller that holds the model merges into its copy.
    /// `produced`, the walk's record of this graph (Produced), spares a lookup of each name.
    template <class Graph>
    void write_graph_types(Graph& g, const Scope& scope, std::string* value_info = nullptr, const Produced* produced = nullptr) {
        // the graph's output, input and initializer names (views), made at the first name looked up
        std::unordered_set<std::string_view> outputs, inputs;
        const auto graph_output_or_input = [&](std::string_view name) {
            if (outputs.empty() && inputs.empty()) {
                for (const auto& o : g.output()) outputs.insert(o.name());
                inputs.reserve(static_cast<std::size_t>(g.input_size() + g.initializer_size()));
                for (const auto& i : g.input()) inputs.insert(i.name());
                for (const auto& i : g.initializer()) inputs.insert(i.name());
            }
            return outputs.count(name) > 0 || inputs.count(name) > 0;
        };
        // the values of the graph's outputs, sorted: a node output recorded in `produced` is one of
        // them when its value is (the scope has one value per name)
        std::vector<const TensorInfo*> output_values;
        if (produced != nullptr) {
            for (const auto& o : g.output())
                if (const auto it = scope.find(o.name()); it != scope.end()) output_values.push_back(&it->second);
            std::sort(output_values.begin(), output_values.end(), std::less<>{});
        }
        // the model's own value_info, moved out (on the graph's arena, if any, so that nothing is copied)
        google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto> before(g.GetArena());
        before.Swap(g.mutable_value_info());
        std::unordered_map<std::string_view, const ::onnx::ValueInfoProto*> declared_info;
        for (const auto& v : before) declared_info[v.name()] = &v;
        if (value_info == nullptr) g.mutable_value_info()->Reserve(g.node_size());
        WireType wire;
        std::size_t slot = 0;
        for (const auto& n : g.node())
            for (const auto& name : n.output()) {
                const TensorInfo* info = produced != nullptr ? produced->slots[slot++] : nullptr;
                if (info != nullptr) {
                    if (std::binary_search(output_values.begin(), output_values.end(), info, std::less<>{})) continue;
                } else {  // not recorded: looked up by name
                    if (name.empty() || graph_output_or_input(name)) continue;
                    const auto it = scope.find(name);
                    if (it == scope.end()) continue;
                    info = &it->second;
                }
                const auto d = declared_info.empty() ? declared_info.end() : declared_info.find(name);
                const ::onnx::TypeProto* declared = d == declared_info.end() ? nullptr : &d->second->type();
                if (value_info != nullptr) {
                    wire.clear();
                    if (write_type(*info, declared, name, wire)) wire.append_value_info(*value_info, name);
                    continue;
                }
                auto* v = g.add_value_info();
                v->set_name(std::string(name));
                ProtoType proto{*v->mutable_type()};
                if (!write_type(*info, declared, name, proto)) g.mutable_value_info()->RemoveLast();
            }
        for (auto& o : *g.mutable_output()) {
            const auto it = scope.find(o.name());
            if (it == scope.end()) continue;
            const bool typed = o.has_type();
            const ::onnx::TypeProto old = o.type();
            o.clear_type();
            ProtoType proto{*o.mutable_type()};
            if (!write_type(it->second, &old, o.name(), proto)) {
                if (typed) *o.mutable_type() = old;
                else o.clear_type();
            }
        }
    }

    /// Where write_type writes a type: a TypeProto...
    struct ProtoType {
        ::onnx::TypeProto& out;
        ::onnx::TensorShapeProto* shape = nullptr;
        void other(const ::onnx::TypeProto& t) { out = t; }
        void elem_type(int type) { out.mutable_tensor_type()->set_elem_type(type); }
        void start_shape() { shape = out.mutable_tensor_type()->mutable_shape(); }
        ::onnx::TensorShapeProto_Dimension* dim() {
            if (shape == nullptr) start_shape();
            return shape->add_dim();
        }
        void dim_value(std::int64_t v) { dim()->set_dim_value(v); }
        void dim_param(const std::string& p) { dim()->set_dim_param(p); }
        void unknown_dim() { (void)dim(); }
    };

    /// ... or its serialization, written as protobuf writes it (fields in order, a set field
    /// written even when 0, negative integers as 10-byte varints), without building the message.
    struct WireType {
        // field numbers: TypeProto.tensor_type, Tensor.elem_type and shape, TensorShapeProto.dim,
        // Dimension.dim_value and dim_param, ValueInfoProto.name and type, GraphProto.value_info
        static constexpr std::uint64_t tensor_type = 1, elem_type_field = 1, shape = 2, dim = 1, dim_value_field = 1,
                                       dim_param_field = 2, name_field = 1, type_field = 2, value_info = 13;
        std::string other_, shape_, tensor_;
        int elem_type_ = 0;
        bool is_other_ = false, has_shape_ = false;
        void clear() {
            other_.clear();
            shape_.clear();
            elem_type_ = 0;
            is_other_ = has_shape_ = false;
        }
        void other(const ::onnx::TypeProto& t) {
            is_other_ = true;
            t.SerializeToString(&other_);
        }
        void elem_type(int type) { elem_type_ = type; }
        void start_shape() { has_shape_ = true; }
        void dim_value(std::int64_t v) {
            has_shape_ = true;
            const auto value = static_cast<std::uint64_t>(v);
            wire::put_head(shape_, dim, 1 + wire::varint_size(value));  // the tag of dim_value is one byte
            wire::put_tag(shape_, dim_value_field, wire::wire_varint);
            wire::put_varint(shape_, value);
        }
        void dim_param(const std::string& p) {
            has_shape_ = true;
            wire::put_head(shape_, dim, wire::field_size(dim_param_field, p.size()));
            wire::put_bytes(shape_, dim_param_field, p);
        }
        void unknown_dim() {
            has_shape_ = true;
            wire::put_head(shape_, dim, 0);
        }
        /// A ValueInfoProto {name, type} as GraphProto's value_info field, appended to `out`.
        void append_value_info(std::string& out, std::string_view name) {
            const std::string* type = &other_;
            if (!is_other_) {
                tensor_.clear();
                const auto elem = static_cast<std::uint64_t>(static_cast<std::int64_t>(elem_type_));
                const std::size_t body = 1 + wire::varint_size(elem) + (has_shape_ ? wire::field_size(shape, shape_.size()) : 0);
                wire::put_head(tensor_, tensor_type, body);
                wire::put_tag(tensor_, elem_type_field, wire::wire_varint);
                wire::put_varint(tensor_, elem);
                if (has_shape_) wire::put_bytes(tensor_, shape, shape_);
                type = &tensor_;
            }
            wire::put_head(out, value_info, wire::field_size(name_field, name.size()) + wire::field_size(type_field, type->size()));
            wire::put_bytes(out, name_field, name);
            wire::put_bytes(out, type_field, *type);
        }
    };

    /// One value's type. Where the model declared a dimension, the inferred one is written
    /// when it differs (a contradiction, reported); a declared dim yobx does not know is kept.
    /// False, and nothing written, for a value whose element type nobody knows (an operator
    /// neither yobx nor ONNX types): onnxruntime refuses a model holding a tensor type of
    /// element type 0 ("Invalid tensor data type 0"); ONNX's inference writes nothing there too.
    template <class Out>
    bool write_type(const TensorInfo& info, const ::onnx::TypeProto* model, std::string_view name, Out& out) {
        ++report_.values;
        if (!info.shape && info.elem_type == elem::undefined) {
            // not a tensor as far as yobx knows: a sequence, map or optional value keeps the type
            // the model declares, or ONNX's inference gives it
            const ::onnx::TypeProto* other = model && model->value_case() != ::onnx::TypeProto::VALUE_NOT_SET && !model->has_tensor_type()
                                                 ? model
                                                 : nullptr;
            if (other == nullptr && onnx_types_ != nullptr)
                if (const auto it = onnx_types_->find(std::string(name)); it != onnx_types_->end() && it->second.other) other = &*it->second.other;
            if (other != nullptr) {
                out.other(*other);
                ++report_.not_tensor;
                return true;
            }
        }
        const bool model_tensor = model && model->has_tensor_type();
        if (!in_subgraph_ && (info.elem_type == elem::undefined ||
                              (!options_.guess_output_rank && !declared_only_.empty() && declared_only_.count(std::string(name)) > 0)))
            ++report_.unknown_type;
        int type = info.elem_type;
        if (type == elem::undefined && model_tensor) type = model->tensor_type().elem_type();
        const bool model_shape = model_tensor && model->tensor_type().has_shape();
        if (type == elem::undefined) {
            if (!info.shape && !model_shape) ++report_.unknown_rank;
            return false;
        }
        out.elem_type(type);
        if (!info.shape) {
            if (model_shape) {
                // the model's own shape, but never a negative dim it may hold
                for (const auto& md : model->tensor_type().shape().dim()) {
                    if (md.has_dim_value() && md.dim_value() >= 0) out.dim_value(md.dim_value());
                    else if (md.has_dim_param() && readable(md.dim_param())) out.dim_param(md.dim_param());
                    else out.unknown_dim();
                }
                report_.dims_from_model += static_cast<std::size_t>(model->tensor_type().shape().dim_size());
            } else {
                ++report_.unknown_rank;
            }
            return true;
        }
        out.start_shape();
        const bool same_rank = model_shape && static_cast<int>(info.shape->size()) == model->tensor_type().shape().dim_size();
        for (std::size_t i = 0; i < info.shape->size(); ++i) {
            const SymInt& d0 = (*info.shape)[i];
            ++report_.dims;
            if (!same_rank && d0.is_constant()) {  // most dims: nothing to simplify, compare or print
                out.dim_value(*d0.maybe_constant());
                ++report_.constant;
                continue;
            }
            const SymInt& d = simplified(d0);
            const ::onnx::TensorShapeProto_Dimension* md = same_rank ? &model->tensor_type().shape().dim(static_cast<int>(i)) : nullptr;
            const bool fresh = is_fresh(d);
            if (md && md->has_dim_value() && md->dim_value() >= 0 && fresh) {
                out.dim_value(md->dim_value());
                ++report_.dims_from_model;
                continue;
            }
            // the model's constant against what yobx inferred: a different constant, or an expression proven never equal to it
            if (md && md->has_dim_value() && md->dim_value() >= 0 &&
                (d.maybe_constant() ? *d.maybe_constant() != md->dim_value() : env_.statically_known_true(d != md->dim_value())))
                report_.contradictions.push_back({std::string(name), static_cast<std::int64_t>(i), std::to_string(md->dim_value()), d.to_string()});
            if (const auto c = d.maybe_constant()) {
                out.dim_value(*c);
                ++report_.constant;
            } else {
                out.dim_param(printed(d));
                ++(fresh ? report_.fresh : report_.symbolic);
            }
        }
        return true;
    }

    /// A dim as written, simplified once: the same dims of many values reuse it (the walk is
    /// over: the ShapeEnv learns nothing more).
    const SymInt& simplified(const SymInt& d) {
        auto it = simplified_.find(d);
        if (it == simplified_.end()) it = simplified_.emplace(d, env_.simplify(d)).first;
        return it->second;
    }

    /// An expression as written: printed once, the same dims of many values reuse the text.
    const std::string& printed(const SymInt& d) {
        auto it = printed_.find(d);
        if (it == printed_.end()) it = printed_.emplace(d, d.to_string()).first;
        return it->second;
    }

    /// A dim_param that parse_sym reads (what yobx writes must be).
    static bool readable(const std::string& text) {
        try {
            (void)parse_sym(text);
            return true;
        } catch (const yobx::error&) {
            return false;
        }
    }

    bool is_fresh(const SymInt& d) const {
        if (fresh_names_.empty() || d.is_constant()) return false;
        for (const auto& s : d.free_symbols())
            if (fresh_names_.count(s)) return true;
        return false;
    }

    const std::map<std::string, SymInt, std::less<>>& params() const { return params_; }

    /// A hint that names no input dim is a mistake the user wants to hear of (a misspelt name).
    void check_hints() const {
        for (const auto& [name, value] : options_.hints)
            if (!input_symbols_.count(name) && !input_dim_params_.count(name)) {
                std::string known;
                for (const auto& s : input_symbols_) known += (known.empty() ? "" : ", ") + s;
                throw value_error("hint '" + name + "': no input dim is named so (the model's: " + (known.empty() ? "none" : known) + ")");
            }
    }

    /// Writes the subgraphs' types, deferred so that a failed walk leaves the model as it was.
    void write_subgraphs() {
        in_subgraph_ = true;
        for (auto& [g, scope] : pending_) write_graph_types(*g, scope);
        in_subgraph_ = false;
        pending_.clear();
    }

private:
    const InferenceOptions& options_;
    ShapeReport& report_;
    const std::map<std::string_view, int, std::less<>>& opsets_;
    ShapeEnv env_;
    BroadcastPolicy policy_;
    std::map<std::string, SymInt, std::less<>> params_;
    std::set<std::string, std::less<>> fresh_names_;
    std::map<std::string, std::string> fresh_reasons_;
    std::unique_ptr<std::unordered_map<std::string, OnnxType>> onnx_types_;
    std::function<const ::onnx::ModelProto*()> model_source_;  // for ONNX's inference (the fallback)
    std::set<std::string, std::less<>> input_symbols_;
    std::set<std::string, std::less<>> input_dim_params_;  // the dim_params renamed to a symbol, as written
    std::vector<std::pair<::onnx::GraphProto*, Scope>> pending_;
    // a node context's two vectors, emptied, for the next node's (run_node): one allocation each a walk
    std::vector<const TensorInfo*> spare_inputs_;
    std::vector<std::optional<TensorInfo>> spare_outputs_;
    bool in_subgraph_ = false;  // write_subgraphs is writing: values not counted in unknown_type
    std::unordered_set<std::string> declared_only_;  // outputs typed by the fallback from the model's declaration alone
    // the model's own functions, (domain, name): nodes ONNX's inference types through their bodies
    std::vector<std::pair<std::string, std::string>> local_functions_;
    std::unordered_map<SymInt, std::string> printed_;
    // rule_of's rules by domain, then op type (views of the model's strings)
    std::vector<std::pair<std::string_view, std::unordered_map<std::string_view, Rule>>> rules_;
    std::unordered_map<SymInt, SymInt> simplified_;  // write_type's dims, simplified once each

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
        input_symbols_.insert(name);
        // a named dim is at least 1, as onnxruntime's tool and torch.export (2) assume: without it a
        // Reshape entry `batch` could be the 0 that copies the input's dim, and nothing would be known
        // (a hint of 0 says the user means empty tensors: then [0, oo])
        return env_.create_symbol(name, hint, ValueRange{hint == 0 ? 0 : 1, ValueRange::inf});
    }

    SymInt fresh_symbol(const std::string& where, const std::string& op, const std::string& why) {
        SymInt s = env_.fresh_symbol("unk__", std::nullopt, ValueRange::size());
        fresh_names_.insert(s.to_string());
        report_.fresh_symbols.push_back({s.to_string(), where, op, why});
        return s;
    }

    /// Symbols first seen in a node's output are fresh: recorded with the node and the reason.
    void note_fresh(const TensorInfo& info, const std::string& where) {
        if (!info.shape) return;
        for (const auto& d : *info.shape)
            for (const auto& s : d.free_symbols()) {
                if (fresh_names_.count(s) || input_symbols_.count(s)) continue;
                fresh_names_.insert(s);
                const auto r = fresh_reasons_.find(s);
                report_.fresh_symbols.push_back({s, where, "", r == fresh_reasons_.end() ? "a broadcast or rule the ShapeEnv could not decide" : r->second});
            }
    }

    /// The checks a rule made since `before` (a convolution's output is at least 1): what
    /// the walk takes as given from here on, each with its node. A draft's answers are
    /// assumptions, listed apart.
    void record_facts(std::size_t before, const std::string& where) {
        const auto& asserts = env_.runtime_asserts();
        for (std::size_t i = before; i < asserts.size(); ++i) {
            if (asserts[i].message == "draft assumption") continue;
            if (asserts[i].message.starts_with("auto_merge: ")) {  // taken equal by auto_merge: an assumption
                add_assumption(where, asserts[i].message, asserts[i].condition.to_string(), 1);
                continue;
            }
            report_.facts.push_back({where, asserts[i].condition.to_string(), asserts[i].message});
        }
    }

    std::vector<std::size_t> draft_counts() const {
        std::vector<std::size_t> v;
        for (const auto& i : env_.draft_report().issues()) v.push_back(i.count);
        return v;
    }
    void record_assumptions(const std::vector<std::size_t>& before, const std::string& where) {
        const auto& issues = env_.draft_report().issues();
        for (std::size_t i = 0; i < issues.size(); ++i) {
            const std::size_t was = i < before.size() ? before[i] : 0;
            if (issues[i].count == was) continue;
            const std::string question = issues[i].requirement.empty() ? issues[i].condition.to_string() : issues[i].requirement;
            const std::string answer = issues[i].requirement.empty() ? (issues[i].answer ? "True" : "False") : issues[i].condition.to_string();
            add_assumption(where, question, answer, issues[i].count - was);
        }
    }
    void add_assumption(const std::string& where, const std::string& question, const std::string& answer, std::size_t count) {
        for (auto& a : report_.assumptions)
            if (a.node == where && a.question == question) {
                a.count += count;
                return;
            }
        report_.assumptions.push_back({where, question, answer, count});
    }
};

}  // namespace yobx::onnx::detail
