// yobx/detail/pytree/spec_from_json.hpp — TreeSpec's JSON reader.
//
// Reads the format TreeSpec::to_json writes (`{"yobx_treespec": 1, "root": ...}`) into a
// spec's nodes, checking the schema as it goes: every error names the JSON path of what is
// wrong (`TreeSpec.from_json: at $.root.children[1]: ...`).
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/detail/pytree/spec_data.hpp>
#include <yobx/error.hpp>
#include <yobx/detail/pytree/key_path.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

namespace detail {

// Builds a TreeSpec's nodes from the JSON DOM, checking the schema as it goes.
class SpecFromJson {
public:
    /// The spec's nodes, for TreeSpec::from_json.
    template <class = void>
    SpecData run(std::string_view text) {
        const json::Node doc = json::Parser(text, "TreeSpec.from_json").parse();
        if (doc.kind != json::Node::Kind::object) fail("$", "expected an object, got " + std::string(json::kind_name(doc.kind)));
        only(doc, "$", {"yobx_treespec", "root"});
        const std::string top = "$";  // a named path: need() returns into doc, never into a temporary
        const json::Node& version = need(doc, top, "yobx_treespec", json::Node::Kind::integer);
        if (version.integer != 1)
            fail("$.yobx_treespec", "unsupported format version " + std::to_string(version.integer) +
                                        " (this yobx reads version 1)");
        const json::Node* root = doc.find("root");
        if (!root) fail("$", "missing field 'root'");
        node(*root, "$.root");
        return std::move(b_.data);
    }

private:
    template <class = void>
    [[noreturn]] static void fail(const std::string& path, const std::string& why) {
        throw value_error("TreeSpec.from_json: at " + path + ": " + why);
    }

    template <class = void>
    static void only(const json::Node& n, const std::string& path, std::initializer_list<std::string_view> allowed) {
        for (const auto& k : n.keys) {
            bool ok = false;
            for (auto a : allowed) ok = ok || a == k;
            if (!ok) fail(path, "unexpected field '" + k + "'");
        }
    }

    template <class = void>
    static const json::Node& need(const json::Node& n, const std::string& path, std::string_view key, json::Node::Kind kind) {
        const json::Node* v = n.find(key);
        if (!v) fail(path, "missing field '" + std::string(key) + "'");
        if (v->kind != kind)
            fail(path + "." + std::string(key),
                 "expected " + std::string(json::kind_name(kind)) + ", got " + std::string(json::kind_name(v->kind)));
        return *v;
    }

    template <class = void>
    void node(const json::Node& n, const std::string& path) {
        if (n.kind != json::Node::Kind::object) fail(path, "expected an object, got " + std::string(json::kind_name(n.kind)));
        const std::string& kind = need(n, path, "kind", json::Node::Kind::string).string;
        if (kind == "leaf" || kind == "none") {
            only(n, path, {"kind"});
            kind == "leaf" ? b_.leaf() : b_.none();
        } else if (kind == "bool" || kind == "int" || kind == "str") {
            only(n, path, {"kind", "value"});
            const auto want = kind == "bool" ? json::Node::Kind::boolean
                              : kind == "int" ? json::Node::Kind::integer
                                              : json::Node::Kind::string;
            const json::Node& v = need(n, path, "value", want);
            if (kind == "bool") b_.constant(v.boolean);
            else if (kind == "int") b_.constant(v.integer);
            else b_.constant(v.string);
        } else if (kind == "float") {
            only(n, path, {"kind", "value"});
            const json::Node* v = n.find("value");
            if (!v) fail(path, "missing field 'value'");
            if (v->kind == json::Node::Kind::number) b_.constant(v->number);
            else if (v->kind == json::Node::Kind::integer) b_.constant(static_cast<double>(v->integer));
            else if (v->kind == json::Node::Kind::string && (v->string == "inf" || v->string == "-inf" || v->string == "nan"))
                b_.constant(v->string == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                               : (v->string == "inf" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity());
            else
                fail(path + ".value", "expected a number or one of \"inf\", \"-inf\", \"nan\"");
        } else if (kind == "list" || kind == "tuple" || kind == "dict" || kind == "custom") {
            const bool is_custom = kind == "custom", is_dict = kind == "dict";
            if (is_custom) only(n, path, {"kind", "type", "keys", "children"});
            else if (is_dict) only(n, path, {"kind", "keys", "children"});
            else only(n, path, {"kind", "children"});
            const auto& children = need(n, path, "children", json::Node::Kind::array).array;
            const std::uint32_t d = b_.next_string();
            if (is_custom) {
                const std::string& type = need(n, path, "type", json::Node::Kind::string).string;
                if (type.empty()) fail(path + ".type", "the type name is empty");
                b_.add_string(type);
            }
            bool has_keys = is_dict;
            if (is_dict || is_custom) {
                const json::Node* keys = n.find("keys");
                if (!keys) fail(path, "missing field 'keys'");
                if (is_custom && keys->kind == json::Node::Kind::null) {
                    has_keys = false;
                } else {
                    if (keys->kind != json::Node::Kind::array)
                        fail(path + ".keys", std::string("expected an array") + (is_custom ? " or null" : "") +
                                                 ", got " + std::string(json::kind_name(keys->kind)));
                    has_keys = true;
                    if (keys->array.size() != children.size())
                        fail(path, std::to_string(keys->array.size()) + " keys for " + std::to_string(children.size()) +
                                       " children");
                    for (std::size_t i = 0; i < keys->array.size(); ++i) {
                        const auto& k = keys->array[i];
                        const std::string kp = path + ".keys[" + std::to_string(i) + "]";
                        if (k.kind != json::Node::Kind::string)
                            fail(kp, "expected a string, got " + std::string(json::kind_name(k.kind)));
                        for (std::size_t j = 0; j < i; ++j)
                            if (keys->array[j].string == k.string) fail(kp, "duplicate key " + repr_string(k.string));
                        b_.add_string(k.string);
                    }
                }
            }
            const NodeKind nk = is_custom ? NodeKind::custom : is_dict ? NodeKind::dict
                                : kind == "list" ? NodeKind::list : NodeKind::tuple;
            const std::uint32_t at = b_.open(nk, children.size(), has_keys, d);
            for (std::size_t i = 0; i < children.size(); ++i) node(children[i], path + ".children[" + std::to_string(i) + "]");
            b_.close(at);
        } else {
            fail(path + ".kind", "unknown node kind '" + kind +
                                     "' (expected leaf, none, bool, int, float, str, list, tuple, dict or custom)");
        }
    }

    SpecBuilder b_;
};

}  // namespace detail

}  // namespace yobx
