// InputObserver: what an absent input means (fill_if_missing), sized per call, and the fills
// checked on the model (check_fills) and listed in the readiness report.
#include "../observer_support.hpp"

#include <thread>

#include <cmath>
#include <functional>

using Fill = yobx::Fill<T>;

namespace {

// A tensor type whose traits have no `full`: ones and constant fills cannot be made.
struct PlainTensor {
    std::vector<std::int64_t> shape;
};

}  // namespace

template <>
struct yobx::tensor_traits<PlainTensor> {
    static const std::vector<std::int64_t>& shape(const PlainTensor& t) { return t.shape; }
    static std::string dtype(const PlainTensor&) { return "plain"; }
    static PlainTensor clone(const PlainTensor& t) { return t; }
    static PlainTensor empty(const std::vector<std::int64_t>& s, const PlainTensor&) { return {s}; }
    static PlainTensor zeros(const std::vector<std::int64_t>& s, const PlainTensor&) { return {s}; }
};

namespace {

// A tensor of shape [b, s] whose elements are 0, 1, 2, ... (as doubles, then converted).
T iota(std::int64_t b, std::int64_t s, DType dtype = DType::float32, double scale = 1) {
    std::vector<double> v(static_cast<std::size_t>(b * s));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<double>(i % 7);
    if (dtype == DType::int64) {
        std::vector<std::int64_t> w(v.begin(), v.end());
        return T::from_values<std::int64_t>({b, s}, w);
    }
    std::vector<float> w(v.begin(), v.end());
    return T::from_values<float>({b, s}, w);
}

// A BERT-like head: per row, the mean of x over the positions the mask keeps (an absent mask keeps
// every position, as in Hugging Face; a mask of zeros gives NaN, 0/0), plus 10 times the sum of the
// token types (absent: type 0).
V masked_mean(yobx::Args<T> args, yobx::Kwargs<T> kwargs) {
    const T& x = args.at(0).tensor();
    const auto get = [&](const char* name, std::size_t pos) -> const V* {
        if (pos < args.size() && !args[pos].is_none()) return &args[pos];
        const auto it = kwargs.find(name);
        return it == kwargs.end() || it->second.is_none() ? nullptr : &it->second;
    };
    const V* mask = get("attention_mask", 1);
    const V* types = get("token_type_ids", 2);
    const auto b = x.shape()[0], s = x.shape()[1];
    const auto xs = x.to_doubles();
    const auto ms = mask ? mask->tensor().to_doubles() : std::vector<double>(xs.size(), 1.0);
    const auto ts = types ? types->tensor().to_doubles() : std::vector<double>(xs.size(), 0.0);
    std::vector<float> out;
    for (std::int64_t r = 0; r < b; ++r) {
        double sum = 0, kept = 0, type = 0;
        for (std::int64_t c = 0; c < s; ++c) {
            const auto i = static_cast<std::size_t>(r * s + c);
            sum += xs[i] * ms[i];
            kept += ms[i];
            type += ts[i];
        }
        out.push_back(static_cast<float>(sum / kept + 10 * type));
    }
    return V(T::from_values<float>({b}, out));
}

const Signature bert{param("input_ids"), param("attention_mask", yobx::none), param("token_type_ids", yobx::none)};

// Four calls: the mask and the token types passed as keywords in some only.
Obs observe_bert(Obs obs) {
    auto f = obs.wrap(masked_mean, bert, 4);
    f({iota(2, 5)}, {});
    f({iota(3, 7)}, {{"attention_mask", iota(3, 7, DType::float32, 0) }, {"token_type_ids", iota(3, 7, DType::int64)}});
    f({iota(2, 6)}, {{"token_type_ids", iota(2, 6, DType::int64)}});
    f({iota(4, 3)}, {{"attention_mask", T::full({4, 3}, 1, DType::float32)}});
    return obs;
}

std::function<V(const V&)> runner() {
    return [](const V& call) { return masked_mean(call[0].items(), call[1].dict()); };
}

std::string values(const V& v) {
    std::string s;
    for (double d : v.tensor().to_doubles()) {
        if (!s.empty()) s += ' ';
        s += std::to_string(static_cast<int>(d));
    }
    return s;
}

}  // namespace

TEST_CASE("fill_if_missing: each kind sized from the call it fills") {
    // The mask of call 1 is all zeros: the mean is NaN there, which is what the call gave.
    const auto with = [](Fill fill) {
        return observe_bert(Obs({.fill_if_missing = {{"attention_mask", std::move(fill)}}})).infer_arguments(0);
    };
    // input_ids [2, 5] in call 0: the mask takes its sizes (both axes share input_ids' labels).
    CHECK(with(Fill::ones())["attention_mask"].repr() == "Tensor(shape=[2, 5], dtype=float32)");
    CHECK(values(with(Fill::ones())["attention_mask"]) == "1 1 1 1 1 1 1 1 1 1");
    CHECK(values(with(Fill::zeros())["attention_mask"]) == "0 0 0 0 0 0 0 0 0 0");
    CHECK(values(with(Fill::constant(3))["attention_mask"]) == "3 3 3 3 3 3 3 3 3 3");
    CHECK(with(Fill::empty())["attention_mask"].repr() == "Tensor(shape=[2, 0], dtype=float32)");
    // The seed's rule: the last recorded mask [4, 3], 0 along its largest dynamic axis.
    CHECK(with(Fill::empty_largest_dynamic())["attention_mask"].repr() == "Tensor(shape=[4, 0], dtype=float32)");
    const auto twice = Fill::function([](const std::vector<std::int64_t>& shape, const T& like) {
        return T::full(shape, 2, like.dtype());
    }, "twos");
    CHECK(values(with(twice)["attention_mask"]) == "2 2 2 2 2 2 2 2 2 2");
    CHECK(twice.to_string() == "twos");
    CHECK(Fill::constant(0.5).to_string() == "constant(0.5)");
    // Without a fill: automatic, zeros of the call's sizes (every axis tied).
    CHECK(values(observe_bert(Obs()).infer_arguments(0)["attention_mask"]) == "0 0 0 0 0 0 0 0 0 0");
    // By position, and the token types (int64) in call 3 sized [4, 3].
    const V a = observe_bert(Obs({.fill_if_missing = {{1, Fill::ones()}, {"token_type_ids", Fill::constant(2)}}})).infer_arguments(3);
    CHECK(a["token_type_ids"].repr() == "Tensor(shape=[4, 3], dtype=int64)");
    CHECK(values(a["token_type_ids"]) == "2 2 2 2 2 2 2 2 2 2 2 2");
    CHECK(values(observe_bert(Obs({.fill_if_missing = {{1, Fill::ones()}}})).infer_arguments(0)["attention_mask"]) ==
          "1 1 1 1 1 1 1 1 1 1");
}

TEST_CASE("fill_if_missing takes precedence over value_if_missing for the calls that did not pass the input") {
    Obs obs({.value_if_missing = {{"attention_mask", V(tensor({1, 1}))}},
             .fill_if_missing = {{"attention_mask", Fill::ones()}}});
    observe_bert(obs);
    CHECK(obs.infer_arguments(0)["attention_mask"].repr() == "Tensor(shape=[2, 5], dtype=float32)");
    CHECK(values(obs.infer_arguments(2)["attention_mask"]) == "1 1 1 1 1 1 1 1 1 1 1 1");
    // value_if_missing alone keeps its meaning: its tensor, as given.
    Obs only({.value_if_missing = {{"attention_mask", V(tensor({1, 1}))}}});
    observe_bert(only);
    CHECK(only.infer_arguments(0)["attention_mask"].repr() == "Tensor(shape=[1, 1], dtype=float32)");
}

TEST_CASE("the seed's fill, empty_largest_dynamic, gives what torch.onnx.InputObserver's tests expect") {
    // test_io_captured_optional_args: y absent from call 0; the seed expects (1, 0), yobx's default
    // sizes y from the label it shares with x (6 in call 0).
    for (const bool seed : {false, true}) {
        Obs obs(seed ? Obs::Options{.fill_if_missing = {{"y", Fill::empty_largest_dynamic()}}} : Obs::Options{});
        auto f = obs.wrap(first_tensor, xy);
        f({tensor({5, 6})}, {});
        f({tensor({6, 7}), tensor({1, 7})}, {});
        f({tensor({7, 8}), tensor({1, 8})}, {});
        CHECK(obs.infer_dynamic_shapes().to_python() == "({0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}, "
                                                        "{1: torch.export.Dim.DYNAMIC})");
        CHECK(obs.infer_arguments(0).repr() == (seed ? "(Tensor(shape=[5, 6], dtype=float32), Tensor(shape=[1, 0], dtype=float32))"
                                                     : "(Tensor(shape=[5, 6], dtype=float32), Tensor(shape=[1, 6], dtype=float32))"));
    }
}

TEST_CASE("fill_if_missing errors") {
    CHECK(error_of<yobx::value_error>([] { Obs({.fill_if_missing = {{"mask", Fill::ones()}}}).wrap(masked_mean, bert)({iota(1, 1)}); }) ==
          "Unexpected keyword argument 'mask' provided as a fill_if_missing input for a function that does not accept "
          "it. All fill_if_missing keys must be in the observed signature: ('input_ids', 'attention_mask', "
          "'token_type_ids').");
    CHECK(error_of<yobx::value_error>([] { Obs({.fill_if_missing = {{5, Fill::ones()}}}).wrap(masked_mean, bert)({iota(1, 1)}); }) ==
          "Unexpected keyword argument k=5 provided as a fill_if_missing input for a function that does not accept it. "
          "All fill_if_missing indices must be in the observed signature: ('input_ids', 'attention_mask', "
          "'token_type_ids').");
    CHECK(error_of<yobx::value_error>([] {
              Obs({.fill_if_missing = {{"attention_mask", Fill::ones()}, {1, Fill::zeros()}}}).wrap(masked_mean, bert)({iota(1, 1)});
          }) == "fill_if_missing names 'attention_mask' twice");
    CHECK(error_of<yobx::value_error>([] { Fill::function(nullptr); }) == "Fill::function: the function is empty");
    // The token types are int64: 0.5 cannot be one.
    CHECK(error_of<yobx::value_error>([] {
              observe_bert(Obs({.fill_if_missing = {{"token_type_ids", Fill::constant(0.5)}}})).infer_arguments(0);
          }) == "fill_if_missing: input 'token_type_ids' is int64, which cannot hold 0.5 (it becomes 0)");
    CHECK(error_of<yobx::value_error>([] {
              observe_bert(Obs({.fill_if_missing = {{"token_type_ids", Fill::constant(1e30)}}})).infer_arguments(0);
          }) == "DenseTensor::full: 1000000000000000019884624838656.000000 does not fit the dtype");
    const auto flat = Fill::function([](const std::vector<std::int64_t>&, const T& like) { return T::zeros({3}, like.dtype()); }, "flat");
    CHECK(error_of<yobx::value_error>([&] {
              observe_bert(Obs({.fill_if_missing = {{"attention_mask", flat}}})).infer_arguments(0);
          }) == "fill_if_missing: flat returned a tensor of rank 1 for input 'attention_mask', which has rank 2");
    const auto ints = Fill::function([](const std::vector<std::int64_t>& s, const T&) { return T::zeros(s, DType::int64); }, "ints");
    CHECK(error_of<yobx::value_error>([&] {
              observe_bert(Obs({.fill_if_missing = {{"attention_mask", ints}}})).infer_arguments(0);
          }) == "fill_if_missing: ints returned a tensor of dtype int64 for input 'attention_mask', which is float32");
    // ones and constant need tensor_traits<T>::full: said when the observer starts recording.
    using Plain = yobx::InputObserver<PlainTensor>;
    CHECK(error_of<yobx::type_error>([] {
              Plain plain({.fill_if_missing = {{"y", yobx::Fill<PlainTensor>::ones()}}});
              (void)plain.wrap([](yobx::Args<PlainTensor>, yobx::Kwargs<PlainTensor>) { return 0; }, xy);
          }) == "fill_if_missing: ones for 'y' needs tensor_traits<T>::full(const std::vector<int64_t>& shape, double "
                "value, const T& like); this tensor type does not define it");
    // A scalar input cannot be empty.
    Obs scalar({.fill_if_missing = {{"y", Fill::empty()}}});
    auto f = scalar.wrap(first_tensor, xy);
    f({tensor({2})}, {});
    f({tensor({3}), tensor({})}, {});
    CHECK(error_of<yobx::value_error>([&] { scalar.infer_arguments(0); }) ==
          "fill_if_missing: input 'y' has rank 0, it cannot be empty; give zeros or a constant");
}

TEST_CASE("check_fills: the automatic mask of zeros changes the calls, ones reproduce them") {
    Obs obs = observe_bert(Obs());
    const auto found = obs.check_fills(runner());
    REQUIRE(found.size() == 2);
    CHECK(found[0].to_string() == "attention_mask: absent from call(s) 0, 2; fill ones, checked: reproduces every call "
                                  "(tried automatic, zeros, ones)");
    CHECK(found[1].to_string() == "token_type_ids: absent from call(s) 0, 3; fill automatic, checked: reproduces every call");
    // From then on, the replay uses the chosen fill.
    CHECK(values(obs.infer_arguments(0)["attention_mask"]) == "1 1 1 1 1 1 1 1 1 1");
    for (const auto& d : obs.check_discrepancies(runner(), 1e-4, 0.1, yobx::Replay::inferred)) CHECK(d.success);
    const auto spec = obs.infer_export_spec();
    REQUIRE(spec.absent.size() == 2);
    CHECK(spec.absent == found);
    CHECK(spec.report().find("\nAbsent inputs (the fill each call's replay and the exported program get):\n"
                             "  attention_mask: absent from call(s) 0, 2; fill ones, checked: reproduces every call "
                             "(tried automatic, zeros, ones)\n"
                             "  token_type_ids: absent from call(s) 0, 3; fill automatic, checked: reproduces every call\n") !=
          std::string::npos);
    CHECK(yobx::ExportSpec::from_json(spec.to_json()) == spec);
}

TEST_CASE("check_fills: without a runner nothing is checked, the report says so") {
    Obs obs = observe_bert(Obs({.fill_if_missing = {{"attention_mask", Fill::ones()}}}));
    const auto spec = obs.infer_export_spec();
    REQUIRE(spec.absent.size() == 2);
    CHECK(spec.absent[0].to_string() == "attention_mask: absent from call(s) 0, 2; fill ones (given), not checked "
                                        "(give check_fills or infer_export_spec a runner of the model)");
    CHECK(spec.absent[1].to_string() == "token_type_ids: absent from call(s) 0, 3; fill automatic, not checked "
                                        "(give check_fills or infer_export_spec a runner of the model)");
    // With a runner, infer_export_spec checks first.
    const auto checked = obs.infer_export_spec(runner());
    CHECK(checked.absent[0].to_string() == "attention_mask: absent from call(s) 0, 2; fill ones (given), checked: reproduces every call");
}

TEST_CASE("check_fills: the user's fill is checked, not replaced, and when nothing reproduces a call the report says which") {
    Obs obs = observe_bert(Obs({.fill_if_missing = {{"token_type_ids", Fill::ones()}}}));
    const auto found = obs.check_fills(runner());
    REQUIRE(found.size() == 2);
    CHECK(found[1].to_string() ==
          "token_type_ids: absent from call(s) 0, 3; fill ones (given), checked: does NOT reproduce call(s) 0, 3 "
          "(call 0: output 0 differs by 50 (with attention_mask filled too); call 3: output 0 differs by 30). The exported program cannot run these "
          "calls as they were made: pass token_type_ids in every call, or give fill_if_missing a fill that means what "
          "its absence means");
    CHECK(values(obs.infer_arguments(0)["token_type_ids"]) == "1 1 1 1 1 1 1 1 1 1");
    // A model where absence means something no candidate gives (every other position): the automatic fill stays.
    const auto alternating = [](yobx::Args<T> args, yobx::Kwargs<T> kwargs) {
        if (!kwargs.contains("attention_mask")) {  // every other position
            const auto& shape = args[0].tensor().shape();
            std::vector<float> alternate(static_cast<std::size_t>(shape[0] * shape[1]));
            for (std::size_t i = 0; i < alternate.size(); ++i) alternate[i] = static_cast<float>(i % 2 == 0);
            kwargs.insert_or_assign("attention_mask", V(T::from_values<float>(shape, alternate)));
        }
        return masked_mean(std::move(args), std::move(kwargs));
    };
    Obs sparse;
    auto f = sparse.wrap(alternating, bert);
    f({iota(2, 5)}, {});
    f({iota(3, 4)}, {{"attention_mask", iota(3, 4)}});
    const auto none = sparse.check_fills([&](const V& call) { return alternating(call[0].items(), call[1].dict()); });
    REQUIRE(none.size() == 1);
    CHECK(none[0].fill == "automatic");
    CHECK(none[0].failing == std::vector<std::size_t>{0});
    CHECK(none[0].tried == std::vector<std::string>{"automatic", "zeros", "ones"});
    CHECK(sparse.infer_export_spec().report().find("does NOT reproduce call(s) 0") != std::string::npos);
}

TEST_CASE("check_fills: a value_if_missing input is checked, a runner that fails is named") {
    Obs obs({.value_if_missing = {{"attention_mask", V(T::full({2, 5}, 1, DType::float32))}}});
    auto f = obs.wrap(masked_mean, bert);
    f({iota(2, 5)}, {});
    f({iota(2, 4)}, {{"attention_mask", iota(2, 4)}});
    const auto found = obs.check_fills(runner());
    REQUIRE(found.size() == 1);
    CHECK(found[0].to_string() == "attention_mask: absent from call(s) 0; fill value_if_missing (given), checked: reproduces every call");
    const auto failing = obs.check_fills([](const V&) -> V { throw yobx::runtime_error("no kernel"); });
    CHECK(failing[0].reasons == std::vector<std::string>{"call 0: the model fails on the call as made: no kernel"});
    // A model that fails on the filled call only.
    const auto filled = obs.check_fills([](const V& call) -> V {
        if (call[1].dict().contains("attention_mask") && call[0].items()[0].tensor().shape()[1] == 5)
            throw yobx::runtime_error("no mask of that size");
        return masked_mean(call[0].items(), call[1].dict());
    });
    CHECK(filled[0].reasons ==
          std::vector<std::string>{"call 0: the model fails on the filled call: no mask of that size"});
}

TEST_CASE("check_fills runs the model on clones: a model that writes into its inputs changes no recorded call") {
    Obs obs = observe_bert(Obs());
    const auto before = values(obs.infer_arguments(1)["input_ids"]);
    const auto writer = [](const V& call) {
        V out = masked_mean(call[0].items(), call[1].dict());
        T ids = call[0].items()[0].tensor();
        for (float& x : ids.values<float>()) x = 99;  // a cache updated in place, say
        return out;
    };
    (void)obs.check_fills(writer);
    CHECK(values(obs.infer_arguments(1)["input_ids"]) == before);
    CHECK(values(obs.info().observed_arguments(0)[0].items()[0]) == "0 1 2 3 4 5 6 0 1 2");
}

TEST_CASE("a runner that calls the observed wrapper, itself or from another thread: replays run, none is recorded") {
    Obs obs;
    auto f = obs.wrap(masked_mean, bert, 10);  // room for more calls: a replay through f would be recorded
    f({iota(2, 5)}, {});
    f({iota(3, 7)}, {{"attention_mask", iota(3, 7, DType::float32, 0)}, {"token_type_ids", iota(3, 7, DType::int64)}});
    f({iota(2, 6)}, {{"token_type_ids", iota(2, 6, DType::int64)}});
    f({iota(4, 3)}, {{"attention_mask", T::full({4, 3}, 1, DType::float32)}});
    // The wrapped forward itself as the runner.
    const auto itself = [&](const V& call) { return f(call[0].items(), call[1].dict()); };
    // A model whose submodule is the wrapped forward, run on a thread of its own.
    const auto model = [&](const V& call) {
        V out;
        std::thread worker([&] { out = f(call[0].items(), call[1].dict()); });
        worker.join();
        return out;
    };
    const auto found = obs.check_fills(itself);
    REQUIRE(found.size() == 2);
    CHECK(found[0].to_string() == "attention_mask: absent from call(s) 0, 2; fill ones, checked: reproduces every call "
                                  "(tried automatic, zeros, ones)");
    for (const auto& d : obs.check_discrepancies(itself)) CHECK(d.success);
    for (const auto& d : obs.check_discrepancies(model, 1e-4, 0.1, yobx::Replay::inferred)) CHECK(d.success);
    const auto spec = obs.infer_export_spec(model);
    REQUIRE(spec.absent.size() == 2);
    CHECK(spec.absent[0].to_string() == "attention_mask: absent from call(s) 0, 2; fill ones, checked: reproduces every call");
    CHECK(obs.num_obs() == 4);
    CHECK(obs.warnings().empty());  // no call counted as dropped either
    // After the checks, the wrapper records again.
    f({iota(3, 5)}, {});
    CHECK(obs.num_obs() == 5);
}
