// InputObserver, Phase 1: the signature, the recording wrappers and scopes, constants, keyword order,
// value_if_missing and binding errors.
#include "../observer_support.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <tuple>

// ---------------------------------------------------------------- Signature

TEST_CASE("the address of a templated member or function is taken with its type or <> (docs/pytree.md)") {
    std::string (yobx::TreeSpec::*print)() const = &yobx::TreeSpec::to_string;
    const yobx::TreeSpec spec = yobx::TreeSpec::tuple({yobx::TreeSpec::leaf(), yobx::TreeSpec::none()});
    CHECK((spec.*print)() == "TreeSpec(tuple, None, [*, None])");
    const auto read = &yobx::TreeSpec::from_json<>;
    CHECK(read(spec.to_json()) == spec);
    yobx::Parameter (*make)(std::string, yobx::DefaultValue) = &yobx::param;
    CHECK(Signature{make("x", 3)}.to_string() == "(x=3)");
    yobx::ExportSpec e;
    e.num_calls = 2;
    const auto report = &yobx::ExportSpec::report<>;
    CHECK((e.*report)().starts_with("Export readiness: 2 observed call(s), 0 input tensor(s).\n"));
}

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

TEST_CASE("a Hana struct of optionals stands for the keyword arguments, an absent optional is an absent keyword") {
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
