// yobx/treespec_torch.hpp — torch's pytree JSON (treespec_dumps, protocol 1) for TreeSpec.
//
// Over 600 lines: it still holds torch's pytree JSON, the program's call binding and
// ProgramInputs, three concepts whose split into headers of their own is left
// (docs/architecture.md).
//
// An exported program's in_spec and out_spec, and an AOTInductor package's
// call spec (AOTIModelPackageLoader::get_call_spec), are written by
// torch.utils._pytree.treespec_dumps:
//   [1, {"type": "builtins.tuple", "context": "null", "children_spec": [
//        {"type": null, "context": null, "children_spec": []}, ...]}]
// A node is its serialized type name, its context as a JSON document in a
// string (a dict's keys: "[\"x\", \"y\"]"; "null" for a list or tuple; a
// namedtuple's type name), and its children; a leaf has type and context null.
// treespec_loads reads that into a TreeSpec, treespec_dumps writes it back so
// that torch's treespec_loads reads it. torch has no None or constant nodes
// (None is a leaf of its pytree, and torch.export keeps constants out of the
// spec): yobx's none and constant nodes are written as leaves.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/error.hpp>
#include <yobx/sym/parse.hpp>
#include <yobx/sym/symint.hpp>
#include <yobx/tensor.hpp>
#include <yobx/treespec.hpp>
#include <yobx/value.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace yobx {

namespace detail::torch_spec {

inline constexpr std::string_view tuple_type = "builtins.tuple";
inline constexpr std::string_view list_type = "builtins.list";
inline constexpr std::string_view dict_type = "builtins.dict";
inline constexpr std::string_view namedtuple_type = "collections.namedtuple";
// A namedtuple is a registered node named `collections.namedtuple:<its serialized type name>`.
inline constexpr std::string_view namedtuple_prefix = "collections.namedtuple:";

[[noreturn]] inline void fail(const std::string& path, const std::string& why) {
    throw value_error("treespec_loads: at " + path + ": " + why);
}

inline void write(json::Writer& w, const TreeSpec& spec) {
    // context: the JSON text torch keeps as a string (its keys, "null" for none), or JSON's null
    const auto node = [&](std::optional<std::string_view> type, std::optional<std::string> context) {
        w.begin_object().member("type", type).member("context", context).key("children_spec").begin_array();
        for (const TreeSpec& child : spec.children()) write(w, child);
        w.end().end();
    };
    const auto keys_json = [&] {
        std::string c;
        json::Writer(c).array(spec.keys());
        return c;
    };
    switch (spec.kind()) {
        case NodeKind::leaf:
        case NodeKind::none:
        case NodeKind::constant: node(std::nullopt, std::nullopt); return;
        case NodeKind::tuple: node(tuple_type, "null"); return;
        case NodeKind::list: node(list_type, "null"); return;
        case NodeKind::dict: node(dict_type, keys_json()); return;
        case NodeKind::custom:
            if (const std::string_view t = spec.type_name(); t.starts_with(namedtuple_prefix) && spec.keys().empty())
                node(namedtuple_type, std::string(t.substr(namedtuple_prefix.size())));
            else
                node(t, spec.keys().empty() ? std::string("null") : keys_json());
            return;
    }
}

// The keys a context holds: a JSON array of strings.
inline std::vector<std::string> context_keys(const json::Node& context, const std::string& path) {
    if (context.kind != json::Node::Kind::string) fail(path, "expected a string, got " + std::string(json::kind_name(context.kind)));
    json::Node doc;
    try {
        doc = json::Parser(context.string, "treespec_loads").parse();
    } catch (const value_error& e) {
        fail(path, std::string("the context is not JSON: ") + e.what());
    }
    if (doc.kind == json::Node::Kind::null) return {};
    if (doc.kind != json::Node::Kind::array)
        fail(path, "expected a JSON list of keys, got " + std::string(json::kind_name(doc.kind)));
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < doc.array.size(); ++i) {
        const json::Node& k = doc.array[i];
        if (k.kind != json::Node::Kind::string)
            fail(path + "[" + std::to_string(i) + "]",
                 "a key that is " + std::string(json::kind_name(k.kind)) + ": yobx's dict keys are strings");
        keys.push_back(k.string);
    }
    return keys;
}

inline TreeSpec read(const json::Node& n, const std::string& path) {
    if (n.kind != json::Node::Kind::object) fail(path, "expected an object, got " + std::string(json::kind_name(n.kind)));
    for (const auto& k : n.keys)
        if (k != "type" && k != "context" && k != "children_spec")
            fail(path, "unknown member \"" + k + "\", expected \"type\", \"context\" and \"children_spec\"");
    const json::Node* type = n.find("type");
    const json::Node* context = n.find("context");
    const json::Node* children = n.find("children_spec");
    for (const auto& [name, member] : {std::pair{"type", type}, std::pair{"context", context}, std::pair{"children_spec", children}})
        if (!member) fail(path, std::string("missing member \"") + name + "\"");
    if (children->kind != json::Node::Kind::array)
        fail(path + ".children_spec", "expected an array, got " + std::string(json::kind_name(children->kind)));
    if (type->kind == json::Node::Kind::null) {
        if (context->kind != json::Node::Kind::null || !children->array.empty())
            fail(path, "a leaf (type null) has a null context and no children");
        return TreeSpec::leaf();
    }
    if (type->kind != json::Node::Kind::string)
        fail(path + ".type", "expected a string or null, got " + std::string(json::kind_name(type->kind)));
    std::vector<TreeSpec> kids;
    kids.reserve(children->array.size());
    for (std::size_t i = 0; i < children->array.size(); ++i)
        kids.push_back(read(children->array[i], path + ".children_spec[" + std::to_string(i) + "]"));
    const std::string& t = type->string;
    const std::string at = path + ".context";
    if (t == tuple_type || t == list_type) {
        if (!context_keys(*context, at).empty()) fail(at, "a " + t + " has no keys");
        return t == tuple_type ? TreeSpec::tuple(kids) : TreeSpec::list(kids);
    }
    if (t == dict_type) {
        std::vector<std::string> keys = context_keys(*context, at);
        if (keys.size() != kids.size())
            fail(at, std::to_string(keys.size()) + " key(s) for " + std::to_string(kids.size()) + " children");
        try {
            return TreeSpec::dict(keys, kids);
        } catch (const value_error& e) {
            fail(at, e.what());
        }
    }
    if (t == namedtuple_type) {  // the context is the namedtuple's own serialized type name
        if (context->kind != json::Node::Kind::string || context->string.empty())
            fail(at, "a namedtuple's context is its type name");
        return TreeSpec::custom(std::string(namedtuple_prefix) + context->string, {}, kids);
    }
    // A registered class (transformers' DynamicCache, a user's): its type name, and its context
    // when that is a list of child names (null: positional children).
    if (t.starts_with(namedtuple_prefix))
        fail(path + ".type", "a registered type named " + std::string(namedtuple_prefix) + "...: yobx names namedtuples so");
    std::vector<std::string> keys = context_keys(*context, at);
    if (!keys.empty() && keys.size() != kids.size())
        fail(at, std::to_string(keys.size()) + " key(s) for " + std::to_string(kids.size()) + " children");
    return TreeSpec::custom(t, keys, kids);
}

// The tensors of v laid out as `spec` says, appended to out; `path` names v in errors.
template <class T>
void flatten_by(const Value<T>& v, const TreeSpec& spec, const std::string& path, std::vector<T>& out,
                std::vector<std::string>* paths) {
    using V = Value<T>;
    const auto expects = [&](const std::string& what) {
        throw value_error("flatten_call: at " + path + ": the program expects " + what + ", the call has " +
                          (v.kind() == V::Kind::none ? std::string("None") : v.type_name()));
    };
    switch (spec.kind()) {
        case NodeKind::leaf:
        case NodeKind::none:
        case NodeKind::constant:
            // torch flattens every leaf and keeps the tensors: None and scalars are not inputs of the program
            if (v.kind() == V::Kind::tensor) {
                out.push_back(v.tensor());
                if (paths) paths->push_back(path);
            } else if (v.kind() == V::Kind::list || v.kind() == V::Kind::tuple || v.kind() == V::Kind::dict ||
                     v.kind() == V::Kind::custom)
                expects("one tensor");
            return;
        case NodeKind::tuple:
        case NodeKind::list: {
            const bool tuple = spec.kind() == NodeKind::tuple;
            if (v.kind() == V::Kind::custom) {
                // A registered node where the program has a list: save_value pickles it as the list
                // of its children, so the eager model was exported with that list (a KV cache).
                const auto& c = v.custom();
                if (c.children.size() != spec.num_children())
                    throw value_error("flatten_call: at " + path + ": the program expects " + std::to_string(spec.num_children()) +
                                      " item(s), the call's " + v.type_name() + " has " + std::to_string(c.children.size()) +
                                      " children");
                const auto children = spec.children();
                for (std::size_t i = 0; i < children.size(); ++i)
                    flatten_by(c.children[i], children[i], path + (c.keys.empty() ? "[" + std::to_string(i) + "]" : "." + c.keys[i]),
                               out, paths);
                return;
            }
            if (v.kind() != (tuple ? V::Kind::tuple : V::Kind::list)) expects(tuple ? "a tuple" : "a list");
            if (v.items().size() != spec.num_children())
                throw value_error("flatten_call: at " + path + ": the program expects " + std::to_string(spec.num_children()) +
                                  " item(s), the call has " + std::to_string(v.items().size()));
            const auto children = spec.children();
            for (std::size_t i = 0; i < children.size(); ++i)
                flatten_by(v.items()[i], children[i], path + "[" + std::to_string(i) + "]", out, paths);
            return;
        }
        case NodeKind::dict: {
            if (v.kind() != V::Kind::dict) expects("a dict");
            const auto keys = spec.keys();
            for (const auto& [k, x] : v.dict())
                if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
                    std::string known;
                    for (const auto& key : keys) {
                        if (!known.empty()) known += ", ";
                        known += detail::repr_string(key);
                    }
                    throw value_error("flatten_call: extra input " + path + "[" + detail::repr_string(k) +
                                      "]: the program takes [" + known + "]");
                }
            const auto children = spec.children();
            for (std::size_t i = 0; i < children.size(); ++i) {  // in the spec's order, as torch's reorder_kwargs
                const std::string key(keys[i]);
                const auto it = v.dict().find(key);
                if (it == v.dict().end())
                    throw value_error("flatten_call: missing input " + path + "[" + detail::repr_string(key) + "]");
                flatten_by(it->second, children[i], path + "[" + detail::repr_string(key) + "]", out, paths);
            }
            return;
        }
        case NodeKind::custom: {
            // A registered class: its children in order (the type names of both sides may differ:
            // transformers.cache_utils.DynamicCache and yobx's DynamicCache).
            if (v.kind() != V::Kind::custom) expects("a " + std::string(spec.type_name()));
            const auto& c = v.custom();
            if (c.children.size() != spec.num_children())
                throw value_error("flatten_call: at " + path + ": the program expects " + std::to_string(spec.num_children()) +
                                  " children of " + std::string(spec.type_name()) + ", the call has " +
                                  std::to_string(c.children.size()));
            const auto children = spec.children();
            for (std::size_t i = 0; i < children.size(); ++i) {
                std::string at = path;
                if (c.keys.empty()) at += '[' + std::to_string(i) + ']';
                else at += '.' + c.keys[i];
                flatten_by(c.children[i], children[i], at, out, paths);
            }
            return;
        }
    }
}

}  // namespace detail::torch_spec

/// The tensors an exported program (or an AOTInductor package) takes for a call, in its order:
/// `call` is the tuple (args, kwargs) (as check_discrepancies gives a runner), `in_spec` the
/// program's input spec (treespec_loads of its call spec). torch's rule: keyword arguments in the
/// spec's order, every leaf flattened, only the tensors kept (None and scalars are not inputs).
/// Errors name the input: `flatten_call: missing input kwargs['attention_mask']`,
/// `flatten_call: extra input kwargs['mask']: the program takes ['x', 'y']`,
/// `flatten_call: at args[1]: the program expects a tuple, the call has list`.
/// `paths`, when given, receives each tensor's place in the call (`args[0]`, `kwargs['mask']`).
template <class T>
std::vector<T> flatten_call(const Value<T>& call, const TreeSpec& in_spec, std::vector<std::string>* paths = nullptr) {
    using V = Value<T>;
    std::vector<T> out;
    out.reserve(in_spec.num_leaves());
    const bool args_kwargs = in_spec.kind() == NodeKind::tuple && in_spec.num_children() == 2 &&
                             call.kind() == V::Kind::tuple && call.items().size() == 2;
    if (!args_kwargs) {
        detail::torch_spec::flatten_by(call, in_spec, "call", out, paths);
        return out;
    }
    detail::torch_spec::flatten_by(call.items()[0], in_spec.child(0), "args", out, paths);
    detail::torch_spec::flatten_by(call.items()[1], in_spec.child(1), "kwargs", out, paths);
    return out;
}

/// The call (args, kwargs) laid out as `in_spec` takes it, binding each argument to its parameter
/// by `parameters` (the signature's names, in order): the program's positional inputs are the first
/// parameters, its keywords the spec's keys. An input the call passed by position and the program
/// takes by name (or the other way round) moves; an argument the call passed twice, or a positional
/// one beyond the parameters, is a value_error. A spec that is not (args, kwargs) leaves the call as is.
///   arrange_call(((ids,), {"mask": m}), in_spec_of(export(model, (), kwargs=...)), {"input_ids", "mask"})
///     == ((), {"input_ids": ids, "mask": m})
template <class T>
Value<T> arrange_call(const Value<T>& call, const TreeSpec& in_spec, const std::vector<std::string>& parameters) {
    using V = Value<T>;
    if (!(in_spec.kind() == NodeKind::tuple && in_spec.num_children() == 2 && in_spec.child(0).kind() == NodeKind::tuple &&
          in_spec.child(1).kind() == NodeKind::dict && call.kind() == V::Kind::tuple && call.items().size() == 2 &&
          call.items()[1].kind() == V::Kind::dict))
        return call;
    typename V::Dict bound;
    const auto& args = call.items()[0].items();
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (i >= parameters.size())
            throw value_error("arrange_call: positional argument " + std::to_string(i) + " has no parameter (" +
                              std::to_string(parameters.size()) + " given)");
        bound.append_unique(parameters[i], args[i]);
    }
    for (const auto& [k, v] : call.items()[1].dict()) {
        if (bound.contains(k)) throw value_error("arrange_call: argument " + detail::repr_string(k) + " is passed twice");
        bound.append_unique(k, v);
    }
    const std::size_t n = in_spec.child(0).num_children();
    typename V::List new_args;
    for (std::size_t i = 0; i < n; ++i) {
        const auto it = i < parameters.size() ? bound.find(parameters[i]) : bound.end();
        if (it == bound.end())
            throw value_error("flatten_call: missing input args[" + std::to_string(i) + "]" +
                              (i < parameters.size() ? " (" + detail::repr_string(parameters[i]) + ")" : std::string()));
        new_args.push_back(it->second);
    }
    typename V::Dict new_kwargs;
    for (const auto& [k, v] : bound) {
        const auto p = std::find(parameters.begin(), parameters.end(), k);
        if (p != parameters.end() && static_cast<std::size_t>(p - parameters.begin()) < n) continue;
        new_kwargs.append_unique(k, v);  // flatten_call says if the program does not take it
    }
    return V::tuple({V::tuple(std::move(new_args)), V::dict(std::move(new_kwargs))});
}

/// What a runner checks beyond the program's own constraints (PackageRunner's options):
/// with `as_observed`, also what yobx saw in every observed call: the dimensions that carried one
/// label equal, and each label's size within its observed range, `range_slack` units beyond it
/// allowed on each side. Off by default: the exported program's constraints are the contract.
struct RunnerOptions {
    bool as_observed = false;
    std::int64_t range_slack = 0;
};

/// What a program says its tensor inputs are, in the order of the flat call: each one's dtype
/// (Python's name without `torch.`) and shape, a dynamic dimension by its symbol:
///   [{"dtype": "int64", "shape": ["s0", "s1"]}, {"dtype": "float32", "shape": ["s0", 3, 224, 224]}]
/// (what yobx-export writes in a package's yobx.inputs metadata). check() refuses
/// a call that breaks it before it runs: AOTInductor itself runs an input of another rank.
class ProgramInputs {
public:
    struct Input {
        std::string dtype;
        std::vector<std::optional<std::int64_t>> dims;  // nullopt: dynamic
        std::vector<std::string> text;                 // each dimension as written: "s0", "5", "s1 + s11"
        std::vector<SymInt> strides;                   // the strides the program was compiled for; empty: contiguous
    };
    /// A range constraint of the exported program: min and max (nullopt: unbounded above).
    struct Range {
        std::int64_t min = 0;
        std::optional<std::int64_t> max;
    };
    /// A condition the program asserts over its input symbols, as torch prints it
    /// (`Eq(Mod(s1, 8), 0)`, `Ne(s0, s2)`, `s1 <= s3`); `rule` empty when yobx cannot evaluate it,
    /// `reason` saying why (unchecked()).
    struct Constraint {
        std::string text;
        std::optional<SymBool> rule;
        std::string reason;
    };
    /// What the observed calls said of one of yobx's labels: its smallest and largest size and
    /// whether its dimensions were equal in every call (RunnerOptions::as_observed).
    struct Observed {
        std::int64_t min = 0, max = 0;
        bool tied = false;
    };

    /// Reads the JSON: a list of inputs, or {"inputs": [...], "ranges": {"s0": [2, null], ...},
    /// "labels": {"s0": "batch_size", ...}} (the range constraints of the exported program, by
    /// symbol or expression, and yobx's labels of its symbols, which the messages use); a
    /// value_error names the entry and what is wrong. A dimension is an integer, a symbol or an expression
    /// of symbols as torch prints it (`s1 + s11`).
    static ProgramInputs from_json(std::string_view json) {
        using detail::json::Node;
        const Node doc = detail::json::Parser(json, "ProgramInputs").parse();
        const Node* list = &doc;
        ProgramInputs out;
        if (doc.kind == Node::Kind::object) {
            list = doc.find("inputs");
            if (!list) throw value_error("ProgramInputs: expected a list of inputs or {\"inputs\": [...], \"ranges\": {...}}");
            if (const Node* labels = doc.find("labels")) {
                if (labels->kind != Node::Kind::object) throw value_error("ProgramInputs: \"labels\" must be an object");
                for (std::size_t i = 0; i < labels->keys.size(); ++i) {
                    if (labels->array[i].kind != Node::Kind::string || !is_symbol(labels->keys[i]))
                        throw value_error("ProgramInputs: the label of " + labels->keys[i] + ": expected a symbol and a string");
                    out.labels_[labels->keys[i]] = labels->array[i].string;
                }
            }
            if (const Node* constraints = doc.find("constraints")) {
                if (constraints->kind != Node::Kind::array) throw value_error("ProgramInputs: \"constraints\" must be a list");
                for (const Node& c : constraints->array) {
                    if (c.kind != Node::Kind::string) throw value_error("ProgramInputs: a constraint is a string, got " +
                                                                        std::string(detail::json::kind_name(c.kind)));
                    Constraint constraint{c.string, std::nullopt, {}};
                    try {
                        constraint.rule = parse_sym_bool(c.string);
                    } catch (const error& e) {
                        constraint.reason = std::string("yobx does not read it: ") + e.what();
                    }
                    out.constraints_.push_back(std::move(constraint));
                }
            }
            if (const Node* observed = doc.find("observed")) {
                if (observed->kind != Node::Kind::object) throw value_error("ProgramInputs: \"observed\" must be an object");
                for (std::size_t i = 0; i < observed->keys.size(); ++i) {
                    const Node& o = observed->array[i];
                    const Node* lo = o.kind == Node::Kind::object ? o.find("min") : nullptr;
                    const Node* hi = o.kind == Node::Kind::object ? o.find("max") : nullptr;
                    const Node* tied = o.kind == Node::Kind::object ? o.find("tied") : nullptr;
                    if (!lo || !hi || !tied || lo->kind != Node::Kind::integer || hi->kind != Node::Kind::integer ||
                        tied->kind != Node::Kind::boolean || lo->integer < 0 || hi->integer < lo->integer)
                        throw value_error("ProgramInputs: observed " + observed->keys[i] +
                                          ": expected {\"min\": a size, \"max\": a size at least min, \"tied\": a boolean}");
                    out.observed_[observed->keys[i]] = Observed{lo->integer, hi->integer, tied->boolean};
                }
            }
            if (const Node* ranges = doc.find("ranges")) {
                if (ranges->kind != Node::Kind::object) throw value_error("ProgramInputs: \"ranges\" must be an object");
                for (std::size_t i = 0; i < ranges->keys.size(); ++i) {
                    const Node& r = ranges->array[i];
                    const std::string at = "ProgramInputs: range of " + ranges->keys[i];
                    if (r.kind != Node::Kind::array || r.array.size() != 2 || r.array[0].kind != Node::Kind::integer ||
                        (r.array[1].kind != Node::Kind::integer && r.array[1].kind != Node::Kind::null))
                        throw value_error(at + ": expected [min, max or null]");
                    Range range{r.array[0].integer, std::nullopt};
                    if (r.array[1].kind == Node::Kind::integer) range.max = r.array[1].integer;
                    out.ranges_.emplace_back(ranges->keys[i], range);
                }
            }
        }
        if (list->kind != Node::Kind::array) throw value_error("ProgramInputs: expected a list of inputs, got " + std::string(detail::json::kind_name(list->kind)));
        for (std::size_t i = 0; i < list->array.size(); ++i) {
            const Node& n = list->array[i];
            const std::string at = "ProgramInputs: input " + std::to_string(i);
            const Node* dtype = n.kind == Node::Kind::object ? n.find("dtype") : nullptr;
            const Node* shape = n.kind == Node::Kind::object ? n.find("shape") : nullptr;
            if (!dtype || dtype->kind != Node::Kind::string || !shape || shape->kind != Node::Kind::array)
                throw value_error(at + ": expected {\"dtype\": a string, \"shape\": a list}");
            Input in{dtype->string, {}, {}, {}};
            for (const Node& d : shape->array) {
                if (d.kind == Node::Kind::integer && d.integer >= 0) {
                    in.dims.emplace_back(d.integer);
                    in.text.push_back(std::to_string(d.integer));
                } else if (d.kind == Node::Kind::string && !d.string.empty()) {
                    if (!is_symbol(d.string)) {
                        try {
                            out.expressions_.try_emplace(d.string, parse_sym(d.string));
                        } catch (const error& e) {
                            throw value_error(at + ": the dimension '" + d.string + "' is not an expression yobx reads: " + e.what());
                        }
                    }
                    in.dims.emplace_back(std::nullopt);
                    in.text.push_back(d.string);
                } else {
                    throw value_error(at + ": a dimension is a non-negative integer, a symbol or an expression, got " +
                                      std::string(detail::json::kind_name(d.kind)));
                }
            }
            if (const Node* strides = n.find("strides")) {
                if (strides->kind != Node::Kind::array || strides->array.size() != in.dims.size())
                    throw value_error(at + ": \"strides\" must be a list of one stride per dimension");
                for (const Node& d : strides->array) {
                    if (d.kind == Node::Kind::integer && d.integer >= 0) {
                        in.strides.emplace_back(d.integer);
                        continue;
                    }
                    if (d.kind != Node::Kind::string)
                        throw value_error(at + ": a stride is a non-negative integer or an expression, got " +
                                          std::string(detail::json::kind_name(d.kind)));
                    try {
                        in.strides.push_back(parse_sym(d.string));
                    } catch (const error& e) {
                        throw value_error(at + ": the stride '" + d.string + "' is not an expression yobx reads: " + e.what());
                    }
                }
            }
            out.inputs_.push_back(std::move(in));
        }
        // A constraint over a symbol no input's dimension gives cannot be checked before the run.
        std::set<std::string, std::less<>> given;
        for (const Input& in : out.inputs_)
            for (const std::string& d : in.text) {
                if (is_symbol(d)) given.insert(d);
                else if (const auto e = out.expressions_.find(d); e != out.expressions_.end())
                    for (auto& name : e->second.free_symbols()) given.insert(name);
            }
        for (Constraint& c : out.constraints_) {
            if (!c.rule) continue;
            for (const auto& name : c.rule->free_symbols())
                if (!given.count(name)) {
                    c.reason = "its symbol " + name + " is no input's dimension";
                    c.rule.reset();
                    break;
                }
        }
        return out;
    }

    bool empty() const noexcept { return inputs_.empty(); }
    const std::vector<Input>& inputs() const noexcept { return inputs_; }
    const std::vector<std::pair<std::string, Range>>& ranges() const noexcept { return ranges_; }
    const std::map<std::string, std::string, std::less<>>& labels() const noexcept { return labels_; }
    const std::vector<Constraint>& constraints() const noexcept { return constraints_; }
    const std::map<std::string, Observed, std::less<>>& observed() const noexcept { return observed_; }
    /// The constraints check() cannot evaluate, each with the reason: torch printed a function
    /// yobx's parse_sym_bool does not read, or a symbol no input gives. PackageRunner says each
    /// once, when it loads the package.
    std::vector<const Constraint*> unchecked() const {
        std::vector<const Constraint*> out;
        for (const Constraint& c : constraints_)
            if (!c.rule) out.push_back(&c);
        return out;
    }

    /// A dimension as the messages write it: each symbol replaced by its label
    /// (`s1 + s11` is `sequence_length + past_sequence_length`).
    std::string named(std::string_view text) const {
        std::string out;
        scan(
            text,
            [&](std::string_view id) {
                const auto it = labels_.find(id);
                out += it == labels_.end() ? std::string(id) : it->second;
            },
            [&](char c) { out += c; });
        return out;
    }

    /// Checks a call's tensors before the program runs, as torch.export's own input check
    /// does: rank, dtype and static sizes; one size per symbol across the inputs; each
    /// expression (`s1 + s11`) equal to its symbols' sizes, a linear one with a single
    /// unknown symbol solved for it; each range (a minimum above 2 and a finite maximum:
    /// torch lets a dimension exported as dynamic be 0 or 1); each condition the program
    /// asserts (constraints()). With `options.as_observed`, what yobx observed too (RunnerOptions).
    /// `paths` name the tensors (flatten_call's), `program` the program in the messages. Returns
    /// the size of each symbol, read from the call (strides_of).
    template <class T>
    SymbolValues check(const std::vector<T>& flat, const std::vector<std::string>& paths, const std::string& program,
                       const RunnerOptions& options = {}) const {
        if (options.as_observed && observed_.empty())  // asked for, and nothing to check it against: said
            throw value_error("as_observed: " + program + " holds no observed sizes (its metadata has no \"observed\": "
                              "compiled by an older yobx-export, or from calls that do not flatten to its inputs)");
        if (inputs_.empty()) return {};
        const auto shape_text = [&](const std::vector<std::string>& dims) {
            std::string s = "[";
            for (std::size_t i = 0; i < dims.size(); ++i) {
                if (i) s += ", ";
                s += named(dims[i]);
            }
            return s + "]";
        };
        const auto name = [&](std::size_t i) { return i < paths.size() ? paths[i] : "input " + std::to_string(i); };
        const std::string refused = ": refused before running";
        if (flat.size() != inputs_.size())
            throw value_error("the call has " + std::to_string(flat.size()) + " tensor(s), " + program + " takes " +
                              std::to_string(inputs_.size()) + refused);
        struct Seen {
            std::int64_t size;
            std::size_t input, axis;
        };
        std::map<std::string, Seen, std::less<>> symbols;  // a symbol -> its size and where it was read
        std::vector<std::tuple<std::string, std::int64_t, std::size_t, std::size_t>> pending;  // expressions
        for (std::size_t i = 0; i < flat.size(); ++i) {
            const Input& want = inputs_[i];
            const std::vector<std::int64_t> got = shape_of(flat[i]);
            std::vector<std::string> got_text;
            for (const auto d : got) got_text.push_back(std::to_string(d));
            std::ostringstream dtype;
            dtype << tensor_traits<T>::dtype(flat[i]);
            bool ok = got.size() == want.dims.size() && dtype.str() == want.dtype;
            for (std::size_t a = 0; ok && a < got.size(); ++a) {
                if (want.dims[a]) {
                    ok = *want.dims[a] == got[a];
                    continue;
                }
                if (!is_symbol(want.text[a])) {
                    pending.emplace_back(want.text[a], got[a], i, a);
                    continue;
                }
                const auto [it, fresh] = symbols.try_emplace(want.text[a], Seen{got[a], i, a});
                if (!fresh && it->second.size != got[a])
                    throw value_error(name(i) + " axis " + std::to_string(a) + " is " + std::to_string(got[a]) + ", " +
                                      name(it->second.input) + " axis " + std::to_string(it->second.axis) + " is " +
                                      std::to_string(it->second.size) + ": " + program + " requires them equal (" +
                                      named(want.text[a]) + ")" + refused);
            }
            if (!ok)
                throw value_error(name(i) + " is " + shape_text(got_text) + " " + dtype.str() + ", " + program + " takes " +
                                  shape_text(want.text) + " " + want.dtype + refused);
        }
        // Expressions: checked once their symbols are known; one unknown symbol of a linear
        // expression is solved for (torch's try_solve), then the others are tried again.
        const auto values = [&] {
            SymbolValues v;
            for (const auto& [s, seen] : symbols) v[s] = seen.size;
            return v;
        };
        for (bool progress = true; progress && !pending.empty();) {
            progress = false;
            for (auto it = pending.begin(); it != pending.end();) {
                const auto& [text, size, i, a] = *it;
                const SymInt& e = expressions_.at(text);
                std::vector<std::string> unknown;
                for (const auto& s : e.free_symbols())
                    if (!symbols.count(s)) unknown.push_back(s);
                if (unknown.size() > 1) {
                    ++it;
                    continue;
                }
                SymbolValues v = values();
                if (unknown.size() == 1) {
                    v[unknown[0]] = 0;
                    const std::int64_t at0 = e.evaluate_with(v);
                    v[unknown[0]] = 1;
                    const std::int64_t slope = e.evaluate_with(v) - at0;
                    v[unknown[0]] = 2;
                    const bool linear = e.evaluate_with(v) - at0 == 2 * slope;
                    if (!linear || slope == 0 || (size - at0) % slope != 0)
                        throw value_error(name(i) + " axis " + std::to_string(a) + " is " + std::to_string(size) + ", " + program +
                                          " takes " + named(text) + " for an integer " + named(unknown[0]) + refused);
                    symbols.try_emplace(unknown[0], Seen{(size - at0) / slope, i, a});
                    v[unknown[0]] = (size - at0) / slope;
                }
                if (const std::int64_t want = e.evaluate_with(v); want != size) {
                    std::string known;
                    for (const auto& s : e.free_symbols()) known += (known.empty() ? "" : ", ") + named(s) + " = " + std::to_string(v.at(s));
                    throw value_error(name(i) + " axis " + std::to_string(a) + " is " + std::to_string(size) + ", " + program +
                                      " takes " + named(text) + " = " + std::to_string(want) + " (" + known + ")" + refused);
                }
                it = pending.erase(it);
                progress = true;
            }
        }
        // Ranges, as torch checks them: a minimum above 2, a finite maximum.
        for (const auto& [key, range] : ranges_) {
            std::optional<std::pair<std::int64_t, std::string>> found;  // the size and where
            if (const auto s = symbols.find(key); s != symbols.end())
                found.emplace(s->second.size, name(s->second.input) + " axis " + std::to_string(s->second.axis));
            for (std::size_t i = 0; !found && i < flat.size(); ++i)
                for (std::size_t a = 0; !found && a < inputs_[i].text.size(); ++a)
                    if (inputs_[i].text[a] == key) found.emplace(shape_of(flat[i])[a], name(i) + " axis " + std::to_string(a));
            if (!found) continue;
            const auto [size, where] = *found;
            if ((range.min > 2 && size < range.min) || (range.max && size > *range.max))
                throw value_error(where + " is " + named(key) + " = " + std::to_string(size) + ", " + program + " was exported for " + named(key) +
                                  " in [" + std::to_string(range.min) + ", " + (range.max ? std::to_string(*range.max) : "inf") + "]" +
                                  refused);
        }
        // The conditions the program asserts, once every symbol is known; each symbol named where it was read.
        const auto read_at = [&](const std::string& symbol) {
            const Seen& seen = symbols.at(symbol);
            return name(seen.input) + " axis " + std::to_string(seen.axis) + " is " + std::to_string(seen.size);
        };
        for (const Constraint& c : constraints_) {
            if (!c.rule) continue;
            const std::vector<std::string> free = c.rule->free_symbols();
            if (!std::all_of(free.begin(), free.end(), [&](const std::string& f) { return symbols.count(f) > 0; })) continue;
            std::string broken;  // why the rule cannot be evaluated at these sizes (a zero divisor), if it cannot
            try {
                if (c.rule->evaluate_with(values())) continue;
            } catch (const error& e) {
                broken = e.what();
            }
            std::string where;  // the symbols in the order the rule names them: Eq(s5, s3) reads s5 first
            std::set<std::string, std::less<>> named_already;
            scan(
                c.text,
                [&](std::string_view id) {
                    if (std::find(free.begin(), free.end(), id) != free.end() && named_already.emplace(id).second)
                        where += (where.empty() ? "" : ", ") + read_at(std::string(id));
                },
                [](char) {});
            std::string rule = named(c.text);  // as the program wrote it
            if (free.size() == 2 && c.rule->to_string() == "Eq(" + free[0] + ", " + free[1] + ")")
                rule = "them equal (" + (named(free[0]) == named(free[1]) ? named(free[0]) : rule) + ")";
            throw value_error(where + ": " + program + " requires " + rule +
                              (broken.empty() ? "" : ", which cannot be evaluated at these sizes (" + broken + ")") + refused);
        }
        if (!options.as_observed) return values();
        if (options.range_slack < 0)
            throw value_error("RunnerOptions: range_slack is " + std::to_string(options.range_slack) + ", expected 0 or more");
        // What yobx observed: one size per tied label, each label's size within its observed range,
        // the symbols taken in the order of the inputs.
        std::vector<const std::pair<const std::string, Seen>*> in_order;
        for (const auto& entry : symbols) in_order.push_back(&entry);
        std::sort(in_order.begin(), in_order.end(), [](const auto* x, const auto* y) {
            return std::tie(x->second.input, x->second.axis) < std::tie(y->second.input, y->second.axis);
        });
        const std::string as_observed = refused + " (as_observed)";
        std::map<std::string, const Seen*, std::less<>> by_label;
        for (const auto* entry : in_order) {
            const auto& [symbol, seen] = *entry;
            const auto label = labels_.find(symbol);
            const auto o = label == labels_.end() ? observed_.end() : observed_.find(label->second);
            if (o == observed_.end()) continue;
            const Observed& ob = o->second;
            if ((seen.size < ob.min && ob.min - seen.size > options.range_slack) ||
                (seen.size > ob.max && seen.size - ob.max > options.range_slack))
                throw value_error(read_at(symbol) + ", yobx observed " + label->second + " in [" + std::to_string(ob.min) + ", " +
                                  std::to_string(ob.max) + "]" +
                                  (options.range_slack ? " (range_slack " + std::to_string(options.range_slack) + ")" : "") + as_observed);
            const auto [first, fresh] = by_label.try_emplace(label->second, &seen);
            if (!fresh && ob.tied && first->second->size != seen.size)
                throw value_error(read_at(symbol) + ", " + name(first->second->input) + " axis " + std::to_string(first->second->axis) +
                                  " is " + std::to_string(first->second->size) + ": yobx observed them equal (" + label->second +
                                  ") in every call" + as_observed);
        }
        return values();
    }

    /// The strides input `i` must have for the program, at the sizes `values` (what check() returns):
    /// those of the tensor it was exported from (channels last, for one), evaluated; nothing when
    /// the metadata gives none (contiguous) or a symbol has no value.
    std::optional<std::vector<std::int64_t>> strides_of(std::size_t i, const SymbolValues& values) const {
        if (i >= inputs_.size() || inputs_[i].strides.empty()) return std::nullopt;
        std::vector<std::int64_t> out;
        try {
            for (const SymInt& s : inputs_[i].strides) out.push_back(s.evaluate_with(values));
        } catch (const error&) {
            return std::nullopt;
        }
        return out;
    }

private:
    // Walks an expression as written: on_word(identifier) for each identifier, on_other(c) for each
    // other character, in order (`Eq(s5, s3)`: Eq, '(', s5, ',', ' ', s3, ')').
    template <class OnWord, class OnOther>
    static void scan(std::string_view text, OnWord on_word, OnOther on_other) {
        for (std::size_t i = 0; i < text.size();) {
            if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
                on_other(text[i++]);
                continue;
            }
            std::size_t j = i;
            while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
            on_word(text.substr(i, j - i));
            i = j;
        }
    }

    static bool is_symbol(std::string_view s) {
        if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
        for (char c : s)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
        return true;
    }

    std::vector<Input> inputs_;
    std::vector<std::pair<std::string, Range>> ranges_;
    std::map<std::string, SymInt, std::less<>> expressions_;
    std::map<std::string, std::string, std::less<>> labels_;
    std::vector<Constraint> constraints_;
    std::map<std::string, Observed, std::less<>> observed_;
};

/// torch.utils._pytree.treespec_dumps(spec) for a TreeSpec (protocol 1): what torch's
/// treespec_loads reads back. None and constant nodes are written as leaves (torch has none);
/// a registered node as its type name with its child names as context.
///   treespec_dumps(TreeSpec::tuple({TreeSpec::leaf()})) ==
///   R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}]}])"
inline std::string treespec_dumps(const TreeSpec& spec) {
    std::string s;
    detail::json::Writer w(s);
    w.begin_array().value(1);
    detail::torch_spec::write(w, spec);
    w.end();
    return s;
}

/// Reads torch's treespec_dumps (protocol 1): an exported program's in_spec or out_spec, an
/// AOTInductor package's call spec. tuple, list, dict, OrderedDict, namedtuple (a registered
/// node named `collections.namedtuple:<its type name>`) and registered classes; errors name the
/// JSON path and the reason. An OrderedDict is a registered node named collections.OrderedDict
/// with its keys (written back as torch wrote it).
inline TreeSpec treespec_loads(std::string_view text) {
    const detail::json::Node doc = detail::json::Parser(text, "treespec_loads").parse();
    using K = detail::json::Node::Kind;
    if (doc.kind != K::array || doc.array.size() != 2)
        detail::torch_spec::fail("$", "expected [protocol, spec], got " +
                                          (doc.kind == K::array ? "an array of " + std::to_string(doc.array.size()) + " item(s)"
                                                                : std::string(detail::json::kind_name(doc.kind))));
    if (doc.array[0].kind != K::integer || doc.array[0].integer != 1)
        detail::torch_spec::fail("$[0]", "unknown protocol, expected 1 (torch 2.x writes 1)");
    return detail::torch_spec::read(doc.array[1], "$[1]");
}

}  // namespace yobx
