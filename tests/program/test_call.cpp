// flatten_call and arrange_call (include/yobx/program/call.hpp): a call laid out as an exported
// program's in_spec (torch's treespec_dumps text, read by treespec_loads) says.
#include "../error_of.hpp"

#include <yobx/dense_tensor.hpp>
#include <yobx/program.hpp>
#include <yobx/treespec_torch.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using test::error_of;
using yobx::TreeSpec;
using yobx::treespec_loads;

TEST_CASE("flatten_call lays a call's tensors out as an exported program's in_spec says") {
    using T = yobx::DenseTensor;
    using V = yobx::Value<T>;
    const auto t = [](std::int64_t n) { return V(T::zeros({n}, yobx::DType::float32)); };
    const auto sizes = [](const std::vector<T>& flat) {
        std::vector<std::int64_t> out;
        for (const auto& x : flat) out.push_back(x.shape()[0]);
        return out;
    };
    // forward(x, pair, mask=None, scale=1.0) exported with kwargs {mask, scale}: torch's in_spec.
    const TreeSpec in_spec = TreeSpec::tuple(
        {TreeSpec::tuple({TreeSpec::leaf(), TreeSpec::tuple({TreeSpec::leaf(), TreeSpec::leaf()})}),
         TreeSpec::dict({"mask", "scale"}, {TreeSpec::leaf(), TreeSpec::leaf()})});
    // Keywords in another order, a scalar leaf (not an input of the program): the spec's order, tensors only.
    const V call = V::tuple({V::tuple({t(1), V::tuple({t(2), t(3)})}), V::dict({{"scale", 0.5}, {"mask", t(4)}})});
    CHECK(sizes(yobx::flatten_call(call, in_spec)) == std::vector<std::int64_t>{1, 2, 3, 4});
    // None where the program has a leaf: not an input either.
    const V none_mask = V::tuple({V::tuple({t(1), V::tuple({t(2), t(3)})}), V::dict({{"mask", yobx::none}, {"scale", 1.0}})});
    CHECK(sizes(yobx::flatten_call(none_mask, in_spec)) == std::vector<std::int64_t>{1, 2, 3});
    // Registered classes match by their children (the type names of both sides may differ).
    const TreeSpec cache_spec = TreeSpec::custom("transformers.cache_utils.DynamicCache", {},
                                                 {TreeSpec::list({TreeSpec::leaf()}), TreeSpec::list({TreeSpec::leaf()})});
    const V cache = V::custom("DynamicCache", {"key_cache", "value_cache"}, {V::list({t(5)}), V::list({t(6)})});
    CHECK(sizes(yobx::flatten_call(cache, cache_spec)) == std::vector<std::int64_t>{5, 6});
    // A registered node where the program has a list: the list of its children, as save_value
    // pickles it for the eager model (the demo's KV cache, exported from the Python twin).
    const TreeSpec as_lists = TreeSpec::list({TreeSpec::list({TreeSpec::leaf()}), TreeSpec::list({TreeSpec::leaf()})});
    std::vector<std::string> paths;
    CHECK(sizes(yobx::flatten_call(cache, as_lists, &paths)) == std::vector<std::int64_t>{5, 6});
    CHECK(paths == std::vector<std::string>{"call.key_cache[0]", "call.value_cache[0]"});
    CHECK(error_of<yobx::value_error>([&] { (void)yobx::flatten_call(cache, TreeSpec::list({TreeSpec::leaf()})); }) ==
          "flatten_call: at call: the program expects 1 item(s), the call's DynamicCache has 2 children");

    const auto message = [&](const V& c) { return error_of<yobx::value_error>([&] { (void)yobx::flatten_call(c, in_spec); }); };
    CHECK(message(V::tuple({V::tuple({t(1), V::tuple({t(2), t(3)})}), V::dict({{"scale", 0.5}})})) ==
          "flatten_call: missing input kwargs['mask']");
    CHECK(message(V::tuple({V::tuple({t(1), V::tuple({t(2), t(3)})}), V::dict({{"mask", t(4)}, {"scale", 1.0}, {"bias", t(1)}})})) ==
          "flatten_call: extra input kwargs['bias']: the program takes ['mask', 'scale']");
    CHECK(message(V::tuple({V::tuple({t(1), V::list({t(2), t(3)})}), V::dict({{"mask", t(4)}, {"scale", 1.0}})})) ==
          "flatten_call: at args[1]: the program expects a tuple, the call has list");
    CHECK(message(V::tuple({V::tuple({t(1)}), V::dict({{"mask", t(4)}, {"scale", 1.0}})})) ==
          "flatten_call: at args: the program expects 2 item(s), the call has 1");
    CHECK(message(V::tuple({V::tuple({V::list({t(1)}), V::tuple({t(2), t(3)})}), V::dict({{"mask", t(4)}, {"scale", 1.0}})})) ==
          "flatten_call: at args[0]: the program expects one tensor, the call has list");
    CHECK(error_of<yobx::value_error>([&] { (void)yobx::flatten_call(V::custom("DynamicCache", {}, {V::list({t(5)})}), cache_spec); }) ==
          "flatten_call: at call: the program expects 2 children of transformers.cache_utils.DynamicCache, the call has 1");
}

TEST_CASE("arrange_call binds a call to the layout of the program: positional and keyword inputs moved by name") {
    using T = yobx::DenseTensor;
    using V = yobx::Value<T>;
    const auto t = [](std::int64_t n) { return V(T::zeros({n}, yobx::DType::float32)); };
    const std::vector<std::string> parameters{"input_ids", "attention_mask", "token_type_ids"};
    // Exported with every input as a keyword: (), {input_ids, attention_mask, token_type_ids}.
    const TreeSpec by_name = TreeSpec::tuple(
        {TreeSpec::tuple({}), TreeSpec::dict({"input_ids", "attention_mask", "token_type_ids"},
                                             {TreeSpec::leaf(), TreeSpec::leaf(), TreeSpec::leaf()})});
    const V call = V::tuple({V::tuple({t(1)}), V::dict({{"token_type_ids", t(3)}, {"attention_mask", t(2)}})});
    const V arranged = yobx::arrange_call(call, by_name, parameters);
    CHECK(arranged.repr() == "((), {'input_ids': Tensor(shape=[1], dtype=float32), 'token_type_ids': Tensor(shape=[3], "
                             "dtype=float32), 'attention_mask': Tensor(shape=[2], dtype=float32)})");
    std::vector<std::int64_t> sizes;
    for (const auto& x : yobx::flatten_call(arranged, by_name)) sizes.push_back(x.shape()[0]);
    CHECK(sizes == std::vector<std::int64_t>{1, 2, 3});
    // Exported with two positional inputs: a keyword moves to its position.
    const TreeSpec two = TreeSpec::tuple({TreeSpec::tuple({TreeSpec::leaf(), TreeSpec::leaf()}), TreeSpec::dict({}, {})});
    CHECK(yobx::arrange_call(V::tuple({V::tuple({t(1)}), V::dict({{"attention_mask", t(2)}})}), two, parameters).repr() ==
          "((Tensor(shape=[1], dtype=float32), Tensor(shape=[2], dtype=float32)), {})");
    CHECK(error_of<yobx::value_error>([&] {
              (void)yobx::arrange_call(V::tuple({V::tuple({t(1)}), V::dict({})}), two, parameters);
          }) == "flatten_call: missing input args[1] ('attention_mask')");
    CHECK(error_of<yobx::value_error>([&] {
              (void)yobx::arrange_call(V::tuple({V::tuple({t(1)}), V::dict({{"input_ids", t(1)}})}), by_name, parameters);
          }) == "arrange_call: argument 'input_ids' is passed twice");
    CHECK(error_of<yobx::value_error>([&] {
              (void)yobx::arrange_call(V::tuple({V::tuple({t(1), t(2), t(3), t(4)}), V::dict({})}), by_name, parameters);
          }) == "arrange_call: positional argument 3 has no parameter (3 given)");
    // A spec that is not (args, kwargs): the call as it is.
    CHECK(yobx::arrange_call(t(1), TreeSpec::leaf(), parameters).repr() == "Tensor(shape=[1], dtype=float32)");
}
