// Value<T>: the dynamic tree, its Python-like form, and conversions with static pytrees.
#include "../support.hpp"

#include <yobx/value.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <thread>
#include <utility>

using namespace test;
using V = yobx::Value<DenseTensor>;

namespace {

// A tensor whose live objects are counted, whose copies can be made to throw,
// and which asks for more alignment than operator new gives by default: what
// a flat Value must handle when it holds copies of its leaves.
struct alignas(64) CountedTensor {
    static inline std::atomic<int> live{0};  // copies are made and dropped on several threads
    static inline int copies_before_throw = -1;  // -1: copies never throw

    std::vector<std::int64_t> shape;

    explicit CountedTensor(std::vector<std::int64_t> s) : shape(std::move(s)) { ++live; }
    CountedTensor(const CountedTensor& o) : shape(o.shape) {
        if (copies_before_throw == 0) throw std::runtime_error("CountedTensor: copy refused");
        if (copies_before_throw > 0) --copies_before_throw;
        ++live;
    }
    CountedTensor(CountedTensor&& o) noexcept : shape(std::move(o.shape)) { ++live; }
    CountedTensor& operator=(const CountedTensor&) = default;
    CountedTensor& operator=(CountedTensor&&) noexcept = default;
    ~CountedTensor() { --live; }
};

}  // namespace

template <>
struct yobx::tensor_traits<CountedTensor> {
    static const std::vector<std::int64_t>& shape(const CountedTensor& t) { return t.shape; }
    static std::string dtype(const CountedTensor&) { return "f32"; }
    static CountedTensor clone(const CountedTensor& t) { return t; }
    static CountedTensor empty(const std::vector<std::int64_t>& s, const CountedTensor&) { return CountedTensor(s); }
    static CountedTensor zeros(const std::vector<std::int64_t>& s, const CountedTensor&) { return CountedTensor(s); }
};

using CV = yobx::Value<CountedTensor>;

static std::vector<CountedTensor> counted(int n) {
    std::vector<CountedTensor> out;
    for (int i = 0; i < n; ++i) out.emplace_back(std::vector<std::int64_t>{i});
    return out;
}

TEST_CASE("Values print as Python literals") {
    V v = V::dict({{"input_ids", tensor({2, 3}, DType::int64)},
                   {"mask", yobx::none},
                   {"flags", V::tuple({true, 3, 0.5, "it's"})},
                   {"one", V::tuple({1})},
                   {"empty", V::tuple()},
                   {"layers", V::list({V::list(), 1e16})}});
    CHECK(v.repr() ==
          "{'input_ids': Tensor(shape=[2, 3], dtype=int64), 'mask': None, 'flags': (True, 3, 0.5, \"it's\"), "
          "'one': (1,), 'empty': (), 'layers': [[], 1e+16]}");
    V cache = V::custom("DynamicCache", {"key_cache", "value_cache"}, {V::list({tensor({1})}), V::list()});
    CHECK(cache.repr() == "DynamicCache(key_cache=[Tensor(shape=[1], dtype=float32)], value_cache=[])");
    CHECK(V::custom("P", {}, {1, 2}).repr() == "P(1, 2)");
}

TEST_CASE("Values are accessed like Python objects") {
    V v = V::dict({{"x", V::list({1, 2, 3})}, {"t", tensor({4})}, {"s", "abc"}, {"f", 2.5}, {"b", false}});
    CHECK(v["x"][-1].as_int() == 3);
    CHECK(v["x"].size() == 3);
    CHECK(v["t"].tensor().shape() == std::vector<std::int64_t>{4});
    CHECK(v["s"].as_string() == "abc");
    CHECK(v["f"].as_double() == 2.5);
    CHECK(v["x"][0].as_double() == 1.0);
    CHECK_FALSE(v["b"].as_bool());
    CHECK(v.contains("t"));
    CHECK(v.size() == 5);
    v["x"].push_back(4);
    CHECK(v["x"].size() == 4);
    v["x"][0] = "replaced";
    CHECK(v["x"][0].as_string() == "replaced");
    CHECK(v.type_name() == "dict");
    CHECK(V().is_none());
    CHECK(V(std::uint8_t{7}).as_int() == 7);
}

TEST_CASE("wrong accesses raise Python-like errors") {
    V v = V::dict({{"x", V::list({1})}, {"n", 3}});
    CHECK_THROWS_WITH_AS(v["y"], "KeyError: 'y'", yobx::value_error);
    CHECK_THROWS_WITH_AS(v["x"][1], "list index 1 out of range (size 1)", yobx::value_error);
    CHECK_THROWS_WITH_AS(v["n"][0], "'int' object is not subscriptable by an integer", yobx::type_error);
    CHECK_THROWS_WITH_AS(v["n"].size(), "object of type 'int' has no len()", yobx::type_error);
    CHECK_THROWS_WITH_AS(v["n"].tensor(), "Value: expected a Tensor, got int (3)", yobx::type_error);
    CHECK_THROWS_WITH_AS(v["x"].as_int(), "Value: expected an int, got list ([1])", yobx::type_error);
    CHECK_THROWS_WITH_AS(v["n"].push_back(1), "Value: expected a list, got int (3)", yobx::type_error);
    CHECK_THROWS_WITH_AS(V::dict({{"a", 1}, {"a", 2}}), "Value::dict: duplicate key 'a'", yobx::value_error);
    CHECK_THROWS_WITH_AS(V::custom("C", {"a"}, {}), "Value::custom: 1 keys for 0 children", yobx::value_error);
    CHECK_THROWS_WITH_AS(V(~std::uint64_t{0}), "Value: the integer 18446744073709551615 does not fit in int64",
                         yobx::value_error);
    V c = V::custom("DynamicCache", {"key_cache"}, {V::list()});
    CHECK(c["key_cache"].size() == 0);
    CHECK_THROWS_WITH_AS(c["value_cache"], "'DynamicCache' node has no child 'value_cache'", yobx::value_error);
}

TEST_CASE("a Value flattens like the static structure it mirrors") {
    KVCache cache{{tensor({1, 2}), tensor({1, 2})}, {tensor({1, 3}), tensor({1, 3})}};
    std::tuple<DenseTensor, yobx::ordered_dict<std::optional<KVCache>>> args{
        tensor({2}), {{"past_key_values", cache}, {"other", std::nullopt}}};
    V v = yobx::to_value(args);
    CHECK(v.repr() ==
          "(Tensor(shape=[2], dtype=float32), {'past_key_values': DynamicCache(key_cache=[Tensor(shape=[1, 2], "
          "dtype=float32), Tensor(shape=[1, 2], dtype=float32)], value_cache=[Tensor(shape=[1, 3], dtype=float32), "
          "Tensor(shape=[1, 3], dtype=float32)]), 'other': None})");
    auto [leaves, spec] = yobx::tree_flatten(v);
    CHECK(spec == yobx::tree_structure(args));
    CHECK(leaves.size() == 5);
    auto [pairs, spec2] = yobx::tree_flatten_with_path(v);
    CHECK(yobx::keystr(pairs[4].first) == "[1]['past_key_values'].value_cache[1]");
    CHECK(yobx::num_leaves(v) == 5);
    auto back = yobx::from_value<decltype(args)>(v);
    CHECK(std::get<1>(back).at("past_key_values")->value_cache[1].shape() == std::vector<std::int64_t>{1, 3});
    CHECK_FALSE(std::get<1>(back).at("other").has_value());
}

TEST_CASE("every static node kind converts to a Value and back") {
    Aggregate agg{tensor({1}), 4, std::nullopt};
    Kwargs kw{tensor({2}), std::nullopt, true};
    std::tuple<Aggregate, Kwargs, std::array<DenseTensor, 1>, std::pair<int, std::string>,
               std::map<std::string, double>, std::unordered_map<std::string, bool>, Pair2>
        x{agg, kw, {tensor({3})}, {1, "s"}, {{"lr", 0.1}}, {{"b", true}, {"a", false}}, {tensor({4}), tensor({5})}};
    V v = yobx::to_value(x);
    CHECK(v.repr() ==
          "((Tensor(shape=[1], dtype=float32), 4, None), {'input_ids': Tensor(shape=[2], dtype=float32), "
          "'attention_mask': None, 'use_cache': True}, (Tensor(shape=[3], dtype=float32),), (1, 's'), {'lr': 0.1}, "
          "{'a': False, 'b': True}, Pair2(Tensor(shape=[4], dtype=float32), Tensor(shape=[5], dtype=float32)))");
    auto back = yobx::from_value<decltype(x)>(v);
    CHECK(std::get<0>(back).n == 4);
    CHECK(std::get<1>(back).use_cache);
    CHECK(std::get<3>(back).second == "s");
    CHECK(std::get<4>(back).at("lr") == 0.1);
    CHECK_FALSE(std::get<5>(back).at("a"));
    CHECK(std::get<6>(back).second.shape() == std::vector<std::int64_t>{5});
    CHECK(yobx::tree_structure(back) == yobx::tree_structure(x));
}

TEST_CASE("a Value of the wrong structure does not convert to a static type") {
    V v = V::tuple({tensor({1}), V::dict({{"a", 1}})});
    using Want = std::tuple<DenseTensor, std::vector<int>>;
    CHECK_THROWS_WITH_AS(yobx::from_value<Want>(v),
                         "tree_unflatten: the spec does not match the requested type at [1]: the type expects a list "
                         "(std::vector) but the spec has TreeSpec(dict, ['a'], [1]) (whole spec: TreeSpec(tuple, "
                         "None, [*, TreeSpec(dict, ['a'], [1])]))",
                         yobx::value_error);
}

TEST_CASE("Value equality is structural") {
    auto t = tensor({2});
    V a = V::dict({{"x", t}, {"n", 1}});
    V b = V::dict({{"x", t}, {"n", 1}});
    CHECK(a == b);
    CHECK_FALSE(a == V::dict({{"n", 1}, {"x", t}}));  // insertion order matters, as in an OrderedDict
    CHECK_FALSE(V(1) == V(true));
    CHECK_FALSE(V::list({1}) == V::tuple({1}));
}

TEST_CASE("tree_map on a Value maps every tensor and keeps the rest") {
    V v = V::dict({{"x", tensor({2})}, {"n", 1}, {"l", V::list({tensor({3}), yobx::none})}});
    V doubled = yobx::tree_map([](const DenseTensor& t) { return tensor({t.shape()[0] * 2}); }, v);
    CHECK(doubled.repr() ==
          "{'x': Tensor(shape=[4], dtype=float32), 'n': 1, 'l': [Tensor(shape=[6], dtype=float32), None]}");
}

TEST_CASE("a Value unflattens from any spec") {
    auto spec = yobx::TreeSpec::from_json(
        "{\"yobx_treespec\": 1, \"root\": {\"kind\": \"custom\", \"type\": \"Out\", \"keys\": [\"logits\", \"n\"], "
        "\"children\": [{\"kind\": \"leaf\"}, {\"kind\": \"float\", \"value\": \"-inf\"}]}}");
    V v = yobx::tree_unflatten<V>(std::vector{tensor({1, 5})}, spec);
    CHECK(v.repr() == "Out(logits=Tensor(shape=[1, 5], dtype=float32), n=-inf)");
}

TEST_CASE("a Value of every kind unflattens back equal, from copies or moved leaves") {
    auto t = [](std::int64_t n) { return tensor({n}); };
    V v = V::tuple({t(1), t(2), yobx::none, t(3), V::list({t(4)}), 3, t(5), "s", 0.5, false,
                    V::dict({{"a", t(6)}, {"b", V::list()}, {"c", V::tuple({t(7), t(8)})}}),
                    V::custom("DynamicCache", {"key_cache", "value_cache"}, {V::list({t(9), t(10)}), V::list()}),
                    V::custom("P", {}, {t(11), 1})});
    auto [leaves, spec] = yobx::tree_flatten(v);
    REQUIRE(leaves.size() == 11);
    for (std::size_t i = 0; i < leaves.size(); ++i) CHECK(leaves[i].shape()[0] == static_cast<std::int64_t>(i + 1));
    const V copied = yobx::tree_unflatten<V>(std::span<const DenseTensor>(leaves), spec);
    CHECK(copied == v);
    const V moved = yobx::tree_unflatten<V>(std::move(leaves), spec);
    CHECK(moved == v);
    CHECK(moved.repr() == v.repr());
}

TEST_CASE("tree_flatten_ptrs on a Value points at the tensors it holds") {
    V v = V::dict({{"ids", tensor({1})},
                   {"layers", V::list({tensor({2}), yobx::none, tensor({3}), tensor({4}), V::list({tensor({5})}), 1})},
                   {"cache", V::custom("DynamicCache", {"key_cache"}, {V::list({tensor({6})})})}});
    auto [ptrs, spec] = yobx::tree_flatten_ptrs(v);
    REQUIRE(ptrs.size() == 6);
    CHECK(ptrs[0] == &v["ids"].tensor());
    CHECK(ptrs[1] == &v["layers"][0].tensor());
    CHECK(ptrs[2] == &v["layers"][2].tensor());
    CHECK(ptrs[3] == &v["layers"][3].tensor());
    CHECK(ptrs[4] == &v["layers"][4][0].tensor());
    CHECK(ptrs[5] == &v["cache"]["key_cache"][0].tensor());
    CHECK(spec == yobx::tree_structure(v));
    CHECK(spec.to_string() == "TreeSpec(dict, ['ids', 'layers', 'cache'], [*, TreeSpec(list, None, [*, None, *, *, "
                              "TreeSpec(list, None, [*]), 1]), TreeSpec(DynamicCache, ['key_cache'], "
                              "[TreeSpec(list, None, [*])])])");
}

TEST_CASE("long lists of tensors flatten past the reserved room") {
    V::List flat_items, nested_items;
    for (int i = 0; i < 300; ++i) {
        flat_items.emplace_back(tensor({i}));
        nested_items.push_back(V::list({tensor({i})}));
    }
    const V flat = V::list(std::move(flat_items));
    const V nested = V::list(std::move(nested_items));
    for (const V* v : {&flat, &nested}) {
        auto [leaves, spec] = yobx::tree_flatten(*v);
        REQUIRE(leaves.size() == 300);
        CHECK(spec.num_leaves() == 300);
        CHECK(leaves[299].shape()[0] == 299);
        auto [ptrs, spec2] = yobx::tree_flatten_ptrs(*v);
        CHECK(ptrs[150]->shape()[0] == 150);
        CHECK(spec2 == spec);
        CHECK(yobx::tree_unflatten<V>(std::move(leaves), spec) == *v);
    }
}

TEST_CASE("ordered_dict keeps insertion order and reports missing keys") {
    yobx::ordered_dict<int> d{{"b", 1}, {"a", 2}, {"b", 3}};  // a repeated key keeps its first place, last value
    d["c"] = 4;
    d.insert_or_assign("a", 5);
    std::vector<std::pair<std::string, int>> items(d.begin(), d.end());
    CHECK(items == std::vector<std::pair<std::string, int>>{{"b", 3}, {"a", 5}, {"c", 4}});
    CHECK(d.erase("a"));
    CHECK_FALSE(d.erase("a"));
    CHECK(d.size() == 2);
    CHECK(d.at("c") == 4);
    CHECK_THROWS_WITH_AS(d.at("z"), "ordered_dict: no key 'z'", yobx::value_error);
    CHECK_FALSE(d == yobx::ordered_dict<int>{{"c", 4}, {"b", 3}});
    CHECK(d == yobx::ordered_dict<int>{{"b", 3}, {"c", 4}});
}

// Every subtree's node and leaf counts equal those of `fresh`, a spec built apart.
static void check_counts(const yobx::TreeSpec& s, const yobx::TreeSpec& fresh) {
    CHECK(s.num_nodes() == fresh.num_nodes());
    CHECK(s.num_leaves() == fresh.num_leaves());
    REQUIRE(s.num_children() == fresh.num_children());
    for (std::size_t i = 0; i < s.num_children(); ++i) check_counts(s.child(i), fresh.child(i));
}

TEST_CASE("a flatten that parts from the previous structure builds its own spec from there") {
    auto t = [] { return tensor({1}); };
    struct Case {
        V before, after;
        std::string expected;
    };
    const std::vector<Case> cases{
        // a run of leaves longer than the previous one
        {V::list({t(), t(), yobx::none}), V::list({t(), t(), t()}), "TreeSpec(list, None, [*, *, *])"},
        // None where a leaf was
        {V::list({t(), t(), t()}), V::list({t(), t(), yobx::none}), "TreeSpec(list, None, [*, *, None])"},
        // another dict key, another constant, another constant type, -0.0 after 0.0
        {V::dict({{"a", t()}, {"b", V::list({t()})}}), V::dict({{"a", t()}, {"c", V::list({t()})}}),
         "TreeSpec(dict, ['a', 'c'], [*, TreeSpec(list, None, [*])])"},
        {V::tuple({t(), 1, V::list({t()})}), V::tuple({t(), 2, V::list({t()})}),
         "TreeSpec(tuple, None, [*, 2, TreeSpec(list, None, [*])])"},
        {V::tuple({t(), 1}), V::tuple({t(), 1.0}), "TreeSpec(tuple, None, [*, 1.0])"},
        {V::tuple({0.0, t()}), V::tuple({-0.0, t()}), "TreeSpec(tuple, None, [-0.0, *])"},
        // another container kind, another child count, another custom type, names added
        {V::list({V::tuple({t()}), t()}), V::list({V::list({t()}), t()}),
         "TreeSpec(list, None, [TreeSpec(list, None, [*]), *])"},
        {V::list({t(), t(), t(), t()}), V::list({t(), t()}), "TreeSpec(list, None, [*, *])"},
        {V::custom("A", {"x"}, {t()}), V::custom("B", {"x"}, {t()}), "TreeSpec(B, ['x'], [*])"},
        {V::custom("A", {}, {t()}), V::custom("A", {"x"}, {t()}), "TreeSpec(A, ['x'], [*])"},
        // parted inside two open containers: their sizes and leaf counts are the new ones
        {V::dict({{"a", V::list({t(), V::list({t(), t()})})}, {"b", t()}}),
         V::dict({{"a", V::list({t(), V::list({t(), t(), t()})})}, {"b", t()}}),
         "TreeSpec(dict, ['a', 'b'], [TreeSpec(list, None, [*, TreeSpec(list, None, [*, *, *])]), *])"},
        {V::dict({{"a", V::list({t(), t(), yobx::none})}, {"b", t()}}),
         V::dict({{"a", V::list({t(), t(), t()})}, {"b", t()}}),
         "TreeSpec(dict, ['a', 'b'], [TreeSpec(list, None, [*, *, *]), *])"},
    };
    for (const auto& c : cases) {
        INFO(c.expected);
        const auto before = yobx::tree_structure(c.before);
        auto [leaves, spec] = yobx::tree_flatten(c.after);
        CHECK(spec.to_string() == c.expected);
        const auto fresh = yobx::TreeSpec::from_json(spec.to_json());
        CHECK(spec == fresh);
        check_counts(spec, fresh);
        CHECK(yobx::tree_unflatten<V>(std::move(leaves), spec) == c.after);
        // Both are kept: each flattens to its own spec again, shared.
        CHECK(&yobx::tree_structure(c.before).data() == &before.data());
        CHECK(&yobx::tree_structure(c.after).data() == &spec.data());
    }
}

// A Value of every node kind, built by hand (so not kept flat).
static V every_kind() {
    auto t = [](std::int64_t n) { return tensor({n}); };
    return V::dict({{"ids", t(1)},
                    {"l", V::list({t(2), t(3), yobx::none, 3, -0.0, "s", false, V::tuple({t(4)}), t(5)})},
                    {"cache", V::custom("DynamicCache", {"key_cache", "value_cache"}, {V::list({t(6), t(7)}), V::list()})},
                    {"p", V::custom("P", {}, {t(8), 1.5})},
                    {"e", V::dict({})}});
}

static std::vector<std::string> key_paths(const V& v) {
    std::vector<std::string> out;
    for (const auto& [path, leaf] : yobx::tree_flatten_with_path(v).first) out.push_back(yobx::keystr(path));
    return out;
}

TEST_CASE("a Value made by tree_unflatten is kept flat until a non-const accessor could change it") {
    const V e = every_kind();
    const auto [leaves, spec] = yobx::tree_flatten(e);
    V v = yobx::tree_unflatten<V>(std::span<const DenseTensor>(leaves), spec);
    REQUIRE(v.is_flat());
    // Read without building the tree.
    CHECK(v.kind() == V::Kind::dict);
    CHECK(v.size() == 5);
    CHECK(v.type_name() == "dict");
    // Flattened again: the same spec, shared, and the leaves, walking no tree.
    auto [again, spec2] = yobx::tree_flatten(v);
    CHECK(&spec2.data() == &spec.data());
    CHECK(again == leaves);
    CHECK(yobx::tree_leaves(v) == leaves);
    CHECK(yobx::num_leaves(v) == 8);
    CHECK(&yobx::tree_structure(v).data() == &spec.data());
    const auto ptrs = yobx::tree_flatten_ptrs(v).first;
    REQUIRE(ptrs.size() == 8);
    for (std::size_t i = 0; i < ptrs.size(); ++i) CHECK(ptrs[i]->shares_storage_with(leaves[i]));
    // Looking inside builds the tree; the value stays flat.
    const V& cv = v;
    CHECK(cv.repr() == e.repr());
    CHECK(cv == e);
    CHECK(e == cv);
    CHECK(cv["l"].size() == 9);
    CHECK(cv["cache"].type_name() == "DynamicCache");
    CHECK(cv["p"].custom().keys.empty());
    CHECK(cv["l"][-1].tensor().shares_storage_with(leaves[4]));
    CHECK(key_paths(v) == key_paths(e));
    CHECK(v.is_flat());
    CHECK(yobx::tree_flatten_ptrs(v).first == ptrs);
    // The tree stays where it is: what const access handed out is still there after a non-const one.
    const V* ids = &cv["ids"];
    const V::List* l = &cv["l"].items();
    CHECK(&v["ids"] == ids);
    CHECK_FALSE(v.is_flat());
    CHECK(&v["l"].items() == l);
    // Changed, the tree is the value.
    v["ids"] = V(tensor({9, 9}));
    v["l"].push_back(yobx::none);
    auto [changed, spec3] = yobx::tree_flatten(v);
    CHECK(changed[0].shape() == std::vector<std::int64_t>{9, 9});
    CHECK(spec3.to_string() ==
          "TreeSpec(dict, ['ids', 'l', 'cache', 'p', 'e'], [*, TreeSpec(list, None, [*, *, None, 3, -0.0, 's', False, "
          "TreeSpec(tuple, None, [*]), *, None]), TreeSpec(DynamicCache, ['key_cache', 'value_cache'], "
          "[TreeSpec(list, None, [*, *]), TreeSpec(list, None, [])]), TreeSpec(P, None, [*, 1.5]), "
          "TreeSpec(dict, [], [])])");
    CHECK(yobx::tree_flatten_ptrs(v).first[0] == &v["ids"].tensor());
    CHECK_FALSE(v == e);
}

TEST_CASE("every way to a Value keeps containers flat and builds the rest") {
    const V e = every_kind();
    auto [leaves, spec] = yobx::tree_flatten(e);
    CHECK(yobx::tree_unflatten<V>(leaves, spec).is_flat());
    CHECK(yobx::to_value(std::pair{tensor({1}), 2}).is_flat());
    const V mapped = yobx::tree_map([](const DenseTensor& t) { return tensor({t.shape()[0] * 10}); }, e);
    CHECK(mapped.is_flat());
    CHECK(mapped["p"][0].tensor().shape()[0] == 80);
    // A root that is no container is built at once.
    const V leaf = yobx::tree_unflatten<V>(std::vector{tensor({2})}, yobx::TreeSpec::leaf());
    CHECK_FALSE(leaf.is_flat());
    CHECK(leaf.tensor().shape()[0] == 2);
    CHECK(yobx::tree_unflatten<V>(std::vector<DenseTensor>{}, yobx::TreeSpec::none()).is_none());
    CHECK(yobx::tree_unflatten<V>(std::vector<DenseTensor>{}, yobx::TreeSpec::constant(2.5)).as_double() == 2.5);
    // A subtree spec.
    const V cache = yobx::tree_unflatten<V>(std::vector{tensor({6}), tensor({7})}, spec.child(2));
    CHECK(cache.is_flat());
    CHECK(cache.type_name() == "DynamicCache");
    CHECK(cache.size() == 2);
    CHECK(cache == e["cache"]);
    // Wrong counts are refused before anything is kept.
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<V>(std::vector{tensor({1})}, spec),
                         "tree_unflatten: the spec has 8 leaves but 1 leaves were given", yobx::value_error);
    const std::vector<DenseTensor> nine(9, tensor({1}));
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<V>(std::span<const DenseTensor>(nine), spec),
                         "tree_unflatten: the spec has 8 leaves but 9 leaves were given", yobx::value_error);
}

TEST_CASE("copies of a flat Value share it, changing one leaves the others alone") {
    const V e = every_kind();
    auto [leaves, spec] = yobx::tree_flatten(e);
    V a = yobx::tree_unflatten<V>(std::move(leaves), spec);
    V b = a;
    CHECK(b.is_flat());
    CHECK(yobx::tree_flatten_ptrs(b).first == yobx::tree_flatten_ptrs(a).first);
    b["ids"] = 7;
    CHECK(a.is_flat());
    CHECK(a == e);
    CHECK(yobx::tree_structure(b).to_string().starts_with("TreeSpec(dict, ['ids', 'l', 'cache', 'p', 'e'], [7, "));
    // A copy of a changed Value is a copy of its tree.
    V c = b;
    CHECK_FALSE(c.is_flat());
    CHECK(c == b);
    c["ids"] = 8;
    CHECK(b["ids"].as_int() == 7);
    // Assignment, both ways.
    c = a;
    CHECK(c.is_flat());
    CHECK(c == e);
    c = b;
    CHECK_FALSE(c.is_flat());
    CHECK(c["ids"].as_int() == 7);
    // Moved from, a flat Value is None.
    V d = std::move(a);
    CHECK(d.is_flat());
    CHECK(a.is_none());
    CHECK(a.repr() == "None");
    a = std::move(d);
    CHECK(a == e);
    CHECK(d.is_none());
    V& self = a;
    a = std::move(self);
    CHECK(a == e);
}

TEST_CASE("a Value takes a part of itself") {
    const V e = every_kind();
    auto [leaves, spec] = yobx::tree_flatten(e);
    for (const bool flat : {true, false}) {
        INFO(flat);
        V v = flat ? yobx::tree_unflatten<V>(leaves, spec) : e;
        v = std::move(v["cache"]);
        CHECK(v == e["cache"]);
        v = v["value_cache"];
        CHECK(v == V::list());
        V w = flat ? yobx::tree_unflatten<V>(leaves, spec) : e;
        w = w["l"][7];
        CHECK(w.repr() == "(Tensor(shape=[4], dtype=float32),)");
        w = std::move(w[0]);
        CHECK(w.tensor().shares_storage_with(leaves[3]));
    }
}

TEST_CASE("a flat Value inside a larger structure flattens from its spec") {
    const V e = every_kind();
    auto [leaves, spec] = yobx::tree_flatten(e);
    const V flat = yobx::tree_unflatten<V>(std::move(leaves), spec);
    const V outer = V::list({flat, V::tuple({flat, 3})});
    const V eager = V::list({e, V::tuple({e, 3})});
    auto [l1, s1] = yobx::tree_flatten(outer);
    auto [l2, s2] = yobx::tree_flatten(eager);
    CHECK(s1.to_string() == s2.to_string());
    CHECK(s1 == s2);
    CHECK(l1 == l2);
    CHECK(key_paths(outer) == key_paths(eager));
    CHECK(key_paths(outer)[13] == "[1][0]['cache'].key_cache[0]");
    CHECK(yobx::tree_leaves(outer) == l2);
    const auto ptrs = yobx::tree_flatten_ptrs(outer).first;
    const auto inner = yobx::tree_flatten_ptrs(flat).first;
    REQUIRE(ptrs.size() == 16);
    for (std::size_t i = 0; i < 8; ++i) {
        CHECK(ptrs[i] == inner[i]);
        CHECK(ptrs[8 + i] == inner[i]);
    }
    CHECK(outer[0].is_flat());
    // In a static structure too.
    auto [l3, s3] = yobx::tree_flatten(std::pair{flat, std::vector{tensor({3})}});
    CHECK(s3.to_string() == yobx::tree_structure(std::pair{e, std::vector{tensor({3})}}).to_string());
    CHECK(l3.size() == 9);
}

TEST_CASE("threads looking inside one flat Value at once see one tree") {
    const V e = every_kind();
    auto [leaves, spec] = yobx::tree_flatten(e);
    for (int round = 0; round < 20; ++round) {
        const V v = yobx::tree_unflatten<V>(leaves, spec);
        std::vector<const V*> seen(4);
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&v, &seen, i] { seen[i] = &v["cache"]; });
        for (auto& t : threads) t.join();
        for (const V* p : seen) CHECK(p == seen[0]);
        CHECK(v.is_flat());
    }
}

TEST_CASE("a flat Value holds copies of its leaves until its last copy goes, whatever their alignment") {
    const std::vector<CountedTensor> leaves = counted(5);
    const yobx::TreeSpec spec = yobx::tree_structure(CV::list({leaves[0], CV::tuple({leaves[1], leaves[2]}), leaves[3], leaves[4]}));
    REQUIRE(CountedTensor::live.load() == 5);
    {
        CV a = yobx::tree_unflatten<CV>(std::span<const CountedTensor>(leaves), spec);
        REQUIRE(a.is_flat());
        CHECK(CountedTensor::live.load() == 10);
        const auto ptrs = yobx::tree_flatten_ptrs(a).first;
        REQUIRE(ptrs.size() == 5);
        for (std::size_t i = 0; i < ptrs.size(); ++i) {
            CHECK(reinterpret_cast<std::uintptr_t>(ptrs[i]) % 64 == 0);
            CHECK(ptrs[i]->shape == std::vector<std::int64_t>{static_cast<std::int64_t>(i)});
            CHECK(ptrs[i] != &leaves[i]);
        }
        // More than one allocation, so that no alignment comes by chance.
        std::vector<CV> more;
        for (int i = 0; i < 8; ++i) more.push_back(yobx::tree_unflatten<CV>(std::span<const CountedTensor>(leaves), spec));
        for (const CV& m : more)
            for (const CountedTensor* p : yobx::tree_flatten_ptrs(m).first) CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
        more.clear();
        CV b = a;  // shares the leaves
        CHECK(CountedTensor::live.load() == 10);
        a = CV();
        CHECK(CountedTensor::live.load() == 10);
        CHECK(b[1][1].tensor().shape == std::vector<std::int64_t>{2});
        CHECK(yobx::tree_leaves(b).size() == 5);
        CHECK(CountedTensor::live.load() == 10);
    }
    CHECK(CountedTensor::live.load() == 5);
    // Leaves moved in are kept as they are, not copied.
    {
        std::vector<CountedTensor> moved = leaves;
        const CountedTensor* first = moved.data();
        CV m = yobx::tree_unflatten<CV>(std::move(moved), spec);
        CHECK(CountedTensor::live.load() == 10);
        CHECK(yobx::tree_flatten_ptrs(m).first[0] == first);
    }
    CHECK(CountedTensor::live.load() == 5);
}

TEST_CASE("a leaf copy that throws in tree_unflatten leaves nothing behind") {
    const std::vector<CountedTensor> leaves = counted(6);
    const yobx::TreeSpec spec = yobx::tree_structure(CV::list({leaves[0], leaves[1], leaves[2], leaves[3], leaves[4], leaves[5]}));
    for (int after : {0, 3, 5}) {
        INFO(std::string("copies before the throw: " + std::to_string(after)));
        CountedTensor::copies_before_throw = after;
        CHECK_THROWS_WITH_AS(yobx::tree_unflatten<CV>(std::span<const CountedTensor>(leaves), spec),
                             "CountedTensor: copy refused", std::runtime_error);
        CountedTensor::copies_before_throw = -1;
        CHECK(CountedTensor::live.load() == 6);
    }
}

TEST_CASE("copies of a flat Value are dropped on several threads, its leaves released once") {
    const std::vector<CountedTensor> leaves = counted(3);
    const yobx::TreeSpec spec = yobx::tree_structure(CV::tuple({leaves[0], leaves[1], leaves[2]}));
    for (int round = 0; round < 20; ++round) {
        std::vector<CV> copies(4, yobx::tree_unflatten<CV>(std::span<const CountedTensor>(leaves), spec));
        REQUIRE(CountedTensor::live.load() == 6);
        std::vector<std::size_t> sizes(copies.size());
        std::vector<std::thread> threads;
        for (std::size_t i = 0; i < copies.size(); ++i)
            threads.emplace_back([&copies, &sizes, i] {
                CV mine = std::move(copies[i]);
                sizes[i] = yobx::tree_leaves(mine).size();
            });
        for (auto& t : threads) t.join();
        for (std::size_t n : sizes) CHECK(n == 3);
        CHECK(CountedTensor::live.load() == 3);
    }
}

// A flat Value of CountedTensor holding copies of the first n of `leaves`.
static CV flat_list(const std::vector<CountedTensor>& leaves, std::size_t n) {
    const std::span<const CountedTensor> first(leaves.data(), n);
    return yobx::tree_unflatten<CV>(first, yobx::tree_structure(std::vector<CountedTensor>(first.begin(), first.end())));
}

static const CountedTensor* first_leaf(const CV& v) { return yobx::tree_flatten_ptrs(v).first.at(0); }

TEST_CASE("a thread keeps the block of a flat Value it dropped and gives it to the next one that fits") {
    using Flat = yobx::detail::FlatTree<CountedTensor>;
    const std::vector<CountedTensor> leaves = counted(300);
    REQUIRE(300 * sizeof(CountedTensor) > Flat::max_cached_bytes);
    // On a new thread, whose cache starts empty.
    std::thread([&] {
        CHECK(Flat::cached_bytes() == 0);
        const CountedTensor* kept = nullptr;
        {
            const CV a = flat_list(leaves, 5);
            kept = first_leaf(a);
        }
        const std::size_t five = Flat::cached_bytes();
        CHECK(five >= 5 * sizeof(CountedTensor));
        CHECK(CountedTensor::live.load() == 300);  // the leaves went with the Value, only the memory is kept
        {
            const CV b = flat_list(leaves, 5);
            CHECK(first_leaf(b) == kept);
            CHECK(Flat::cached_bytes() == 0);
            const CV c = flat_list(leaves, 4);  // nothing kept: a block of its own
            CHECK(first_leaf(c) != kept);
        }
        CHECK(Flat::cached_bytes() == five);  // of b's and c's blocks, the larger is kept
        {
            const CV d = flat_list(leaves, 4);  // fits, in more than half of it
            CHECK(first_leaf(d) == kept);
        }
        CHECK(Flat::cached_bytes() == five);  // kept with its whole size
        {
            const CV e = flat_list(leaves, 1);  // would use less than half of it
            CHECK(first_leaf(e) != kept);
            CHECK(Flat::cached_bytes() == five);
        }
        CHECK(Flat::cached_bytes() == five);
        { const CV f = flat_list(leaves, 9); }
        CHECK(Flat::cached_bytes() == five + 4 * sizeof(CountedTensor));  // a larger block replaces it
        { const CV big = flat_list(leaves, 300); }
        CHECK(Flat::cached_bytes() == five + 4 * sizeof(CountedTensor));  // too large to keep
        // Leaves moved in keep their vector: no block of leaves to keep.
        { const CV moved = yobx::tree_unflatten<CV>(counted(20), yobx::tree_structure(counted(20))); }
        CHECK(Flat::cached_bytes() == five + 4 * sizeof(CountedTensor));
        CHECK(CountedTensor::live.load() == 300);
    }).join();
    CHECK(CountedTensor::live.load() == 300);
}

TEST_CASE("the blocks threads keep are freed when the threads end, after any Value they still hold") {
    // Under the sanitizer preset LeakSanitizer fails the run if a block
    // outlives its thread.
    using Flat = yobx::detail::FlatTree<CountedTensor>;
    const std::vector<CountedTensor> leaves = counted(6);
    struct Holder {
        CV v;
    };
    std::vector<std::size_t> kept(4);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < kept.size(); ++i)
        threads.emplace_back([&leaves, &kept, i] {
            thread_local Holder held;  // destroyed after the thread's cache closes
            { const CV a = flat_list(leaves, 2 + i); }
            kept[i] = Flat::cached_bytes();
            held.v = flat_list(leaves, 6);
        });
    for (auto& t : threads) t.join();
    CHECK(kept[0] >= 2 * sizeof(CountedTensor));
    for (std::size_t i = 1; i < kept.size(); ++i) CHECK(kept[i] == kept[0] + i * sizeof(CountedTensor));
    CHECK(CountedTensor::live.load() == 6);
}

#ifdef YOBX_DETAIL_ASAN
TEST_CASE("under AddressSanitizer a kept block is poisoned until it is reused") {
    const std::vector<CountedTensor> leaves = counted(3);
    std::thread([&] {
        const CountedTensor* kept = nullptr;
        {
            const CV a = flat_list(leaves, 3);
            kept = first_leaf(a);
            CHECK_FALSE(__asan_address_is_poisoned(kept));
        }
        CHECK(__asan_address_is_poisoned(kept));
        CHECK(__asan_address_is_poisoned(kept + 2));
        const CV b = flat_list(leaves, 3);
        CHECK(first_leaf(b) == kept);
        CHECK_FALSE(__asan_address_is_poisoned(kept));
        CHECK_FALSE(__asan_address_is_poisoned(kept + 2));
    }).join();
}
#endif

TEST_CASE("a flatten that leaves the last spec at any step builds the rest of its own") {
    // Each flatten checks its structure against the spec this thread made
    // last; each pair below parts from it at a different step.
    const auto t = [] { return V(tensor({1})); };
    struct Pair {
        V last, next;
        std::string spec;
        std::size_t leaves;
    };
    const std::vector<Pair> pairs{
        // a node with another child count
        {V::list({t(), t()}), V::list({t(), t(), t()}), "TreeSpec(list, None, [*, *, *])", 3},
        // a run of leaves where a constant was
        {V::list({V(1), t()}), V::list({t(), t()}), "TreeSpec(list, None, [*, *])", 2},
        // a constant where a leaf was, after a shorter run of leaves
        {V::list({t(), t(), t()}), V::list({t(), V(2), t()}), "TreeSpec(list, None, [*, 2, *])", 2},
        // another constant
        {V::list({t(), V(1)}), V::list({t(), V(2)}), "TreeSpec(list, None, [*, 2])", 1},
        // None where a leaf was
        {V::list({t(), t()}), V::list({t(), V()}), "TreeSpec(list, None, [*, None])", 1},
        // another key
        {V::dict({{"a", t()}}), V::dict({{"b", t()}}), "TreeSpec(dict, ['b'], [*])", 1},
        // a nested node that differs after the first one matched
        {V::dict({{"a", V::list({t(), t()})}, {"b", V::list({t()})}}),
         V::dict({{"a", V::list({t(), t()})}, {"b", V::tuple({t(), V(1)})}}),
         "TreeSpec(dict, ['a', 'b'], [TreeSpec(list, None, [*, *]), TreeSpec(tuple, None, [*, 1])])", 3},
        // fewer children at the root, the first of them the same
        {V::list({t(), V::list({t()})}), V::list({t()}), "TreeSpec(list, None, [*])", 1},
    };
    for (const auto& p : pairs) {
        INFO(p.spec);
        (void)yobx::tree_flatten(p.last);
        const auto [leaves, spec] = yobx::tree_flatten(p.next);
        CHECK(spec.to_string() == p.spec);
        CHECK(leaves.size() == p.leaves);
        CHECK(spec.num_leaves() == p.leaves);
        // Flattened again, the same structure shares the spec just made.
        CHECK(&yobx::tree_flatten(p.next).second.data() == &spec.data());
        auto [ptrs, spec2] = yobx::tree_flatten_ptrs(p.next);
        CHECK(spec2 == spec);
    }
}
