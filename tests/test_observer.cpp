// InputObserver: recording, alignment, dynamic shapes and arguments, with the
// seed's errors checked word for word.
#include "error_of.hpp"
#include "support.hpp"

#include <yobx/observer.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <tuple>

using test::error_of;
using test::KVCache;
using test::tensor;
using yobx::DenseTensor;
using yobx::DType;
using T = DenseTensor;
using V = yobx::Value<T>;
using Obs = yobx::InputObserver<T>;
using yobx::kw_only;
using yobx::param;
using yobx::Signature;
using yobx::var_args;
using yobx::var_kwargs;

namespace {

// A forward on Values: returns its first tensor argument.
V first_tensor(yobx::Args<T> args, yobx::Kwargs<T> kwargs) {
    for (const auto& a : args)
        if (a.is_tensor()) return a;
    for (const auto& kv : kwargs)
        if (kv.second.is_tensor()) return kv.second;
    return V();
}

const Signature xy{param("x"), param("y", yobx::none)};

}  // namespace

// ---------------------------------------------------------------- Signature

TEST_CASE("a signature prints like inspect.signature and rejects impossible parameter lists") {
    const Signature sig{param("input_ids"), param("mask", yobx::none), var_args("args"), kw_only("flag", true),
                        kw_only("scale", 0.5), kw_only("mode", "fast"), var_kwargs("kwargs")};
    CHECK(sig.to_string() == "(input_ids, mask=None, *args, flag=True, scale=0.5, mode='fast', **kwargs)");
    CHECK(Signature{param("x"), kw_only("n", 3)}.to_string() == "(x, *, n=3)");
    CHECK(sig.names_repr() == "('input_ids', 'mask', 'args', 'flag', 'scale', 'mode', 'kwargs')");
    CHECK(Signature{param("x")}.names_repr() == "('x',)");
    CHECK(sig.num_positional() == 2);
    CHECK(sig.var_positional()->first == "args");
    CHECK(*sig.var_keyword() == "kwargs");
    CHECK(error_of<yobx::value_error>([] { Signature{param("x"), param("x")}; }) ==
          "Signature: duplicate parameter name 'x'");
    CHECK(error_of<yobx::value_error>([] { Signature{kw_only("k"), param("x")}; }) ==
          "Signature: positional parameter 'x' comes after *args or a keyword-only parameter");
    CHECK(error_of<yobx::value_error>([] { Signature{param("x", 1), param("y")}; }) ==
          "Signature: parameter without a default 'y' follows a parameter with a default");
    CHECK(error_of<yobx::value_error>([] { Signature{var_kwargs("kw"), param("x")}; }) ==
          "Signature: parameter 'x' comes after **kw");
}

// ---------------------------------------------------------------- recording

TEST_CASE("wrap records a typed call, calls the function and returns its result") {
    Obs obs;
    CHECK(obs.is_empty());
    int calls = 0;
    auto f = obs.wrap(
        [&](const T& x, std::optional<T> y) {
            ++calls;
            return y ? *y : x;
        },
        xy);
    const T x = tensor({2, 3});
    const T r = f(x, std::nullopt);
    CHECK(r.shares_storage_with(x));
    CHECK(calls == 1);
    CHECK(obs.num_obs() == 1);
    CHECK_FALSE(obs.is_empty());
    const auto& c = obs.info().inputs()[0];
    CHECK(c.to_string() == "InputCandidate(2 args, 0 kwargs, 1 tensors, 0 aligned tensors)");
    CHECK(c.args()[1].is_none());
}

TEST_CASE("recording stops after store_n_calls and later calls pass straight through") {
    Obs obs;
    int calls = 0;
    auto f = obs.wrap([&](const T& x) { ++calls; return x; }, Signature{param("x")}, 2);
    for (int i = 1; i <= 5; ++i) f(tensor({i}));
    CHECK(calls == 5);
    CHECK(obs.num_obs() == 2);
    CHECK(yobx::shape_of(obs.info().inputs()[1].flat_list()[0]) == std::vector<std::int64_t>{2});
}

TEST_CASE("store_n_calls counts the calls recorded by earlier wrappers") {
    Obs obs;
    const Signature sig{param("x")};
    auto f = obs.wrap([](const T& x) { return x; }, sig);
    for (int i = 1; i <= 4; ++i) f(tensor({i}));
    CHECK(obs.num_obs() == 3);
    auto g = obs.wrap([](const T& x) { return x; }, sig, 2);
    for (int i = 1; i <= 4; ++i) g(tensor({i}));
    CHECK(obs.num_obs() == 5);
    CHECK(error_of<yobx::value_error>([&] { obs.wrap([](const T& x) { return x; }, Signature{param("z")}); }) ==
          "InputObserver: this observer already records a function with signature (x), not (z)");
}

TEST_CASE("inputs and outputs are deep copies and each call's latency is stored") {
    Obs obs;
    auto f = obs.wrap(
        [](const T& x) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            return x;
        },
        Signature{param("x")});
    T x = DenseTensor::from_values<float>({2}, {1.f, 2.f});
    T out = f(x);
    x.values<float>()[0] = 7.f;  // also changes out, which shares x's storage
    const auto& info = obs.info();
    CHECK(info.inputs()[0].flat_list()[0].values<float>()[0] == 1.f);
    CHECK(info.flat_outputs()[0][0].values<float>()[0] == 1.f);
    CHECK(out.values<float>()[0] == 7.f);
    REQUIRE(info.latencies().size() == 1);
    CHECK(info.latencies()[0] >= 0.002);
    CHECK(info.outputs_specs()[0].to_string() == "*");
}

TEST_CASE("a scope swaps a std::function slot and restores it, also when an exception leaves the scope") {
    Obs obs;
    std::function<V(yobx::Args<T>, yobx::Kwargs<T>)> forward = first_tensor;
    const auto* original = forward.target<V (*)(yobx::Args<T>, yobx::Kwargs<T>)>();
    REQUIRE(original != nullptr);
    {
        auto scope = obs.observe(forward, xy);
        CHECK(forward.target<V (*)(yobx::Args<T>, yobx::Kwargs<T>)>() == nullptr);
        forward({tensor({2})}, {});
    }
    CHECK((*forward.target<V (*)(yobx::Args<T>, yobx::Kwargs<T>)>() == *original));
    CHECK(obs.num_obs() == 1);
    try {
        auto scope = obs.observe(forward, xy);
        forward({tensor({3})}, {});
        throw std::runtime_error("model failed");
    } catch (const std::runtime_error&) {
    }
    CHECK((*forward.target<V (*)(yobx::Args<T>, yobx::Kwargs<T>)>() == *original));
    CHECK(obs.num_obs() == 2);
}

namespace {
T doubled_first(const T& x, const T&) { return x; }
}  // namespace

TEST_CASE("a scope swaps a function-pointer slot and restores it") {
    Obs obs;
    T (*forward)(const T&, const T&) = doubled_first;
    {
        auto scope = obs.observe(forward, Signature{param("a"), param("b")});
        CHECK((forward != &doubled_first));
        forward(tensor({2}), tensor({3}));
        forward(tensor({4}), tensor({3}));
    }
    CHECK((forward == &doubled_first));
    forward(tensor({5}), tensor({3}));  // not recorded any more
    CHECK(obs.num_obs() == 2);
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({0: torch.export.Dim.DYNAMIC}, {})");
}

TEST_CASE("calls from several threads record safely, each input with its own output") {
    Obs obs;
    auto f = obs.wrap(
        [](const T& x) {
            T y = x.clone();
            y.values<float>()[0] += 1.f;
            return y;
        },
        Signature{param("x")}, 100);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&f, t] {
            for (int i = 0; i < 50; ++i) f(DenseTensor::from_values<float>({1}, {static_cast<float>(t * 1000 + i)}));
        });
    for (auto& th : threads) th.join();
    const auto& info = obs.info();
    REQUIRE(info.size() == 100);
    for (std::size_t i = 0; i < info.size(); ++i)
        CHECK(info.flat_outputs()[i][0].values<float>()[0] == info.inputs()[i].flat_list()[0].values<float>()[0] + 1.f);
}

TEST_CASE("a function that throws is not recorded and gives its place back") {
    Obs obs;
    bool fail = true;
    auto f = obs.wrap(
        [&](const T& x) {
            if (fail) throw std::runtime_error("boom");
            return x;
        },
        Signature{param("x")}, 1);
    CHECK(error_of<std::runtime_error>([&] { f(tensor({1})); }) == "boom");
    CHECK(obs.num_obs() == 0);
    fail = false;
    f(tensor({2}));
    CHECK(obs.num_obs() == 1);
}

TEST_CASE("constant kwargs are the scalars that differ from a non-None default") {
    Obs obs;
    const Signature sig{param("x"), param("add", true), param("n", 2), param("mode", "a"), param("scale", yobx::none),
                        param("alpha", 1.0), var_kwargs("kwargs")};
    auto f = obs.wrap(first_tensor, sig);
    f({tensor({2})}, {{"mode", "b"}, {"add", false}, {"n", 2}, {"scale", 3.0}, {"alpha", 1}, {"extra", 5}, {"y", yobx::none}});
    const auto& c = obs.info().inputs()[0];
    CHECK(V::dict(c.cst_kwargs()).repr() == "{'add': False, 'mode': 'b'}");
    CHECK(c.kwargs().empty());
    CHECK(c.str_obs() == "InputCandidate(args=#1(...), kwargs=#0{...}, cst_kwargs={'add': False, 'mode': 'b'})");
}

TEST_CASE("keyword arguments are reordered to the signature's order, extra ones after in call order") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("a", yobx::none), param("b", yobx::none), var_kwargs("kw")});
    f({}, {{"z", tensor({1})}, {"b", tensor({2})}, {"y", tensor({3})}, {"a", tensor({4})}});
    std::vector<std::string> keys;
    for (const auto& kv : obs.info().inputs()[0].kwargs()) keys.push_back(kv.first);
    CHECK(keys == std::vector<std::string>{"a", "b", "z", "y"});
}

namespace {
struct Options {
    BOOST_HANA_DEFINE_STRUCT(Options, (std::optional<DenseTensor>, mask), (std::optional<DenseTensor>, bias),
                             (std::optional<bool>, add));
};
}  // namespace
template <>
inline constexpr bool yobx::enable_keyword_arguments<Options> = true;

TEST_CASE("a Hana struct of optionals stands for the keyword arguments; an absent optional is an absent keyword") {
    Obs obs;
    const Signature sig{param("x"), param("mask", yobx::none), param("bias", yobx::none), param("add", true)};
    auto f = obs.wrap([](const T& x, const Options&) { return x; }, sig);
    f(tensor({2, 3}), Options{tensor({2, 3}), std::nullopt, false});
    f(tensor({4, 3}), Options{tensor({4, 3}), tensor({3}), false});
    const auto& c0 = obs.info().inputs()[0];
    CHECK(c0.kwargs().size() == 1);
    CHECK(c0.kwargs().contains("mask"));
    CHECK(V::dict(c0.cst_kwargs()).repr() == "{'add': False}");
    CHECK(obs.infer_dynamic_shapes().to_python_strings() ==
          "{'x': {0: torch.export.Dim.DYNAMIC}, 'mask': {0: torch.export.Dim.DYNAMIC}, 'bias': {}, 'add': None}");
}

TEST_CASE("value_if_missing fills an argument absent from a call, by name or by position") {
    Obs obs({.value_if_missing = {{"y", V(tensor({0, 3}))}}});
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2, 3}), tensor({2, 3})}, {});
    f({tensor({5, 3})}, {});
    CHECK(obs.info().inputs()[1].kwargs().contains("y"));
    // The best candidate (call 0) passed both by position: the result is a tuple.
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({0: torch.export.Dim.DYNAMIC}, {0: torch.export.Dim.DYNAMIC})");

    Obs by_pos({.value_if_missing = {{1, V(tensor({0, 3}))}}});
    auto g = by_pos.wrap(first_tensor, xy);
    g({tensor({2, 3}), V()}, {});
    CHECK(yobx::shape_of(by_pos.info().inputs()[0].args()[1].tensor()) == std::vector<std::int64_t>{0, 3});
    g({tensor({2, 3}), tensor({1, 3})}, {});  // given: kept
    CHECK(yobx::shape_of(by_pos.info().inputs()[1].args()[1].tensor()) == std::vector<std::int64_t>{1, 3});
}

TEST_CASE("value_if_missing errors: unknown name, position beyond the signature, position beyond the arguments") {
    auto wrap_with = [](yobx::ValueIfMissing<T> vim, const Signature& sig) {
        Obs obs({.value_if_missing = std::move(vim)});
        obs.wrap(first_tensor, sig);
    };
    CHECK(error_of<yobx::value_error>([&] { wrap_with({{"nonexistent", V(tensor({0}))}}, xy); }) ==
          "Unexpected keyword argument 'nonexistent' provided as a value_if_missing input for a function that does "
          "not accept it. All value_if_missing keys must be in the observed signature: ('x', 'y').");
    // With **kwargs the name is accepted.
    wrap_with({{"nonexistent", V(tensor({0}))}}, Signature{param("x"), var_kwargs("kwargs")});
    CHECK(error_of<yobx::value_error>([&] { wrap_with({{2, V(tensor({0}))}}, xy); }) ==
          "Unexpected keyword argument k=2 provided as a value_if_missing input for a function that does not accept "
          "it. All value_if_missing indices must be in the observed signature: ('x', 'y').");
    Obs obs({.value_if_missing = {{1, V(tensor({0}))}}});
    auto f = obs.wrap(first_tensor, xy);
    CHECK(error_of<yobx::not_implemented_error>([&] { f({tensor({2})}, {}); }) ==
          "Unexpected keyword argument k=1 provided as a value_if_missing input for a function that does not accept "
          "it. All value_if_missing indices must be in the observed signature: ('x', 'y'), only 1 were given.");
    CHECK(obs.num_obs() == 0);
}

TEST_CASE("a call that does not bind to the signature is a TypeError naming the argument") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    CHECK(error_of<yobx::type_error>([&] { f({tensor({1}), tensor({1}), tensor({1})}, {}); }) ==
          "The observed function takes 2 positional arguments but 3 were given (signature (x, y=None))");
    CHECK(error_of<yobx::type_error>([&] { f({tensor({1})}, {{"x", tensor({1})}}); }) ==
          "The observed function got multiple values for argument 'x'");
    CHECK(error_of<yobx::type_error>([&] { f({tensor({1})}, {{"z", tensor({1})}}); }) ==
          "The observed function got an unexpected keyword argument 'z' (signature (x, y=None))");
}

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
          "Two calls were made with different constant values, {} != {'add': True}");
    // The same for a scalar passed by position.
    Obs pos;
    auto g = pos.wrap([](const T& x, bool) { return x; }, Signature{param("x"), param("add", false)});
    g(tensor({2}), true);
    g(tensor({3}), false);
    CHECK(error_of<yobx::runtime_error>([&] { pos.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {} != {'add': True}");
    // A scalar passed by position to a parameter without a default is compared as passed.
    Obs required;
    auto h = required.wrap([](const T& x, std::int64_t) { return x; }, Signature{param("x"), param("n")});
    h(tensor({2}), std::int64_t{3});
    h(tensor({3}), std::int64_t{4});
    CHECK(error_of<yobx::runtime_error>([&] { required.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {'n': 4} != {'n': 3}");
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
          "Two calls were made with different constant values, {} != {'add': False}");
}

TEST_CASE("ints inside a container that differ between calls are the constants error naming their path") {
    // torch.export 2.6 specializes them (and refuses a Dim for them): the calls cannot be one export.
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("x"), param("image_shapes")});
    f({tensor({2}), V::list({V::tuple({V(std::int64_t{4}), V(std::int64_t{6})})})}, {});
    f({tensor({3}), V::list({V::tuple({V(std::int64_t{4}), V(std::int64_t{8})})})}, {});
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {'image_shapes[0][1]': 8} != {'image_shapes[0][1]': 6} "
          "(torch.export specializes the ints, floats and strings inside an input)");
    // In a dict next to tensors, in an item of *args, by keyword.
    Obs dict;
    auto g = dict.wrap(first_tensor, Signature{param("x"), var_args("rest"), var_kwargs("kw")});
    g({tensor({2}), V::dict({{"t", tensor({2})}, {"scale", 0.5}})}, {{"opt", V::dict({{"t", tensor({2})}, {"mode", "a"}})}});
    g({tensor({3}), V::dict({{"t", tensor({3})}, {"scale", 0.5}})}, {{"opt", V::dict({{"t", tensor({3})}, {"mode", "b"}})}});
    CHECK(error_of<yobx::runtime_error>([&] { dict.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {\"opt['mode']\": 'b'} != {\"opt['mode']\": 'a'} "
          "(torch.export specializes the ints, floats and strings inside an input)");
    Obs var;
    auto h = var.wrap(first_tensor, Signature{param("x"), var_args("rest")});
    h({tensor({2}), V::list({tensor({2}), V(std::int64_t{1})})}, {});
    h({tensor({3}), V::list({tensor({3}), V(std::int64_t{2})})}, {});
    CHECK(error_of<yobx::runtime_error>([&] { var.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {'rest[0][1]': 2} != {'rest[0][1]': 1} "
          "(torch.export specializes the ints, floats and strings inside an input)");
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

// ---------------------------------------------------------------- dynamic shapes

TEST_CASE("with one call and no forced batch dimension every entry is empty") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({2, 3}), tensor({2})}, {});
    CHECK(obs.infer_dynamic_shapes().to_python_strings() == "({}, {})");
    CHECK(obs.infer_dynamic_shapes({.set_batch_dimension_for = true}).to_python_strings() ==
          "({0: torch.export.Dim.DYNAMIC}, {0: torch.export.Dim.DYNAMIC})");
}

TEST_CASE("set_batch_dimension_for takes names and positions; a position also matches its signature name") {
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

TEST_CASE("generated labels are <input>_dim_<axis>; a second group of the same input gets its container index") {
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
          "Two calls were made with different constant values, {'add': True} != {}");
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

TEST_CASE("remove_inputs drops arguments by name or position; variadic parameters cannot be removed") {
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

TEST_CASE("check_discrepancies replays each call as it was made; Replay::inferred gives the filled arguments") {
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
