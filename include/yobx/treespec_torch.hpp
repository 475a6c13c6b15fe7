// yobx/treespec_torch.hpp — torch's pytree JSON (treespec_dumps, protocol 1) for TreeSpec.
//
// What a program does with a call laid out by such a spec (flatten_call, arrange_call) and
// what it says of its inputs (ProgramInputs) are yobx/program.hpp.
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
#include <yobx/treespec.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

}  // namespace detail::torch_spec

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
