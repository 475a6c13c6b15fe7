// InputObserver, Phase 4: the export arguments; remove_inputs, check_discrepancies and the LLM
// scenario through all four phases.
#include "../observer_support.hpp"

// ---------------------------------------------------------------- arguments

TEST_CASE("infer_arguments sizes an absent tensor from the call's own dimensions, empty along its largest other dynamic axis") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("a", yobx::none), param("b", yobx::none)});
    f({tensor({2, 3})}, {});
    f({tensor({3, 3})}, {{"a", tensor({4, 5, 6}, DType::int64)}, {"b", tensor({3, 3, 2})}});
    f({tensor({4, 3})}, {{"a", tensor({4, 5, 6}, DType::int64)}, {"b", tensor({4, 7, 2})}});
    // b's axis 0 has x's sizes (3, 4): in call 0 it is x's 2; its axis 1, tied to nothing, is emptied.
    // a has no dynamic axis: zeros of its recorded shape. The first call with the best candidate's
    // counts is call 1.
    const V args = obs.infer_arguments(0);
    CHECK(args.repr() == "{'x': Tensor(shape=[2, 3], dtype=float32), 'a': Tensor(shape=[4, 5, 6], dtype=int64), "
                         "'b': Tensor(shape=[2, 0, 2], dtype=float32)}");
    CHECK(obs.infer_arguments().repr() == "{'x': Tensor(shape=[3, 3], dtype=float32), 'a': Tensor(shape=[4, 5, 6], "
                                          "dtype=int64), 'b': Tensor(shape=[3, 3, 2], dtype=float32)}");
    CHECK(obs.infer_arguments(0, {.flat = true}).repr() ==
          "[Tensor(shape=[2, 3], dtype=float32), Tensor(shape=[4, 5, 6], dtype=int64), Tensor(shape=[2, 0, 2], "
          "dtype=float32)]");
    CHECK(obs.infer_arguments(0, {.as_args_kwargs = true}).repr() ==
          "((Tensor(shape=[2, 3], dtype=float32),), {'a': Tensor(shape=[4, 5, 6], dtype=int64), 'b': "
          "Tensor(shape=[2, 0, 2], dtype=float32)})");
    CHECK(error_of<yobx::value_error>([&] { obs.infer_arguments(3); }) == "No stored input set for index=3<3.");
}

TEST_CASE("infer_export_arguments: every dynamic dimension at least 2 and distinct, the relations kept") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("ids"), param("mask"), param("past", yobx::none)}, 6);
    for (std::int64_t batch : {2, 3}) {  // a prefill call without cache, then decode calls with one
        const std::int64_t prompt = 2 * batch + 1;
        f({tensor({batch, prompt}), tensor({batch, prompt})}, {});
        for (std::int64_t past = prompt; past < prompt + 2; ++past) f({tensor({batch, 1}), tensor({batch, past + 1}), tensor({batch, past})}, {});
    }
    // mask = past + ids (a sum found in every call), ids' length 1 in decode calls: the base is call 1
    // (ids [2, 1], mask [2, 6], past [2, 5]); the length becomes 3 (2 is the batch). The mask, derived,
    // avoids the sizes observed (5 to 9): past grows to 7, the mask is 7 + 3.
    CHECK(obs.infer_export_arguments().repr() ==
          "(Tensor(shape=[2, 3], dtype=float32), Tensor(shape=[2, 10], dtype=float32), Tensor(shape=[2, 7], dtype=float32))");
    CHECK(obs.infer_export_arguments({.min_size = 6}).repr() ==
          "(Tensor(shape=[6, 7], dtype=float32), Tensor(shape=[6, 15], dtype=float32), Tensor(shape=[6, 8], dtype=float32))");
    CHECK(obs.infer_export_arguments({.as_args_kwargs = true}).repr() ==
          "((Tensor(shape=[2, 3], dtype=float32), Tensor(shape=[2, 10], dtype=float32), Tensor(shape=[2, 7], "
          "dtype=float32)), {})");
    // The prefill call's own arguments: its cache has its batch and holds 0 tokens.
    CHECK(obs.infer_arguments(0).repr() ==
          "(Tensor(shape=[2, 5], dtype=float32), Tensor(shape=[2, 5], dtype=float32), Tensor(shape=[2, 0], dtype=float32))");
    CHECK(obs.infer_arguments(3).repr() ==
          "(Tensor(shape=[3, 7], dtype=float32), Tensor(shape=[3, 7], dtype=float32), Tensor(shape=[3, 0], dtype=float32))");
    CHECK(error_of<yobx::value_error>([&] { (void)obs.infer_export_arguments({.min_size = -1}); }) ==
          "infer_export_arguments: min_size must be non-negative, got -1");

    // A scale relation follows its base (only a sum avoids the observed sizes); a batch forced
    // dynamic but always 1 becomes 2.
    Obs scaled;
    auto g = scaled.wrap(first_tensor, Signature{param("x"), param("y")});
    for (std::int64_t n : {1, 3, 5}) g({tensor({1, n}), tensor({1, 2 * n})}, {});
    CHECK(scaled.infer_export_arguments().repr() == "(Tensor(shape=[1, 2], dtype=float32), Tensor(shape=[1, 4], dtype=float32))");
    CHECK(scaled.infer_export_arguments({.set_batch_dimension_for = true}).repr() ==
          "(Tensor(shape=[2, 3], dtype=float32), Tensor(shape=[2, 6], dtype=float32))");
    // Four image sizes where batch == height // 48 by chance (a floor division find_relations reports):
    // a call whose sizes are all at least 2 and distinct is kept as it was.
    Obs images;
    auto k = images.wrap(first_tensor, Signature{param("x")}, 4);
    for (const auto& [b, h, w] : {std::tuple{2, 96, 128}, std::tuple{3, 160, 192}, std::tuple{4, 224, 224}, std::tuple{2, 128, 96}})
        k({tensor({b, 3, h, w})}, {});
    CHECK(images.infer_export_arguments().repr() == "(Tensor(shape=[2, 3, 96, 128], dtype=float32),)");
    // A tensor whose shape does not change is a copy of the call's; a resized one is zeros.
    Obs kept;
    auto h = kept.wrap(first_tensor, Signature{param("x"), param("y")});
    h({T::from_values<float>({3}, {4, 5, 6}), T::from_values<float>({1}, {7})}, {});
    h({T::from_values<float>({2}, {1, 2}), T::from_values<float>({1}, {7})}, {});
    const V export_args = kept.infer_export_arguments();
    CHECK(export_args.repr() == "(Tensor(shape=[3], dtype=float32), Tensor(shape=[1], dtype=float32))");
    CHECK(export_args[0].tensor().to_doubles() == std::vector<double>{4, 5, 6});
    CHECK(export_args[1].tensor().to_doubles() == std::vector<double>{7});
}

TEST_CASE("an already empty observed tensor is reused, and constant kwargs are added") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("ids"), param("pixels", yobx::none), param("add", false)});
    f({tensor({1, 4})}, {{"pixels", tensor({0, 3})}, {"add", true}});
    f({tensor({1, 5})}, {{"add", true}});
    CHECK(obs.infer_arguments(1).repr() ==
          "{'ids': Tensor(shape=[1, 5], dtype=float32), 'pixels': Tensor(shape=[0, 3], dtype=float32), 'add': True}");
}

TEST_CASE("infer_arguments returns a tuple for positional calls and refuses a dict with *args") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2}), tensor({3})}, {});
    CHECK(obs.infer_arguments().repr() ==
          "(Tensor(shape=[2], dtype=float32), Tensor(shape=[3], dtype=float32))");
    Obs var;
    auto g = var.wrap(first_tensor, Signature{param("x"), var_args("args"), kw_only("k", yobx::none)});
    g({tensor({2}), tensor({3})}, {{"k", tensor({4})}});
    CHECK(error_of<yobx::runtime_error>([&] { var.infer_arguments(); }) ==
          "Cannot return arguments as a single tuple or a single dictionary because of '*args' in the function "
          "signature. You need to set `as_args_kwargs=True`.");
    CHECK(var.infer_arguments({.as_args_kwargs = true}).repr() ==
          "((Tensor(shape=[2], dtype=float32), Tensor(shape=[3], dtype=float32)), {'k': Tensor(shape=[4], "
          "dtype=float32)})");
}

TEST_CASE("infer_arguments completes arguments given by the caller") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("y", yobx::none), param("add", false)});
    f({tensor({2})}, {{"y", tensor({2, 3})}});
    f({tensor({3})}, {{"y", tensor({3, 3})}});
    // y's axis 0 is x's: every dynamic axis of y is known, so y is zeros of that size.
    CHECK(obs.infer_arguments(V::dict({{"x", tensor({7})}})).repr() ==
          "{'x': Tensor(shape=[7], dtype=float32), 'y': Tensor(shape=[7, 3], dtype=float32)}");
    CHECK(obs.infer_arguments(V::tuple({tensor({5})})).repr() ==
          "{'x': Tensor(shape=[5], dtype=float32), 'y': Tensor(shape=[5, 3], dtype=float32)}");
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_arguments(V::dict({{"x", tensor({7})}, {"add", true}})); }) ==
          "Two calls were made with different constant values, {'add': True} != {} (the arguments given and call 0 differ in "
          "'add': True vs absent (default False))");
    CHECK(error_of<yobx::value_error>([&] { obs.infer_arguments(V(tensor({1}))); }) ==
          "Unexpected type Tensor for index_or_args_or_kwargs.");
    CHECK(error_of<yobx::runtime_error>([&] {
              obs.infer_arguments(V::dict({{"x", tensor({7})}, {"y", V::list({tensor({1}), tensor({1})})}}));
          }) == "Named argument 'y' has 2 tensors but previously got 1 tensors in kwargs=['x', 'y']. Inference is impossible "
          "in that case.");
    // The failed check left the recorded counts alone.
    CHECK(obs.infer_arguments(V::dict({{"x", tensor({7})}})).repr() ==
          "{'x': Tensor(shape=[7], dtype=float32), 'y': Tensor(shape=[7, 3], dtype=float32)}");
    Obs kw;
    auto g = kw.wrap(first_tensor, Signature{param("x"), var_kwargs("kwargs")});
    g({tensor({2})}, {});
    CHECK(error_of<yobx::runtime_error>([&] { kw.infer_arguments(V::dict({{"x", tensor({7})}, {"z", tensor({1})}})); }) ==
          "At least one call to the observed model must contain all the named arguments. The given arguments have "
          "['z'] but no recorded call has it.");
}

TEST_CASE("There is no tensor at position N in any flattened inputs when an argument was never recorded") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("input_ids"), param("pixel_values", yobx::none)});
    f({tensor({1, 4})}, {});
    f({tensor({1, 5})}, {});
    CHECK(error_of<yobx::runtime_error>([&] {
              obs.infer_arguments(V::dict({{"input_ids", tensor({1, 3})}, {"pixel_values", yobx::none}}));
          }) == "There is no tensor at position 1 in any flattened inputs. (argument 'pixel_values' was never "
                "recorded; give its shape with value_if_missing)");
}

// ---------------------------------------------------------------- also

TEST_CASE("remove_inputs drops arguments by name or position, variadic parameters cannot be removed") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("y", yobx::none), param("z", yobx::none), var_kwargs("kw")});
    f({tensor({2}), tensor({3}), tensor({4})}, {{"e", tensor({1})}});
    f({tensor({5}), tensor({6})}, {{"z", tensor({7})}});
    obs.remove_inputs({"y", "never_passed"});
    CHECK(obs.info().inputs()[0].to_string() == "InputCandidate(1 args, 2 kwargs, 3 tensors, 0 aligned tensors)");
    CHECK(obs.infer_dynamic_shapes().to_python_strings() ==
          "{'x': {0: torch.export.Dim.DYNAMIC}, 'z': {0: torch.export.Dim.DYNAMIC}, 'kw': {'e': {}}}");
    obs.remove_inputs({2});
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "{'x': {0: torch.export.Dim.DYNAMIC}, 'kw': {'e': {}}}");
    CHECK(error_of<yobx::value_error>([&] { obs.remove_inputs({"kw"}); }) ==
          "remove_inputs: **kw is a variadic parameter and cannot be removed; remove its values by name instead");
    CHECK(error_of<yobx::value_error>([&] { obs.remove_inputs({9}); }) ==
          "remove_inputs: position 9 is beyond the signature (x, y=None, z=None, **kw)");
    obs.remove_inputs({"e"});
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({0: torch.export.Dim.DYNAMIC},)");
    // As the reference: a removal that removes nothing from any call is an error.
    CHECK(error_of<yobx::value_error>([&] { obs.remove_inputs({"never_passed", 1}); }) ==
          "No input in all candidates was removed from input_names=['never_passed', 1].");
    // Nothing changed, not even the alignment.
    CHECK(obs.info().inputs()[0].to_string() == "InputCandidate(1 args, 0 kwargs, 1 tensors, 1 aligned tensors)");
}

TEST_CASE("check_discrepancies runs a runner on every call and compares with the recorded outputs") {
    Obs obs;
    auto f = obs.wrap(
        [](yobx::Args<T> args, yobx::Kwargs<T>) {
            T y = args[0].tensor().clone();
            for (auto& v : y.values<float>()) v *= 2;
            return V::tuple({y, args[0]});
        },
        Signature{param("x")});
    f({DenseTensor::from_values<float>({2}, {1.f, 2.f})}, {});
    f({DenseTensor::from_values<float>({3}, {1.f, 2.f, 4.f})}, {});
    const auto same = obs.check_discrepancies([](const V& a) {
        const T& x = a[0][0].tensor();
        T y = x.clone();
        for (auto& v : y.values<float>()) v *= 2;
        return V::tuple({y, x});
    });
    REQUIRE(same.size() == 2);
    CHECK(same[0].success);
    CHECK(same[0].abs == 0);
    CHECK(same[1].outputs.size() == 2);
    CHECK(same[1].n_inputs == 1);

    const auto off = obs.check_discrepancies([](const V& a) {
        const T& x = a[0][0].tensor();
        return V::tuple({x, x});  // x instead of 2x
    });
    CHECK_FALSE(off[1].success);
    CHECK(off[1].abs == 4.0);
    CHECK(off[1].outputs[0].abs == 4.0);
    CHECK(off[1].outputs[0].rel == doctest::Approx(4.0 / 8.1));
    CHECK(off[1].outputs[1].success);

    const auto thrown = obs.check_discrepancies([](const V&) -> V { throw std::runtime_error("runner failed"); });
    CHECK_FALSE(thrown[0].success);
    CHECK(thrown[0].error == "runner failed");
    const auto fewer = obs.check_discrepancies([](const V& a) { return a[0][0]; });
    CHECK(fewer[0].error == "not the same number of outputs");
    const auto shape = obs.check_discrepancies([](const V& a) { return V::tuple({tensor({9}), a[0][0]}); });
    CHECK(shape[0].error == "not the same shape");
}

TEST_CASE("check_discrepancies replays each call as it was made, Replay::inferred gives the filled arguments") {
    // A model that refuses a mask of another length than x, as an encoder does.
    const auto model = [](yobx::Args<T> args, yobx::Kwargs<T> kwargs) -> V {
        const T& x = args[0].tensor();
        const auto mask = kwargs.find("mask");
        if (mask != kwargs.end() && !mask->second.is_none() && mask->second.tensor().shape() != x.shape())
            throw std::runtime_error("Mask size should match input size");
        const auto scale = kwargs.find("scale");
        T y = x.clone();
        for (auto& v : y.values<float>()) v *= scale == kwargs.end() ? 1.f : static_cast<float>(scale->second.as_double());
        return V(y);
    };
    Obs obs({.value_if_missing = {{"extra", V(tensor({0}))}}});
    auto f = obs.wrap(model, Signature{param("x"), param("mask", yobx::none), param("extra", yobx::none),
                                       param("scale", yobx::none)});
    f({DenseTensor::from_values<float>({2}, {1.f, 2.f})}, {{"mask", tensor({2})}, {"extra", tensor({3})}});
    f({DenseTensor::from_values<float>({3}, {1.f, 2.f, 3.f})}, {{"scale", 2.0}});
    // As observed: the second call has no mask and no extra (value_if_missing's is left out), and its scale.
    CHECK(obs.info().observed_arguments(1).repr() == "((Tensor(shape=[3], dtype=float32),), {'scale': 2.0})");
    CHECK(obs.info().observed_arguments(0).repr() ==
          "((Tensor(shape=[2], dtype=float32),), {'mask': Tensor(shape=[2], dtype=float32), 'extra': "
          "Tensor(shape=[3], dtype=float32)})");
    const auto run = [&](const V& a) { return model(a[0].items(), a[1].dict()); };
    const auto observed = obs.check_discrepancies(run);
    REQUIRE(observed.size() == 2);
    for (const auto& d : observed) {
        CHECK(d.success);
        CHECK(d.error.empty());
        CHECK(d.filled.empty());
    }
    CHECK(observed[1].n_none == 1);
    // Replay::inferred: call 1 gets a mask (zeros of the only shape observed, [2]: one call is too few to
    // see its axis vary) and value_if_missing's extra, which the model refuses.
    const auto inferred = obs.check_discrepancies(run, 1e-4, 0.1, yobx::Replay::inferred);
    CHECK(inferred[0].success);
    CHECK(inferred[0].filled.empty());
    CHECK(inferred[1].filled == std::vector<std::string>{"mask", "extra"});
    CHECK_FALSE(inferred[1].success);
    CHECK(inferred[1].error == "Mask size should match input size");
    CHECK(error_of<yobx::value_error>([&] { (void)obs.info().observed_arguments(2); }) ==
          "No stored input set for index=2<2.");
}

// ---------------------------------------------------------------- the LLM scenario

namespace {
struct LlmKwargs {
    BOOST_HANA_DEFINE_STRUCT(LlmKwargs, (std::optional<DenseTensor>, attention_mask),
                             (std::optional<KVCache>, past_key_values), (std::optional<DenseTensor>, pixel_values));
};
KVCache cache(std::int64_t batch, std::int64_t past, int layers) {
    KVCache c;
    for (int i = 0; i < layers; ++i) {
        c.key_cache.push_back(tensor({batch, 4, past, 8}));
        c.value_cache.push_back(tensor({batch, 4, past, 8}));
    }
    return c;
}
}  // namespace
template <>
inline constexpr bool yobx::enable_keyword_arguments<LlmKwargs> = true;

TEST_CASE("LLM-like generation: prefill with pixel_values, decode with a KV cache, automatic dim_names") {
    Obs obs({.value_if_missing = {{"pixel_values", V(tensor({0, 3, 16, 16}))}}});
    const Signature sig{param("input_ids"), param("attention_mask", yobx::none), param("past_key_values", yobx::none),
                        param("pixel_values", yobx::none)};
    auto forward = obs.wrap([](const T& ids, const LlmKwargs&) { return ids; }, sig);
    // prefill: batch 2, prompt of 5 tokens, an image
    forward(tensor({2, 5}, DType::int64), LlmKwargs{tensor({2, 5}, DType::int64), std::nullopt, tensor({2, 3, 16, 16})});
    // decode: one token at a time, the cache grows
    for (std::int64_t past = 5; past < 8; ++past)
        forward(tensor({2, 1}, DType::int64), LlmKwargs{tensor({2, past + 1}, DType::int64), cache(2, past, 2), std::nullopt});
    CHECK(obs.num_obs() == 3);
    CHECK(obs.info().best_candidate_index() == 1);
    CHECK(obs.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true}).to_python_strings() ==
          "{'input_ids': {0: 'batch_size', 1: 'sequence_length'}, "
          "'attention_mask': {0: 'batch_size', 1: 'total_sequence_length'}, "
          "'past_key_values': [[{0: 'batch_size', 2: 'past_sequence_length'}, {0: 'batch_size', 2: "
          "'past_sequence_length'}], [{0: 'batch_size', 2: 'past_sequence_length'}, {0: 'batch_size', 2: "
          "'past_sequence_length'}]], "
          "'pixel_values': {0: 'batch_size'}}");
    CHECK(obs.infer_dynamic_shapes().to_python_strings() ==
          "{'input_ids': {1: torch.export.Dim.DYNAMIC}, 'attention_mask': {1: torch.export.Dim.DYNAMIC}, "
          "'past_key_values': [[{2: torch.export.Dim.DYNAMIC}, {2: torch.export.Dim.DYNAMIC}], [{2: "
          "torch.export.Dim.DYNAMIC}, {2: torch.export.Dim.DYNAMIC}]], 'pixel_values': {0: torch.export.Dim.DYNAMIC}}");
    CHECK(obs.infer_arguments().repr() ==
          "{'input_ids': Tensor(shape=[2, 1], dtype=int64), 'attention_mask': Tensor(shape=[2, 6], dtype=int64), "
          "'past_key_values': DynamicCache(key_cache=[Tensor(shape=[2, 4, 5, 8], dtype=float32), Tensor(shape=[2, 4, "
          "5, 8], dtype=float32)], value_cache=[Tensor(shape=[2, 4, 5, 8], dtype=float32), Tensor(shape=[2, 4, 5, 8], "
          "dtype=float32)]), 'pixel_values': Tensor(shape=[0, 3, 16, 16], dtype=float32)}");
    // From the prefill call: the absent cache is empty along its dynamic axis.
    CHECK(obs.infer_arguments(0).repr() ==
          "{'input_ids': Tensor(shape=[2, 5], dtype=int64), 'attention_mask': Tensor(shape=[2, 5], dtype=int64), "
          "'past_key_values': DynamicCache(key_cache=[Tensor(shape=[2, 4, 0, 8], dtype=float32), Tensor(shape=[2, 4, "
          "0, 8], dtype=float32)], value_cache=[Tensor(shape=[2, 4, 0, 8], dtype=float32), Tensor(shape=[2, 4, 0, 8], "
          "dtype=float32)]), 'pixel_values': Tensor(shape=[2, 3, 16, 16], dtype=float32)}");
}
