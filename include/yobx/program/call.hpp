// yobx/program/call.hpp — a call laid out as an exported program takes it.
//
// An exported program (or an AOTInductor package) takes the tensors of a call in the order
// of its in_spec (treespec_loads of its call spec, yobx/treespec_torch.hpp): flatten_call
// lays a call (args, kwargs) out so, naming each input in its errors; arrange_call first
// moves the arguments passed by position or by name to where the program takes them.
#pragma once

#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>
#include <yobx/treespec.hpp>
#include <yobx/value.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace yobx {

namespace detail::program {

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
                        known += yobx::detail::repr_string(key);
                    }
                    throw value_error("flatten_call: extra input " + path + "[" + yobx::detail::repr_string(k) +
                                      "]: the program takes [" + known + "]");
                }
            const auto children = spec.children();
            for (std::size_t i = 0; i < children.size(); ++i) {  // in the spec's order, as torch's reorder_kwargs
                const std::string key(keys[i]);
                const auto it = v.dict().find(key);
                if (it == v.dict().end())
                    throw value_error("flatten_call: missing input " + path + "[" + yobx::detail::repr_string(key) + "]");
                flatten_by(it->second, children[i], path + "[" + yobx::detail::repr_string(key) + "]", out, paths);
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

}  // namespace detail::program

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
        detail::program::flatten_by(call, in_spec, "call", out, paths);
        return out;
    }
    detail::program::flatten_by(call.items()[0], in_spec.child(0), "args", out, paths);
    detail::program::flatten_by(call.items()[1], in_spec.child(1), "kwargs", out, paths);
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

}  // namespace yobx
