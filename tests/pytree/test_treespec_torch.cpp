// torch's pytree JSON (treespec_dumps, protocol 1) read into a TreeSpec and written back. The
// strings are what torch 2.6's treespec_dumps writes; tests/export/check_treespec_torch.py checks
// the round trip against torch itself on Debian 13.
#include "../error_of.hpp"

#include <yobx/dense_tensor.hpp>
#include <yobx/treespec_torch.hpp>

#include <doctest/doctest.h>

#include <string>

using test::error_of;
using yobx::TreeSpec;
using yobx::treespec_dumps;
using yobx::treespec_loads;

namespace {

const std::string leaf = R"({"type": null, "context": null, "children_spec": []})";

}  // namespace

TEST_CASE("treespec_loads reads torch's spec of an exported program's inputs, treespec_dumps writes it back") {
    // torch.utils._pytree.treespec_dumps(tree_flatten(((x, [y, z]), {"mask": m}))[1])
    const std::string torch_text =
        R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [)" +
        leaf + R"(, {"type": "builtins.list", "context": "null", "children_spec": [)" + leaf + ", " + leaf +
        R"(]}]}, {"type": "builtins.dict", "context": "[\"mask\"]", "children_spec": [)" + leaf + "]}]}]";
    const TreeSpec spec = treespec_loads(torch_text);
    CHECK(spec.to_string() == "TreeSpec(tuple, None, [TreeSpec(tuple, None, [*, TreeSpec(list, None, [*, *])]), "
                              "TreeSpec(dict, ['mask'], [*])])");
    CHECK(spec.num_leaves() == 4);
    CHECK(treespec_dumps(spec) == torch_text);
}

TEST_CASE("namedtuples, OrderedDicts and registered classes") {
    const TreeSpec nt = treespec_loads(R"([1, {"type": "collections.namedtuple", "context": "__main__.Point", "children_spec": [)" +
                                       leaf + ", " + leaf + "]}]");
    CHECK(nt.to_string() == "TreeSpec(collections.namedtuple:__main__.Point, None, [*, *])");
    CHECK(treespec_dumps(nt) == R"([1, {"type": "collections.namedtuple", "context": "__main__.Point", "children_spec": [)" +
                                    leaf + ", " + leaf + "]}]");
    const TreeSpec od = treespec_loads(R"([1, {"type": "collections.OrderedDict", "context": "[\"b\", \"a\"]", "children_spec": [)" +
                                       leaf + ", " + leaf + "]}]");
    CHECK(od.to_string() == "TreeSpec(collections.OrderedDict, ['b', 'a'], [*, *])");
    CHECK(treespec_dumps(od) == R"([1, {"type": "collections.OrderedDict", "context": "[\"b\", \"a\"]", "children_spec": [)" +
                                    leaf + ", " + leaf + "]}]");
    const TreeSpec cache = TreeSpec::custom("DynamicCache", {"key_cache", "value_cache"},
                                            {TreeSpec::list({TreeSpec::leaf()}), TreeSpec::list({TreeSpec::leaf()})});
    const std::string text = treespec_dumps(cache);
    CHECK(text.rfind(R"([1, {"type": "DynamicCache", "context": "[\"key_cache\", \"value_cache\"]", "children_spec": [)", 0) == 0);
    CHECK(treespec_loads(text) == cache);
    // None and constants are leaves for torch.
    CHECK(treespec_dumps(TreeSpec::tuple({TreeSpec::none(), TreeSpec::constant(std::int64_t{3})})) ==
          R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [)" + leaf + ", " + leaf + "]}]");
}

TEST_CASE("treespec_loads: each malformed spec gets a message naming where and what") {
    const auto message = [](const std::string& text) { return error_of<yobx::value_error>([&] { (void)treespec_loads(text); }); };
    CHECK(message("{}") == "treespec_loads: at $: expected [protocol, spec], got an object");
    CHECK(message("[2, {}]") == "treespec_loads: at $[0]: unknown protocol, expected 1 (torch 2.x writes 1)");
    CHECK(message(R"([1, {"type": null, "context": null}])") == "treespec_loads: at $[1]: missing member \"children_spec\"");
    CHECK(message(R"([1, {"type": null, "context": "null", "children_spec": []}])") ==
          "treespec_loads: at $[1]: a leaf (type null) has a null context and no children");
    CHECK(message(R"([1, {"type": "builtins.dict", "context": "[\"a\"]", "children_spec": []}])") ==
          "treespec_loads: at $[1].context: 1 key(s) for 0 children");
    CHECK(message(R"([1, {"type": "builtins.dict", "context": "[1]", "children_spec": [)" + leaf + "]}]") ==
          "treespec_loads: at $[1].context[0]: a key that is an integer: yobx's dict keys are strings");
    CHECK(message(R"([1, {"type": "builtins.list", "context": "[", "children_spec": []}])") ==
          "treespec_loads: at $[1].context: the context is not JSON: treespec_loads: malformed JSON at offset 1: "
          "expected a value, got end of input");
    CHECK(message(R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [3]}])") ==
          "treespec_loads: at $[1].children_spec[0]: expected an object, got an integer");
    CHECK(message(R"([1, {"type": 5, "context": "null", "children_spec": []}])") ==
          "treespec_loads: at $[1].type: expected a string or null, got an integer");
    CHECK(message(R"([1, {"type": "builtins.dict", "context": "[\"a\", \"a\"]", "children_spec": [)" + leaf + ", " + leaf + "]}]") ==
          "treespec_loads: at $[1].context: TreeSpec: duplicate key 'a'");
    CHECK(message(R"([1, {"type": "x", "context": "null", "children_spec": [], "extra": 1}])") ==
          "treespec_loads: at $[1]: unknown member \"extra\", expected \"type\", \"context\" and \"children_spec\"");
    CHECK(message(R"([1, {"type": "collections.namedtuple:x", "context": "null", "children_spec": []}])") ==
          "treespec_loads: at $[1].type: a registered type named collections.namedtuple:...: yobx names namedtuples so");
    CHECK(message(R"([1, {"type": "collections.namedtuple", "context": 3, "children_spec": []}])") ==
          "treespec_loads: at $[1].context: a namedtuple's context is its type name");
}
