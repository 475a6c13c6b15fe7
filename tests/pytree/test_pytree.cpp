// The static pytree layer: every node kind, specs, key paths, fixed-size flatten, errors.
#include "../support.hpp"

#include <yobx/pytree.hpp>

#include <doctest/doctest.h>

#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

using namespace test;
using yobx::TreeSpec;

namespace {

// Flattens x, checks the spec text and the leaf count, unflattens and returns the result.
template <class X>
X round_trip(const X& x, const std::string& spec_text, std::size_t n_leaves) {
    auto [leaves, spec] = yobx::tree_flatten<DenseTensor>(x);
    CHECK(spec.to_string() == spec_text);
    CHECK(leaves.size() == n_leaves);
    CHECK(spec.num_leaves() == n_leaves);
    CHECK(yobx::num_leaves<DenseTensor>(x) == n_leaves);
    return yobx::tree_unflatten<X>(std::move(leaves), spec);
}

std::vector<std::int64_t> dims(const DenseTensor& t) { return t.shape(); }

}  // namespace

TEST_CASE("a tensor alone is a leaf") {
    auto back = round_trip(tensor({2}), "*", 1);
    CHECK(dims(back) == std::vector<std::int64_t>{2});
}

TEST_CASE("optional: absent is None, present is its value") {
    std::optional<DenseTensor> absent;
    CHECK_FALSE(round_trip(absent, "None", 0).has_value());
    std::optional<DenseTensor> present = tensor({3});
    CHECK(dims(*round_trip(present, "*", 1)) == std::vector<std::int64_t>{3});
}

TEST_CASE("vector is a list") {
    std::vector<DenseTensor> v{tensor({1}), tensor({2}), tensor({3})};
    auto back = round_trip(v, "TreeSpec(list, None, [*, *, *])", 3);
    REQUIRE(back.size() == 3);
    CHECK(dims(back[2]) == std::vector<std::int64_t>{3});
    CHECK(round_trip(std::vector<DenseTensor>{}, "TreeSpec(list, None, [])", 0).empty());
}

TEST_CASE("array, tuple and pair are tuples") {
    std::array<DenseTensor, 2> a{tensor({1}), tensor({2})};
    CHECK(dims(round_trip(a, "TreeSpec(tuple, None, [*, *])", 2)[1]) == std::vector<std::int64_t>{2});
    std::tuple<DenseTensor, int, std::string> t{tensor({4}), 7, "mean"};
    auto bt = round_trip(t, "TreeSpec(tuple, None, [*, 7, 'mean'])", 1);
    CHECK(std::get<1>(bt) == 7);
    CHECK(std::get<2>(bt) == "mean");
    std::pair<DenseTensor, bool> p{tensor({5}), true};
    CHECK(round_trip(p, "TreeSpec(tuple, None, [*, True])", 1).second);
}

TEST_CASE("scalars are kept in the spec, not as leaves") {
    std::tuple<bool, int, std::int64_t, unsigned, double, float, std::string> s{false, -3, 1LL << 40, 9u, 0.25, 1.5f,
                                                                                 "x"};
    auto back = round_trip(s, "TreeSpec(tuple, None, [False, -3, 1099511627776, 9, 0.25, 1.5, 'x'])", 0);
    CHECK(back == s);
}

TEST_CASE("std::map is a dict in key order") {
    std::map<std::string, DenseTensor> m{{"b", tensor({2})}, {"a", tensor({1})}};
    auto back = round_trip(m, "TreeSpec(dict, ['a', 'b'], [*, *])", 2);
    CHECK(dims(back.at("b")) == std::vector<std::int64_t>{2});
}

TEST_CASE("std::unordered_map is a dict in sorted key order") {
    std::unordered_map<std::string, DenseTensor> m{{"z", tensor({3})}, {"m", tensor({2})}, {"a", tensor({1})}};
    auto [leaves, spec] = yobx::tree_flatten(m);
    CHECK(spec.to_string() == "TreeSpec(dict, ['a', 'm', 'z'], [*, *, *])");
    CHECK(dims(leaves[2]) == std::vector<std::int64_t>{3});
    auto back = yobx::tree_unflatten<decltype(m)>(leaves, spec);
    CHECK(dims(back.at("m")) == std::vector<std::int64_t>{2});
}

TEST_CASE("ordered_dict is a dict in insertion order") {
    yobx::ordered_dict<DenseTensor> d{{"input_ids", tensor({1})}, {"attention_mask", tensor({2})}};
    auto back = round_trip(d, "TreeSpec(dict, ['input_ids', 'attention_mask'], [*, *])", 2);
    CHECK(back.begin()->first == "input_ids");
}

TEST_CASE("aggregates are tuples of their fields (Boost.PFR)") {
    Aggregate a{tensor({2}), 5, std::nullopt};
    auto back = round_trip(a, "TreeSpec(tuple, None, [*, 5, None])", 1);
    CHECK(back.n == 5);
    CHECK_FALSE(back.b.has_value());
    Aggregate b{tensor({2}), 6, tensor({3})};
    CHECK(dims(*round_trip(b, "TreeSpec(tuple, None, [*, 6, *])", 2).b) == std::vector<std::int64_t>{3});
}

TEST_CASE("Hana structs are dicts keyed by field name") {
    Kwargs k{tensor({1, 8}), std::nullopt, true};
    auto back = round_trip(k, "TreeSpec(dict, ['input_ids', 'attention_mask', 'use_cache'], [*, None, True])", 1);
    CHECK(back.input_ids.has_value());
    CHECK_FALSE(back.attention_mask.has_value());
    CHECK(back.use_cache);
}

TEST_CASE("Hana structs unflatten by field name, optional fields may be missing") {
    auto spec = TreeSpec::dict({"use_cache", "attention_mask"}, {TreeSpec::constant(false), TreeSpec::leaf()});
    auto k = yobx::tree_unflatten<Kwargs>(std::vector{tensor({1, 4})}, spec);
    CHECK_FALSE(k.input_ids.has_value());
    CHECK(dims(*k.attention_mask) == std::vector<std::int64_t>{1, 4});
    CHECK_FALSE(k.use_cache);
}

TEST_CASE("Hana struct errors name the key and the fields") {
    auto unknown = TreeSpec::dict({"use_cache", "pixel_values"}, {TreeSpec::constant(true), TreeSpec::leaf()});
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<Kwargs>(std::vector{tensor({1})}, unknown),
                         "tree_unflatten: the dict key 'pixel_values' is not a field of the requested struct "
                         "(fields: input_ids, attention_mask, use_cache)",
                         yobx::value_error);
    auto missing = TreeSpec::dict({"input_ids"}, {TreeSpec::leaf()});
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<Kwargs>(std::vector{tensor({1})}, missing),
                         "tree_unflatten: the dict has no key 'use_cache' for a required field of the requested "
                         "struct (fields: input_ids, attention_mask, use_cache)",
                         yobx::value_error);
}

TEST_CASE("a registered class is a custom node with named children") {
    KVCache c{{tensor({1, 2, 3, 4}), tensor({1, 2, 3, 4})}, {tensor({1, 2, 3, 4}), tensor({1, 2, 3, 4})}};
    auto back = round_trip(c,
                           "TreeSpec(DynamicCache, ['key_cache', 'value_cache'], "
                           "[TreeSpec(list, None, [*, *]), TreeSpec(list, None, [*, *])])",
                           4);
    CHECK(back.key_cache.size() == 2);
    CHECK(back.value_cache.size() == 2);
}

TEST_CASE("a registered class without flatten_with_keys has positional children") {
    Pair2 p{tensor({1}), tensor({2})};
    auto back = round_trip(p, "TreeSpec(Pair2, None, [*, *])", 2);
    CHECK(dims(back.second) == std::vector<std::int64_t>{2});
    auto [pairs, spec] = yobx::tree_flatten_with_path(p);
    CHECK(yobx::keystr(pairs[1].first) == "[1]");
}

TEST_CASE("leaves come back as the same tensors, in order") {
    auto a = tensor({1}), b = tensor({2}), c = tensor({3});
    std::tuple<DenseTensor, std::vector<DenseTensor>> x{a, {b, c}};
    auto leaves = yobx::tree_leaves(x);
    REQUIRE(leaves.size() == 3);
    CHECK(leaves[0].shares_storage_with(a));
    CHECK(leaves[1].shares_storage_with(b));
    CHECK(leaves[2].shares_storage_with(c));
    auto back = yobx::tree_unflatten<decltype(x)>(leaves, yobx::tree_structure(x));
    CHECK(std::get<1>(back)[1].shares_storage_with(c));
}

TEST_CASE("key paths print like torch's keystr") {
    using Kw = yobx::ordered_dict<std::optional<KVCache>>;
    KVCache cache{{tensor({1}), tensor({1}), tensor({1}), tensor({1})}, {tensor({1})}};
    std::tuple<DenseTensor, Kw> args{tensor({2}), Kw{{"past_key_values", cache}}};
    auto [pairs, spec] = yobx::tree_flatten_with_path(args);
    REQUIRE(pairs.size() == 6);
    std::vector<std::string> paths;
    for (const auto& [path, leaf] : pairs) paths.push_back(yobx::keystr(path));
    CHECK(paths == std::vector<std::string>{"[0]", "[1]['past_key_values'].key_cache[0]",
                                            "[1]['past_key_values'].key_cache[1]",
                                            "[1]['past_key_values'].key_cache[2]",
                                            "[1]['past_key_values'].key_cache[3]",
                                            "[1]['past_key_values'].value_cache[0]"});
    CHECK(spec == yobx::tree_structure(args));
}

TEST_CASE("mixed nesting round-trips") {
    using X = std::vector<std::pair<std::string, std::map<std::string, std::optional<std::array<DenseTensor, 2>>>>>;
    X x{{"a", {{"k", std::array{tensor({1}), tensor({2})}}, {"m", std::nullopt}}}, {"b", {}}};
    auto back = round_trip(x,
                           "TreeSpec(list, None, [TreeSpec(tuple, None, ['a', TreeSpec(dict, ['k', 'm'], "
                           "[TreeSpec(tuple, None, [*, *]), None])]), TreeSpec(tuple, None, ['b', "
                           "TreeSpec(dict, [], [])])])",
                           2);
    CHECK(back[0].first == "a");
    CHECK(dims((*back[0].second.at("k"))[1]) == std::vector<std::int64_t>{2});
    CHECK_FALSE(back[0].second.at("m").has_value());
}

TEST_CASE("the leaf count of a fixed type is known at compile time") {
    static_assert(yobx::static_num_leaves<Fixed> == 4);
    static_assert(yobx::static_num_leaves<std::tuple<DenseTensor, int>> == 1);
    static_assert(yobx::static_num_leaves<std::vector<DenseTensor>> == -1);
    static_assert(yobx::static_num_leaves<Aggregate> == -1);  // holds an optional
    static_assert(yobx::static_num_leaves<KVCache> == -1);
    static_assert(yobx::static_num_leaves<Pair2> == 2);
    CHECK(yobx::num_leaves(Fixed{}) == 4);
}

TEST_CASE("fixed-size flatten fills a std::array") {
    Fixed f{tensor({1}), {tensor({2}), tensor({3})}, {tensor({4}), 0.5}};
    std::tuple<Fixed, std::array<DenseTensor, 2>> wrapped{f, {tensor({5}), tensor({6})}};
    CHECK(yobx::tree_leaf_ptrs(wrapped)[5] == &std::get<1>(wrapped)[1]);
    std::array<DenseTensor, 4> leaves = yobx::tree_leaves_fixed(f);
    CHECK(dims(leaves[3]) == std::vector<std::int64_t>{4});
    CHECK(leaves[1].shares_storage_with(f.y.first));
    auto ptrs = yobx::tree_leaf_ptrs(f);
    static_assert(std::is_same_v<decltype(ptrs), std::array<const DenseTensor*, 4>>);
    CHECK(ptrs[0] == &f.x);
    CHECK(ptrs[2] == &f.y.second);
    CHECK(ptrs[3] == &std::get<0>(f.z));
    auto pp = yobx::tree_leaf_ptrs(Pair2{});
    CHECK(pp.size() == 2);

    // A std::array is walked by a loop: tensors as one run, other elements
    // one by one, with their own addresses, key paths and spec.
    std::array<std::pair<DenseTensor, int>, 2> pairs{{{tensor({7}), 1}, {tensor({8}), 2}}};
    const auto pair_ptrs = yobx::tree_leaf_ptrs(pairs);
    CHECK(pair_ptrs == std::array<const DenseTensor*, 2>{&pairs[0].first, &pairs[1].first});
    CHECK(yobx::tree_leaves_fixed(pairs)[1].shares_storage_with(pairs[1].first));
    const auto [with_paths, pairs_spec] = yobx::tree_flatten_with_path(pairs);
    REQUIRE(with_paths.size() == 2);
    CHECK(yobx::keystr(with_paths[1].first) == "[1][0]");
    CHECK(pairs_spec.to_string() == "TreeSpec(tuple, None, [TreeSpec(tuple, None, [*, 1]), TreeSpec(tuple, None, [*, 2])])");
    const std::array<DenseTensor, 3> run{tensor({1}), tensor({2}), tensor({3})};
    CHECK(yobx::tree_leaf_ptrs(run)[2] == &run[2]);
    CHECK(yobx::keystr(yobx::tree_flatten_with_path(run).first[2].first) == "[2]");
    CHECK(yobx::tree_flatten_ptrs(run).first == std::vector<const DenseTensor*>{&run[0], &run[1], &run[2]});
}

TEST_CASE("tree_flatten_ptrs gives the addresses inside the argument and the same spec") {
    KVCache cache{{tensor({1}), tensor({2})}, {tensor({3})}};
    std::tuple<DenseTensor, std::vector<DenseTensor>, std::optional<KVCache>, int> x{tensor({4}), {tensor({5})}, cache, 7};
    auto [ptrs, spec] = yobx::tree_flatten_ptrs(x);
    static_assert(std::is_same_v<decltype(ptrs), std::vector<const DenseTensor*>>);
    REQUIRE(ptrs.size() == 5);
    CHECK(ptrs[0] == &std::get<0>(x));
    CHECK(ptrs[1] == &std::get<1>(x)[0]);
    CHECK(ptrs[2] == &std::get<2>(x)->key_cache[0]);
    CHECK(ptrs[3] == &std::get<2>(x)->key_cache[1]);
    CHECK(ptrs[4] == &std::get<2>(x)->value_cache[0]);
    CHECK(spec.to_string() == "TreeSpec(tuple, None, [*, TreeSpec(list, None, [*]), TreeSpec(DynamicCache, "
                              "['key_cache', 'value_cache'], [TreeSpec(list, None, [*, *]), TreeSpec(list, None, "
                              "[*])]), 7])");
    CHECK(spec == yobx::tree_structure(x));
}

// A registered node whose flatten flattens something itself, while the
// outer flatten is writing its spec.
struct Checked {
    std::vector<DenseTensor> items;
};

template <>
struct yobx::pytree_node<Checked> {
    static constexpr std::string_view type_name = "Checked";
    static auto flatten(const Checked& c) {
        if (yobx::tree_leaves(c.items).size() != yobx::tree_structure(c.items).num_leaves())
            throw std::logic_error("the nested flatten disagrees with itself");
        return std::tie(c.items);
    }
    static Checked unflatten(std::vector<DenseTensor> items) { return {std::move(items)}; }
};

TEST_CASE("flattening the same structure again shares its spec") {
    std::vector<DenseTensor> a{tensor({1}), tensor({2})}, b{tensor({3}), tensor({4})};
    const auto sa = yobx::tree_structure(a);
    const auto sb = yobx::tree_structure(b);
    CHECK(sa == sb);
    CHECK(&sa.data() == &sb.data());
    CHECK(&yobx::tree_structure(std::vector<DenseTensor>(3)).data() != &sa.data());

    // Interning compares bits: -0.0 equals 0.0 as a constant, but prints differently.
    const auto zero = yobx::tree_structure<DenseTensor>(std::tuple{0.0});
    const auto minus_zero = yobx::tree_structure<DenseTensor>(std::tuple{-0.0});
    CHECK(zero.to_string() == "TreeSpec(tuple, None, [0.0])");
    CHECK(minus_zero.to_string() == "TreeSpec(tuple, None, [-0.0])");
    CHECK(zero == minus_zero);
    CHECK(&zero.data() != &minus_zero.data());

    // A spec larger than a thread keeps (16384 nodes) is built each time, not kept.
    const std::vector<DenseTensor> huge(20000);
    CHECK(&yobx::tree_structure(huge).data() != &yobx::tree_structure(huge).data());
    CHECK(yobx::tree_structure(huge).num_leaves() == 20000);

    // More structures than the thread keeps: the first is built again, the same.
    for (int n = 0; n < 6; ++n) CHECK(yobx::tree_structure<DenseTensor>(std::vector<int>(n)).num_children() == n);
    CHECK(yobx::tree_structure(a).to_string() == "TreeSpec(list, None, [*, *])");
}

TEST_CASE("a key that differs from the last spec's in one byte gets a spec of its own") {
    // A flatten checks its keys against the spec it flattened last; each
    // length takes its own path there (short, two 4-byte or 8-byte words, longer).
    for (std::size_t n = 1; n <= 20; ++n) {
        const std::string base(n, 'k');
        for (std::size_t at = 0; at < n; ++at) {
            std::string other = base;
            other[at] = 'x';
            INFO(std::string("length " + std::to_string(n) + ", byte " + std::to_string(at)));
            const auto s = yobx::tree_structure(std::map<std::string, DenseTensor>{{base, {}}});
            const auto o = yobx::tree_structure(std::map<std::string, DenseTensor>{{other, {}}});
            CHECK(o.keys() == std::vector<std::string_view>{other});
            CHECK(s != o);
            CHECK(&yobx::tree_structure(std::map<std::string, DenseTensor>{{other, {}}}).data() == &o.data());
        }
    }
    // A key one byte longer or shorter is another key.
    using Keys = std::vector<std::string_view>;
    for (const std::string k : {"ab", "abc", "a", "", "ab"})
        CHECK(yobx::tree_structure(std::map<std::string, DenseTensor>{{k, {}}}).keys() == Keys{k});
}

TEST_CASE("a registered node may flatten inside its own flatten") {
    std::tuple<DenseTensor, Checked, std::vector<DenseTensor>> x{tensor({1}), {{tensor({2}), tensor({3})}}, {tensor({4})}};
    auto [leaves, spec] = yobx::tree_flatten(x);
    CHECK(spec.to_string() ==
          "TreeSpec(tuple, None, [*, TreeSpec(Checked, None, [TreeSpec(list, None, [*, *])]), TreeSpec(list, None, [*])])");
    REQUIRE(leaves.size() == 4);
    CHECK(leaves[3].shares_storage_with(std::get<2>(x)[0]));
    auto [ptrs, spec2] = yobx::tree_flatten_ptrs(x);
    CHECK(spec2 == spec);
    CHECK(ptrs[2] == &std::get<1>(x).items[1]);
}

TEST_CASE("threads flatten at the same time, each with its own structures") {
    auto work = [](int width) {
        std::vector<std::vector<DenseTensor>> x(static_cast<std::size_t>(width), std::vector<DenseTensor>(2));
        std::string expected = "TreeSpec(list, None, [";
        for (int i = 0; i < width; ++i) expected += i ? ", TreeSpec(list, None, [*, *])" : "TreeSpec(list, None, [*, *])";
        expected += "])";
        bool ok = true;
        for (int k = 0; k < 200; ++k) {
            auto [leaves, spec] = yobx::tree_flatten(x);
            ok = ok && leaves.size() == static_cast<std::size_t>(2 * width) && spec.to_string() == expected;
        }
        return ok;
    };
    bool first = false, second = false;
    std::thread t1([&] { first = work(3); });
    std::thread t2([&] { second = work(5); });
    t1.join();
    t2.join();
    CHECK(first);
    CHECK(second);
}

TEST_CASE("tree_map replaces every leaf") {
    std::pair<DenseTensor, std::vector<DenseTensor>> x{tensor({1}), {tensor({2})}};
    auto copies = yobx::tree_map([](const DenseTensor& t) { return t.clone(); }, x);
    CHECK_FALSE(copies.first.shares_storage_with(x.first));
    CHECK(dims(copies.second[0]) == std::vector<std::int64_t>{2});
    auto grown = yobx::tree_map([](const DenseTensor& t) { return tensor({t.shape()[0] * 10}); }, x);
    CHECK(dims(grown.second[0]) == std::vector<std::int64_t>{20});
}

TEST_CASE("tree_flatten with no tensor in the structure takes an explicit tensor type") {
    auto [leaves, spec] = yobx::tree_flatten<DenseTensor>(std::tuple{1, std::string("a")});
    CHECK(leaves.empty());
    CHECK(spec.to_string() == "TreeSpec(tuple, None, [1, 'a'])");
}

TEST_CASE("unflatten with the wrong number of leaves names both counts") {
    auto spec = yobx::tree_structure(std::vector<DenseTensor>(3));
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<std::vector<DenseTensor>>(std::vector<DenseTensor>(2), spec),
                         "tree_unflatten: the spec has 3 leaves but 2 leaves were given", yobx::value_error);
}

TEST_CASE("unflatten into a type the spec does not match names both structures") {
    auto spec = yobx::tree_structure(std::tuple{tensor({1}), std::vector<DenseTensor>{tensor({1})}});
    using Wrong = std::tuple<DenseTensor, std::map<std::string, DenseTensor>>;
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<Wrong>(std::vector<DenseTensor>(2), spec),
                         "tree_unflatten: the spec does not match the requested type at [1]: the type expects a "
                         "dict (string-keyed map) but the spec has TreeSpec(list, None, [*]) (whole spec: "
                         "TreeSpec(tuple, None, [*, TreeSpec(list, None, [*])]))",
                         yobx::value_error);
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<std::vector<DenseTensor>>(std::vector<DenseTensor>(2), spec),
                         "tree_unflatten: the spec does not match the requested type at <root>: the type expects a "
                         "list (std::vector) but the spec has TreeSpec(tuple, None, [*, TreeSpec(list, None, [*])])",
                         yobx::value_error);
    using Short = std::tuple<DenseTensor>;
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<Short>(std::vector<DenseTensor>(2), spec),
                         "tree_unflatten: the spec does not match the requested type at <root>: the type expects a "
                         "tuple of 1 but the spec has TreeSpec(tuple, None, [*, TreeSpec(list, None, [*])])",
                         yobx::value_error);
}

TEST_CASE("a vector of tensors unflattens its leaves at once, or child by child when the spec has other nodes") {
    const std::vector<DenseTensor> leaves{tensor({1}), tensor({2}), tensor({3})};
    const auto spec = yobx::tree_structure(leaves);
    const auto copied = yobx::tree_unflatten<std::vector<DenseTensor>>(std::span<const DenseTensor>(leaves), spec);
    REQUIRE(copied.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK(copied[i].shares_storage_with(leaves[i]));
    auto moved_from = leaves;
    const auto moved = yobx::tree_unflatten<std::vector<DenseTensor>>(std::move(moved_from), spec);
    REQUIRE(moved.size() == 3);
    CHECK(moved[2].shares_storage_with(leaves[2]));
    // In a struct, after other leaves: the run starts at the right leaf.
    std::pair<DenseTensor, std::vector<DenseTensor>> p{tensor({4}), leaves};
    auto [pl, ps] = yobx::tree_flatten(p);
    const auto back = yobx::tree_unflatten<decltype(p)>(std::move(pl), ps);
    CHECK(back.first.shares_storage_with(p.first));
    CHECK(back.second[0].shares_storage_with(leaves[0]));

    const auto with_none = TreeSpec::list({TreeSpec::leaf(), TreeSpec::none(), TreeSpec::leaf()});
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<std::vector<DenseTensor>>(std::vector<DenseTensor>(2), with_none),
                         "tree_unflatten: the spec does not match the requested type at [1]: the type expects a leaf "
                         "(tensor) but the spec has None (whole spec: TreeSpec(list, None, [*, None, *]))",
                         yobx::value_error);
    const auto nested = TreeSpec::list({TreeSpec::leaf(), TreeSpec::list({TreeSpec::leaf()})});
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<std::vector<DenseTensor>>(std::vector<DenseTensor>(2), nested),
                         "tree_unflatten: the spec does not match the requested type at [1]: the type expects a leaf "
                         "(tensor) but the spec has TreeSpec(list, None, [*]) (whole spec: TreeSpec(list, None, [*, "
                         "TreeSpec(list, None, [*])]))",
                         yobx::value_error);
}

TEST_CASE("unflatten checks a custom node's type name and constant kinds") {
    auto spec = TreeSpec::custom("StaticCache", {"key_cache", "value_cache"},
                                 {TreeSpec::list({}), TreeSpec::list({})});
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<KVCache>(std::vector<DenseTensor>{}, spec),
                         "tree_unflatten: the spec does not match the requested type at <root>: the type expects a "
                         "DynamicCache node with 2 children but the spec has TreeSpec(StaticCache, ['key_cache', "
                         "'value_cache'], [TreeSpec(list, None, []), TreeSpec(list, None, [])])",
                         yobx::value_error);
    auto ints = TreeSpec::tuple({TreeSpec::constant(std::int64_t{300})});
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<std::tuple<std::int8_t>>(std::vector<DenseTensor>{}, ints),
                         "tree_unflatten: the constant 300 at [0] does not fit in the requested integer type",
                         yobx::value_error);
    CHECK_THROWS_WITH_AS(yobx::tree_unflatten<std::tuple<std::string>>(std::vector<DenseTensor>{}, ints),
                         "tree_unflatten: the spec does not match the requested type at [0]: the type expects a str "
                         "constant but the spec has 300 (whole spec: TreeSpec(tuple, None, [300]))",
                         yobx::value_error);
}

TEST_CASE("unsigned constants beyond int64 are rejected at flatten") {
    std::tuple<DenseTensor, std::uint64_t> x{tensor({1}), ~std::uint64_t{0}};
    CHECK_THROWS_WITH_AS(yobx::tree_flatten(x),
                         "tree_flatten: the unsigned constant 18446744073709551615 does not fit in int64",
                         yobx::value_error);
}

TEST_CASE("TreeSpec factories build the same spec as flatten") {
    KVCache c{{tensor({1})}, {tensor({1})}};
    std::tuple<DenseTensor, std::optional<DenseTensor>, KVCache, double> x{tensor({1}), std::nullopt, c, 2.0};
    auto built = TreeSpec::tuple({TreeSpec::leaf(), TreeSpec::none(),
                                  TreeSpec::custom("DynamicCache", {"key_cache", "value_cache"},
                                                   {TreeSpec::list({TreeSpec::leaf()}), TreeSpec::list({TreeSpec::leaf()})}),
                                  TreeSpec::constant(2.0)});
    auto spec = yobx::tree_structure(x);
    CHECK(built == spec);
    CHECK(built.hash() == spec.hash());
    CHECK(spec.num_nodes() == 9);
    CHECK(spec.num_children() == 4);
    CHECK(spec.child(2).type_name() == "DynamicCache");
    CHECK(spec.child(2).keys() == std::vector<std::string_view>{"key_cache", "value_cache"});
    CHECK(spec.child(2).num_leaves() == 2);
    CHECK(std::get<double>(spec.child(3).value()) == 2.0);
    CHECK(spec.children().size() == 4);
    CHECK(spec.child(1).kind() == yobx::NodeKind::none);
    CHECK_THROWS_WITH_AS(spec.child(4), "TreeSpec::child: index 4 out of range for a tuple node with 4 children",
                         yobx::value_error);
    CHECK_THROWS_WITH_AS(spec.value(), "TreeSpec::value: a tuple node holds no constant", yobx::type_error);
    CHECK_THROWS_WITH_AS(TreeSpec::dict({"a", "a"}, {TreeSpec::leaf(), TreeSpec::leaf()}),
                         "TreeSpec: duplicate key 'a'", yobx::value_error);
    CHECK_THROWS_WITH_AS(TreeSpec::dict({"a"}, {}), "TreeSpec: 1 keys for 0 children", yobx::value_error);
    CHECK_THROWS_WITH_AS(TreeSpec::custom("", {}, {}), "TreeSpec::custom: the type name is empty", yobx::value_error);
}

TEST_CASE("TreeSpec equality and hashing follow structure and context") {
    auto a = TreeSpec::dict({"x", "y"}, {TreeSpec::leaf(), TreeSpec::constant(std::int64_t{1})});
    auto same = TreeSpec::dict({"x", "y"}, {TreeSpec::leaf(), TreeSpec::constant(std::int64_t{1})});
    auto other_key = TreeSpec::dict({"x", "z"}, {TreeSpec::leaf(), TreeSpec::constant(std::int64_t{1})});
    auto other_value = TreeSpec::dict({"x", "y"}, {TreeSpec::leaf(), TreeSpec::constant(std::int64_t{2})});
    auto bool_not_int = TreeSpec::dict({"x", "y"}, {TreeSpec::leaf(), TreeSpec::constant(true)});
    auto tuple_not_list = TreeSpec::tuple({TreeSpec::leaf()});
    CHECK(a == same);
    CHECK_FALSE(a == other_key);
    CHECK_FALSE(a == other_value);
    CHECK_FALSE(a == bool_not_int);
    CHECK_FALSE(tuple_not_list == TreeSpec::list({TreeSpec::leaf()}));
    std::unordered_set<TreeSpec> set{a, same, other_key, other_value, bool_not_int};
    CHECK(set.size() == 4);
    auto nan = TreeSpec::constant(std::numeric_limits<double>::quiet_NaN());
    CHECK(nan == TreeSpec::constant(std::numeric_limits<double>::quiet_NaN()));
    CHECK(TreeSpec::constant(0.0) == TreeSpec::constant(-0.0));
    CHECK(TreeSpec::constant(0.0).hash() == TreeSpec::constant(-0.0).hash());
    // A subtree compares equal to the same structure built alone.
    CHECK(TreeSpec::tuple({a, tuple_not_list}).child(0) == a);
    CHECK(TreeSpec::tuple({a, tuple_not_list}).child(0).hash() == a.hash());
}
