// InputObserver, Phase 3: dynamic axes, their labels, and the dynamic_shapes literal.
#include "../observer_support.hpp"

// ---------------------------------------------------------------- dynamic shapes

TEST_CASE("with one call and no forced batch dimension every entry is empty") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2, 3}), tensor({2})}, {});
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({}, {})");
    CHECK(obs.infer_dynamic_shapes({.set_batch_dimension_for = true}).to_python_strings() ==
          "({0: torch.export.Dim.DYNAMIC}, {0: torch.export.Dim.DYNAMIC})");
}

TEST_CASE("set_batch_dimension_for takes names and positions, a position also matches its signature name") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("y", yobx::none), param("z", yobx::none)});
    f({tensor({2, 3})}, {{"y", tensor({2, 3})}, {"z", tensor({2, 3})}});
    CHECK(obs.infer_dynamic_shapes({.set_batch_dimension_for = {"x", 2}}).to_python_strings() ==
          "{'x': {0: torch.export.Dim.DYNAMIC}, 'y': {}, 'z': {0: torch.export.Dim.DYNAMIC}}");
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes({.set_batch_dimension_for = {7}}); }) ==
          "argument at position 7 is out of boundary");
    CHECK(error_of<yobx::value_error>([&] { obs.infer_dynamic_shapes({.set_batch_dimension_for = {"xx"}}); }) ==
          "set_batch_dimension_for names 'xx', which is neither a parameter of (x, y=None, z=None) nor a recorded keyword");
}

TEST_CASE("dim_names as a map labels the axes it names and generates the others") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2, 3, 4})}, {{"y", V::list({tensor({2, 5}), tensor({2, 5})})}});
    f({tensor({3, 4, 5})}, {{"y", V::list({tensor({3, 6}), tensor({3, 6})})}});
    CHECK(obs.infer_dynamic_shapes({.dim_names = {{"x", {{0, "batch"}, {2, "width"}}}, {1, {{1, "length"}}}}})
              .to_python_strings() == "{'x': {0: 'batch', 1: 'x_dim_1', 2: 'width'}, 'y': [{0: 'y_dim_0', 1: 'length'}, "
                              "{0: 'y_dim_0', 1: 'length'}]}");
}

TEST_CASE("set_batch_dimension_for=True: an input present in some calls only shares the batch label where its sizes agree") {
    const Signature sig{param("input_ids"), param("pixel_values", yobx::none)};
    // pixel_values in the prefill call only; value_if_missing's [0, ...] in the others was not observed.
    Obs obs({.value_if_missing = {{"pixel_values", V(tensor({0, 3, 4, 4}))}}});
    auto f = obs.wrap(first_tensor, sig);
    f({tensor({2, 5}, DType::int64), tensor({2, 3, 4, 4})}, {});
    f({tensor({2, 1}, DType::int64)}, {});
    f({tensor({2, 1}, DType::int64)}, {});
    CHECK(obs.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true}).to_python_strings() ==
          "({0: 'batch_size', 1: 'sequence_length'}, {0: 'batch_size'})");
    // Without value_if_missing.
    Obs bare;
    auto g = bare.wrap(first_tensor, sig);
    g({tensor({2, 5}, DType::int64), tensor({2, 3, 4, 4})}, {});
    g({tensor({2, 1}, DType::int64)}, {});
    CHECK(bare.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true}).to_python_strings() ==
          "({0: 'batch_size', 1: 'sequence_length'}, {0: 'batch_size'})");
    // Where the sizes disagree, its own label.
    Obs other;
    auto h = other.wrap(first_tensor, sig);
    h({tensor({2, 5}, DType::int64), tensor({1, 3, 4, 4})}, {});
    h({tensor({2, 1}, DType::int64)}, {});
    CHECK(other.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true}).to_python_strings() ==
          "({0: 'batch_size', 1: 'sequence_length'}, {0: 'pixel_values_dim_0'})");
}

TEST_CASE("a container with one tensor keeps its structure, as torch.export's dynamic_shapes must") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2})}, {{"y", V::list({tensor({3})})}});
    f({tensor({4})}, {{"y", V::list({tensor({5})})}});
    // The reference flattens it: {'x': {0: 'x_dim_0'}, 'y': {0: 'y_dim_0'}}.
    CHECK(obs.infer_dynamic_shapes({.dim_names = true}).to_python_strings() ==
          "{'x': {0: 'x_dim_0'}, 'y': [{0: 'y_dim_0'}]}");
}

TEST_CASE("generated labels are <input>_dim_<axis>, a second group of the same input gets its container index") {
    // As the reference names them: no container index where the axes agree.
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("cache")});
    f({tensor({2}), V::list({tensor({3, 5}), tensor({3, 5})})}, {});
    f({tensor({4}), V::list({tensor({3, 6}), tensor({3, 6})})}, {});
    CHECK(obs.infer_dynamic_shapes({.dim_names = true}).to_python_strings() ==
          "({0: 'x_dim_0'}, [{1: 'cache_dim_1'}, {1: 'cache_dim_1'}])");
    // Two groups of one input: the second gets the tensor's index in its argument.
    Obs two;
    auto g = two.wrap(first_tensor, Signature{param("a2")});
    g({V::list({tensor({3, 5}), tensor({2, 7})})}, {});
    g({V::list({tensor({4, 5}), tensor({5, 7})})}, {});
    CHECK(two.infer_dynamic_shapes({.dim_names = true}).to_python_strings() == "([{0: 'a2_dim_0'}, {0: 'a2_1_dim_0'}],)");
    CHECK(two.infer_dynamic_shapes({.dim_names = {{"x", {{0, "batch"}}}}}).to_python_strings() ==
          "([{0: 'a2_dim_0'}, {0: 'a2_1_dim_0'}],)");
    // A tensor alone in its argument with a label already taken: a numeric suffix.
    Obs taken;
    auto h = taken.wrap(first_tensor, Signature{param("x"), param("y")});
    h({tensor({2, 3}), tensor({2})}, {});
    h({tensor({3, 4}), tensor({5})}, {});
    CHECK(taken.infer_dynamic_shapes({.dim_names = {{"y", {{0, "x_dim_1"}}}}}).to_python_strings() ==
          "({0: 'x_dim_0', 1: 'x_dim_1'}, {0: 'x_dim_1'})");
}

TEST_CASE("a feature pyramid in a dict: the labels use the keys, and the three levels are related") {
    // p2 is h, p3 is h//2, p4 is h//4 (and the same for the widths), for four image sizes.
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("features")}, 4);
    for (const auto& [h, w] : {std::pair{64, 96}, std::pair{96, 128}, std::pair{128, 64}, std::pair{160, 192}})
        f({V::dict({{"p2", tensor({1, 8, h, w})}, {"p3", tensor({1, 8, h / 2, w / 2})}, {"p4", tensor({1, 8, h / 4, w / 4})}})}, {});
    const auto spec = obs.infer_export_spec({.derived_dims = true});
    CHECK(spec.dynamic_shapes.to_python_strings() ==
          "({'p2': {2: 'features_dim_2', 3: 'features_dim_3'}, 'p3': {2: 'features_p3_dim_2', 3: "
          "'features_p3_dim_3'}, 'p4': {2: 'features_p4_dim_2', 3: 'features_p4_dim_3'}},)");
    std::vector<std::string> relations;
    for (const auto& r : spec.relations) relations.push_back(r.to_string());
    CHECK(relations == std::vector<std::string>{"features_dim_2 = 4*features_p4_dim_2", "features_dim_3 = 4*features_p4_dim_3",
                                                "features_p3_dim_2 = 2*features_p4_dim_2", "features_p3_dim_3 = 2*features_p4_dim_3"});
    CHECK(spec.hints.empty());
}

TEST_CASE("automatic dim_names: equal sequences share a label and unknown inputs inherit known labels") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("input_ids"), param("token_mask", yobx::none),
                                              param("attention_mask", yobx::none), param("other", yobx::none)});
    f({tensor({2, 5})}, {{"token_mask", tensor({2, 5})}, {"attention_mask", tensor({2, 5})}, {"other", tensor({7})}});
    f({tensor({2, 1})}, {{"token_mask", tensor({2, 1})}, {"attention_mask", tensor({2, 6})}, {"other", tensor({9})}});
    CHECK(obs.infer_dynamic_shapes({.dim_names = true}).to_python_strings() ==
          "{'input_ids': {1: 'sequence_length'}, 'token_mask': {1: 'sequence_length'}, "
          "'attention_mask': {1: 'total_sequence_length'}, 'other': {0: 'other_dim_0'}}");
    CHECK(obs.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true}).to_python_strings() ==
          "{'input_ids': {0: 'batch_size', 1: 'sequence_length'}, 'token_mask': {0: 'batch_size', 1: "
          "'sequence_length'}, 'attention_mask': {0: 'batch_size', 1: 'total_sequence_length'}, 'other': {0: "
          "'other_dim_0'}}");
}

TEST_CASE("dynamic shapes mirror the call: tuple, dict, nested containers, *args and **kwargs") {
    Obs pos;
    auto f = pos.wrap(first_tensor, Signature{param("x"), param("y")});
    f({tensor({2}), V::tuple({tensor({2}), V::dict({{"a", tensor({2})}})})}, {});
    f({tensor({3}), V::tuple({tensor({2}), V::dict({{"a", tensor({4})}})})}, {});
    CHECK(pos.infer_dynamic_shapes().to_python_strings() ==
          "({0: torch.export.Dim.DYNAMIC}, ({}, {'a': {0: torch.export.Dim.DYNAMIC}}))");

    Obs var;
    auto g = var.wrap(first_tensor, Signature{param("x"), var_args("args"), kw_only("k", yobx::none), var_kwargs("kwargs")});
    g({tensor({2}), tensor({2}), tensor({2})}, {{"k", tensor({2})}, {"extra", tensor({2})}});
    g({tensor({3}), tensor({4}), tensor({2})}, {{"k", tensor({2})}, {"extra", tensor({5})}});
    CHECK(var.infer_dynamic_shapes().to_python_strings() ==
          "{'x': {0: torch.export.Dim.DYNAMIC}, 'args': ({0: torch.export.Dim.DYNAMIC}, {}), 'k': {}, "
          "'kwargs': {'extra': {0: torch.export.Dim.DYNAMIC}}}");
    CHECK(var.infer_dynamic_shapes().to_json() ==
          "{\"dict\": {\"x\": {\"dims\": {\"0\": null}}, \"args\": {\"tuple\": [{\"dims\": {\"0\": null}}, "
          "{\"dims\": {}}]}, \"k\": {\"dims\": {}}, \"kwargs\": {\"dict\": {\"extra\": {\"dims\": {\"0\": null}}}}}}");

    Obs collide;
    auto h = collide.wrap(first_tensor, Signature{param("x"), var_kwargs("kwargs")});
    h({tensor({2})}, {{"kwargs", tensor({2})}});
    CHECK(error_of<yobx::value_error>([&] { collide.infer_dynamic_shapes(); }) ==
          "Keyword argument name collision: received a keyword argument 'kwargs' which conflicts with the **kwargs "
          "parameter used to collect extra keyword arguments. Passing a keyword argument with this name is not "
          "supported.");
}

TEST_CASE("a one-element tuple prints with its trailing comma and a registered node as the list of its children") {
    Obs obs;
    auto f = obs.wrap([](const KVCache& c) { return c.key_cache[0]; }, Signature{param("cache")});
    f(KVCache{{tensor({1, 2, 3, 4})}, {tensor({1, 2, 3, 4})}});
    f(KVCache{{tensor({1, 2, 5, 4})}, {tensor({1, 2, 5, 4})}});
    CHECK(obs.infer_dynamic_shapes().to_python_strings() ==
          "([[{2: torch.export.Dim.DYNAMIC}], [{2: torch.export.Dim.DYNAMIC}]],)");
    Obs one;
    auto g = one.wrap([](const T& x) { return x; }, Signature{param("x")});
    g(tensor({2}));
    CHECK(one.infer_dynamic_shapes().to_python_strings() == "({},)");
}

TEST_CASE("to_python is what torch.export takes: every dynamic axis Dim.DYNAMIC, the labels as comments") {
    const auto ds = yobx::DynamicShapes::dict(
        {{"ids", yobx::DynamicShapes::tensor({{0, "batch_size"}, {1, std::nullopt}})},
         {"past", yobx::DynamicShapes::list({yobx::DynamicShapes::tensor({{0, "batch_size"}, {2, "past"}}),
                                             yobx::DynamicShapes::tensor({{0, "batch_size"}, {2, "past"}})})},
         {"mixed", yobx::DynamicShapes::tuple({yobx::DynamicShapes::tensor({{0, "a"}}), yobx::DynamicShapes::tensor({})})},
         {"plain", yobx::DynamicShapes::tensor({{1, std::nullopt}})},
         {"flag", yobx::DynamicShapes()}});
    CHECK(ds.to_python() ==
          "{\n"
          "    # ids: {0: batch_size, 1: DYNAMIC}\n"
          "    'ids': {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC},\n"
          "    # past: each tensor {0: batch_size, 2: past}\n"
          "    'past': [{0: torch.export.Dim.DYNAMIC, 2: torch.export.Dim.DYNAMIC}, "
          "{0: torch.export.Dim.DYNAMIC, 2: torch.export.Dim.DYNAMIC}],\n"
          "    # mixed: ({0: 'a'}, {})\n"
          "    'mixed': ({0: torch.export.Dim.DYNAMIC}, {}),\n"
          "    'plain': {1: torch.export.Dim.DYNAMIC},\n"
          "    'flag': None,\n"
          "}");
    // Positional arguments: a tuple, one per line; without labels, one line as repr() prints it.
    const auto args = yobx::DynamicShapes::tuple({yobx::DynamicShapes::tensor({{0, "batch"}, {2, "height"}})});
    CHECK(args.to_python() == "(\n    # argument 0: {0: batch, 2: height}\n    {0: torch.export.Dim.DYNAMIC, 2: torch.export.Dim.DYNAMIC},\n)");
    const auto bare = yobx::DynamicShapes::tuple({yobx::DynamicShapes::tensor({{0, std::nullopt}}), yobx::DynamicShapes::tensor({})});
    CHECK(bare.to_python() == "({0: torch.export.Dim.DYNAMIC}, {})");
    CHECK(bare.to_python() == bare.to_python_strings());
    CHECK(yobx::DynamicShapes::tensor({{0, "n"}}).to_python() == "{0: torch.export.Dim.DYNAMIC}");
}

TEST_CASE("DynamicShapes is read like the Python literal it prints") {
    const auto ds = yobx::DynamicShapes::dict(
        {{"ids", yobx::DynamicShapes::tensor({{0, "batch_size"}, {1, std::nullopt}})},
         {"past", yobx::DynamicShapes::list({yobx::DynamicShapes::tensor({{2, "past"}})})},
         {"flag", yobx::DynamicShapes()}});
    CHECK(ds.to_python_strings() == "{'ids': {0: 'batch_size', 1: torch.export.Dim.DYNAMIC}, 'past': [{2: 'past'}], 'flag': None}");
    CHECK(ds["ids"].dims()[0].label == "batch_size");
    CHECK_FALSE(ds["ids"].dims()[1].label.has_value());
    CHECK(ds["past"][0].dims()[0].axis == 2);
    CHECK(ds["flag"].is_none());
    CHECK(error_of<yobx::value_error>([&] { ds["nope"]; }) == "DynamicShapes: no key 'nope'");
    CHECK(error_of<yobx::value_error>([&] { ds["past"][1]; }) == "DynamicShapes: index 1 out of range (size 1)");
    CHECK(error_of<yobx::type_error>([&] { ds["ids"][0]; }) ==
          "DynamicShapes: expected a tuple or a list, got {0: 'batch_size', 1: torch.export.Dim.DYNAMIC}");
    CHECK(error_of<yobx::value_error>([] { yobx::DynamicShapes::tensor({{1, "a"}, {0, "b"}}); }) ==
          "DynamicShapes::tensor: axes must be increasing, got 1 then 0");
}

TEST_CASE("square images share one label for H and W, a non-square call or names keep them apart") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x")});
    f({tensor({1, 3, 64, 64})}, {});
    f({tensor({1, 3, 96, 96})}, {});
    CHECK(obs.infer_dynamic_shapes({.dim_names = true}).to_python_strings() == "({2: 'x_dim_2', 3: 'x_dim_2'},)");
    // Named: the names given, whatever the sizes.
    CHECK(obs.infer_dynamic_shapes({.dim_names = {{"x", {{2, "height"}, {3, "width"}}}}}).to_python_strings() ==
          "({2: 'height', 3: 'width'},)");
    // One non-square call is enough.
    f({tensor({1, 3, 64, 80})}, {});
    CHECK(obs.infer_dynamic_shapes({.dim_names = true}).to_python_strings() == "({2: 'x_dim_2', 3: 'x_dim_3'},)");
}
