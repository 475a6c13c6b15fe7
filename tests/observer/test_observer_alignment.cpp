// InputObserver, Phase 2: the best candidate and the alignment of every call on it, with the
// seed's errors checked word for word.
#include "../observer_support.hpp"

// ---------------------------------------------------------------- alignment

TEST_CASE("No inputs were captured: before any observation and when the model was never called") {
    Obs obs;
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes(); }) == "No inputs were captured.");
    CHECK(error_of<yobx::runtime_error>([&] { obs.info(); }) == "No inputs were captured.");
    auto f = obs.wrap(first_tensor, xy);
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_arguments(); }) == "No inputs were captured.");
}

TEST_CASE("optional kwarg absent in decode calls is aligned with None") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2, 3})}, {{"y", tensor({2, 8})}});
    f({tensor({2, 4})}, {});
    f({tensor({2, 5})}, {});
    CHECK(obs.info().best_candidate_index() == 0);
    obs.infer_dynamic_shapes();
    const auto& aligned = obs.info().inputs()[1].aligned_flat_list();
    REQUIRE(aligned.size() == 2);
    CHECK(aligned[0].has_value());
    CHECK_FALSE(aligned[1].has_value());
    CHECK(obs.info().inputs()[1].to_string() == "InputCandidate(1 args, 0 kwargs, 1 tensors, 2 aligned tensors)");
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "{'x': {1: torch.export.Dim.DYNAMIC}, 'y': {}}");
}

TEST_CASE("a parameter passed by position in one call and by name in another is the same parameter") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2}), tensor({3})}, {});
    f({tensor({4})}, {{"y", tensor({5})}});
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({0: torch.export.Dim.DYNAMIC}, {0: torch.export.Dim.DYNAMIC})");
    // Positional arguments beyond the best candidate's count are read by their signature name.
    Obs named;
    auto g = named.wrap(first_tensor, xy);
    g({}, {{"x", tensor({2})}, {"y", tensor({3})}});
    g({tensor({4}), tensor({5})}, {});
    CHECK(named.infer_dynamic_shapes().to_python_strings() ==
          "{'x': {0: torch.export.Dim.DYNAMIC}, 'y': {0: torch.export.Dim.DYNAMIC}}");
}

TEST_CASE("At least one call to the observed model must contain all the named arguments") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("a", yobx::none), param("b", yobx::none)});
    f({tensor({2})}, {{"a", tensor({2})}});
    f({tensor({2})}, {{"b", tensor({2})}});
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes(); }) ==
          "At least one call to the observed model must contain all the named arguments. Call 1 has ['b'] but call "
          "0, the one with the most tensors, has ['x', 'a']. Make one call with all of them, or give the missing "
          "ones with value_if_missing.");
}

TEST_CASE("an argument whose tensor count changes between calls makes inference impossible") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2})}, {{"y", V::list({tensor({1})})}});
    f({tensor({2})}, {{"y", V::list({tensor({1}), tensor({1})})}});
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes(); }) ==
          "Named argument 'y' has 2 tensors but previously got 1 tensors in kwargs=['y']. Inference is impossible "
          "in that case.");
    Obs pos;
    auto g = pos.wrap(first_tensor, xy);
    g({tensor({2}), V::list({tensor({1}), tensor({1})})}, {});
    g({tensor({2}), V::list({tensor({1})})}, {});
    CHECK(error_of<yobx::runtime_error>([&] { pos.infer_arguments(); }) ==
          "Positional argument 1 has 1 tensors but previously got 2 tensors. Inference is impossible in that case.");
}

TEST_CASE("two calls with different constant values cannot be exported as one graph") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("add", false)});
    f({tensor({2})}, {{"add", true}});
    f({tensor({3})}, {});
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {} != {'add': True} (calls 0 and 1 differ in 'add': True "
          "vs absent (default False))");
    // The same for a scalar passed by position.
    Obs pos;
    auto g = pos.wrap([](const T& x, bool) { return x; }, Signature{param("x"), param("add", false)});
    g(tensor({2}), true);
    g(tensor({3}), false);
    CHECK(error_of<yobx::runtime_error>([&] { pos.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {} != {'add': True} (calls 0 and 1 differ in 'add': True "
          "vs absent (default False))");
    // A scalar passed by position to a parameter without a default is compared as passed.
    Obs required;
    auto h = required.wrap([](const T& x, std::int64_t) { return x; }, Signature{param("x"), param("n")});
    h(tensor({2}), std::int64_t{3});
    h(tensor({3}), std::int64_t{4});
    CHECK(error_of<yobx::runtime_error>([&] { required.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {'n': 4} != {'n': 3} (calls 0 and 1 differ in 'n': 3 vs 4)");
}

TEST_CASE("constants binding: a constant passed by position in one call and by keyword in another is the same") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("add", true)});
    f({tensor({2}), false}, {});
    f({tensor({3})}, {{"add", false}});
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({0: torch.export.Dim.DYNAMIC}, None)");
    CHECK(obs.infer_arguments().repr() == "(Tensor(shape=[2], dtype=float32), False)");
    // Equal to the default, by position or not passed: no constant either way.
    Obs same;
    auto g = same.wrap(first_tensor, Signature{param("x"), param("add", true)});
    g({tensor({2}), true}, {});
    g({tensor({3})}, {});
    CHECK(same.infer_dynamic_shapes().to_python_strings() == "({0: torch.export.Dim.DYNAMIC}, None)");
    // A different value is still refused, whichever way it was passed.
    Obs other;
    auto h = other.wrap(first_tensor, Signature{param("x"), param("add", true)});
    h({tensor({2}), false}, {});
    h({tensor({3})}, {{"add", true}});
    CHECK(error_of<yobx::runtime_error>([&] { other.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {} != {'add': False} (calls 0 and 1 differ in 'add': False "
          "vs absent (default True))");
}

TEST_CASE("ints inside a container that differ between calls are the constants error naming their path") {
    // torch.export 2.6 specializes them (and refuses a Dim for them): the calls cannot be one export.
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("image_shapes")});
    f({tensor({2}), V::list({V::tuple({V(std::int64_t{4}), V(std::int64_t{6})})})}, {});
    f({tensor({3}), V::list({V::tuple({V(std::int64_t{4}), V(std::int64_t{8})})})}, {});
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {'image_shapes[0][1]': 8} != {'image_shapes[0][1]': 6} (calls 0 and 1 differ in "
          "'image_shapes[0][1]': 6 vs 8; "
          "torch.export specializes the ints, floats and strings inside an input)");
    // In a dict next to tensors, in an item of *args, by keyword.
    Obs dict;
    auto g = dict.wrap(first_tensor, Signature{param("x"), var_args("rest"), var_kwargs("kw")});
    g({tensor({2}), V::dict({{"t", tensor({2})}, {"scale", 0.5}})}, {{"opt", V::dict({{"t", tensor({2})}, {"mode", "a"}})}});
    g({tensor({3}), V::dict({{"t", tensor({3})}, {"scale", 0.5}})}, {{"opt", V::dict({{"t", tensor({3})}, {"mode", "b"}})}});
    CHECK(error_of<yobx::runtime_error>([&] { dict.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {\"opt['mode']\": 'b'} != {\"opt['mode']\": 'a'} (calls 0 and 1 differ in "
          "\"opt['mode']\": 'a' vs 'b'; "
          "torch.export specializes the ints, floats and strings inside an input)");
    Obs var;
    auto h = var.wrap(first_tensor, Signature{param("x"), var_args("rest")});
    h({tensor({2}), V::list({tensor({2}), V(std::int64_t{1})})}, {});
    h({tensor({3}), V::list({tensor({3}), V(std::int64_t{2})})}, {});
    CHECK(error_of<yobx::runtime_error>([&] { var.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {'rest[0][1]': 2} != {'rest[0][1]': 1} (calls 0 and 1 differ in 'rest[0][1]': 1 vs 2; "
          "torch.export specializes the ints, floats and strings inside an input)");
    // Equal values, and an absent argument, are fine.
    Obs ok;
    auto k = ok.wrap(first_tensor, Signature{param("x"), param("image_shapes", yobx::none)});
    k({tensor({2}), V::list({V::tuple({V(std::int64_t{4}), V(std::int64_t{6})})})}, {});
    k({tensor({3}), V::list({V::tuple({V(std::int64_t{4}), V(std::int64_t{6})})})}, {});
    k({tensor({4})}, {});
    CHECK(ok.infer_dynamic_shapes().to_python_strings() == "({0: torch.export.Dim.DYNAMIC}, [(None, None)])");
}

TEST_CASE("the best candidate is not aligned when another call has more *args than it") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), var_args("args")});
    f({tensor({2}), V::list({tensor({1}), tensor({1})}), tensor({1})}, {});
    f({tensor({2}), V(), V(), tensor({1})}, {});
    CHECK(error_of<yobx::not_implemented_error>([&] { obs.infer_dynamic_shapes(); }) ==
          "infer_dynamic_shapes is not implemented when the best candidate is not 'aligned'. This happens when there "
          "is no stored set of inputs where all optional inputs showing in other sets are defined: call 1 has 4 "
          "positional arguments and the best candidate (call 0) 3. If an argument is a custom class, register its "
          "flattening (specialize yobx::pytree_node, or build it as Value::custom) so that its tensors are counted.");
}

TEST_CASE("an argument empty in the best candidate but holding tensors elsewhere cannot be laid out") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2}), V::list({})}, {});
    f({tensor({2}), V::list({tensor({1})})}, {});
    f({tensor({2}), V::list({})}, {});
    // Call 1 has 2 tensors, so it is the best candidate: nothing is wrong.
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({}, [{}])");
    Obs bad;
    auto g = bad.wrap(first_tensor, Signature{param("x"), param("y"), param("z", yobx::none)});
    g({tensor({2}), V::list({})}, {{"z", V::list({tensor({1}), tensor({1})})}});
    g({tensor({2}), V::list({tensor({1})})}, {});
    CHECK(error_of<yobx::not_implemented_error>([&] { bad.infer_dynamic_shapes(); }) ==
          "infer_dynamic_shapes is not implemented when the number of input tensors are not the same in every set "
          "of inputs [3, 4].");
}
