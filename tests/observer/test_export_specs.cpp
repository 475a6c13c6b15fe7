// Derived dimensions, ranges, the export readiness report and the specs for
// other consumers (TensorRT, ONNX, JSON), on an LLM-like generation loop.
#include "../observer_support.hpp"

#include <string>

namespace {

struct GenKwargs {
    BOOST_HANA_DEFINE_STRUCT(GenKwargs, (std::optional<DenseTensor>, attention_mask),
                             (std::optional<KVCache>, past_key_values), (std::optional<DenseTensor>, pixel_values));
};

KVCache make_cache(std::int64_t batch, std::int64_t past) {
    return {{tensor({batch, 4, past, 8})}, {tensor({batch, 4, past, 8})}};
}

// Two prompts (batch 2 of 5 tokens, batch 3 of 7), each a prefill with an image and no cache, then 3 decode steps.
Obs observe_generation() {
    Obs obs({.value_if_missing = {{"pixel_values", V(tensor({0, 3, 16, 16}))}}});
    const yobx::Signature sig{param("input_ids"), param("attention_mask", yobx::none), param("past_key_values", yobx::none),
                              param("pixel_values", yobx::none), param("token_type_ids", yobx::none)};
    auto forward = obs.wrap([](const T& ids, const GenKwargs&) { return ids; }, sig, 8);
    for (auto [batch, prompt] : {std::pair<std::int64_t, std::int64_t>{2, 5}, {3, 7}}) {
        forward(tensor({batch, prompt}, DType::int64),
                GenKwargs{tensor({batch, prompt}, DType::int64), std::nullopt, tensor({batch, 3, 16, 16})});
        for (std::int64_t past = prompt; past < prompt + 3; ++past)
            forward(tensor({batch, 1}, DType::int64),
                    GenKwargs{tensor({batch, past + 1}, DType::int64), make_cache(batch, past), std::nullopt});
    }
    return obs;
}

}  // namespace

template <>
inline constexpr bool yobx::enable_keyword_arguments<GenKwargs> = true;

const yobx::DynamicShapesOptions llm_options{.set_batch_dimension_for = true, .derived_dims = true,
                                             .bounds = {{"sequence_length", {1, 4096}}}};

TEST_CASE("derived_dims: total_sequence_length = past_sequence_length + sequence_length, written for torch.export") {
    Obs obs = observe_generation();
    // Without derived_dims, the literal is unchanged.
    CHECK(obs.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true}).to_python_strings() ==
          "{'input_ids': {0: 'batch_size', 1: 'sequence_length'}, 'attention_mask': {0: 'batch_size', 1: "
          "'total_sequence_length'}, 'past_key_values': [[{0: 'batch_size', 2: 'past_sequence_length'}], [{0: "
          "'batch_size', 2: 'past_sequence_length'}]], 'pixel_values': {0: 'batch_size'}}");
    // With it (automatic labels when dim_names is not given), one name per label, each Dim.DYNAMIC (what
    // torch.export accepts whatever the model guards); a sum stays a comment.
    const auto ds = obs.infer_dynamic_shapes({.set_batch_dimension_for = true, .derived_dims = true});
    CHECK(ds.to_python() == R"(batch_size = torch.export.Dim.DYNAMIC
sequence_length = torch.export.Dim.DYNAMIC
total_sequence_length = torch.export.Dim.DYNAMIC
past_sequence_length = torch.export.Dim.DYNAMIC
# total_sequence_length = past_sequence_length + sequence_length (torch.export cannot express a sum of two dimensions)
dynamic_shapes = {'input_ids': {0: batch_size, 1: sequence_length}, 'attention_mask': {0: batch_size, 1: total_sequence_length}, 'past_key_values': [[{0: batch_size, 2: past_sequence_length}], [{0: batch_size, 2: past_sequence_length}]], 'pixel_values': {0: batch_size}})");
    REQUIRE(ds.definitions());
    CHECK(ds.definitions()->relations.size() == 1);
    CHECK(ds.definitions()->relations[0].to_string() == "total_sequence_length = past_sequence_length + sequence_length");
}

TEST_CASE("with named_dims, relations torch.export can express become derived Dims, bounds become min and max") {
    Obs obs;
    auto forward = obs.wrap([](const T& x, const T&, const T&) { return x; },
                            yobx::Signature{param("x"), param("y"), param("z")});
    for (std::int64_t n : {3, 8, 20}) forward(tensor({n, 4}), tensor({n + 1, 4}), tensor({2 * n, 4}));
    // By default the relations are comments and only a label with bounds is a torch.export.Dim.
    CHECK(obs.infer_dynamic_shapes({.derived_dims = true, .bounds = {{"x_dim_0", {2, 64}}}}).to_python() ==
          "x_dim_0 = torch.export.Dim('x_dim_0', min=2, max=64)\n"
          "y_dim_0 = torch.export.Dim.DYNAMIC\n"
          "z_dim_0 = torch.export.Dim.DYNAMIC\n"
          "# y_dim_0 = x_dim_0 + 1 (holds in every observed call; torch.export finds it from the model)\n"
          "# z_dim_0 = 2*x_dim_0 (holds in every observed call; torch.export finds it from the model)\n"
          "dynamic_shapes = ({0: x_dim_0}, {0: y_dim_0}, {0: z_dim_0})");
    CHECK(obs.infer_dynamic_shapes({.derived_dims = true, .bounds = {{"x_dim_0", {2, 64}}}, .named_dims = true}).to_python() ==
          "x_dim_0 = torch.export.Dim('x_dim_0', min=2, max=64)\n"
          "y_dim_0 = x_dim_0 + 1\n"
          "z_dim_0 = 2 * x_dim_0\n"
          "dynamic_shapes = ({0: x_dim_0}, {0: y_dim_0}, {0: z_dim_0})");
    // Labels that are not Python identifiers are made into ones.
    CHECK(obs.infer_dynamic_shapes({.dim_names = {{"x", {{0, "n"}}}, {"y", {{0, "n+1"}}}, {"z", {{0, "2n"}}}},
                                    .derived_dims = true, .named_dims = true})
              .to_python() ==
          "n = torch.export.Dim('n')\n"
          "n_1 = n + 1\n"
          "_2n = 2 * n\n"
          "dynamic_shapes = ({0: n}, {0: n_1}, {0: _2n})");
    CHECK(error_of<yobx::value_error>([&] { (void)obs.infer_dynamic_shapes({.derived_dims = true, .bounds = {{"x_dim_0", {9, 2}}}}); }) ==
          "bounds of 'x_dim_0': min 9 is greater than max 2");
    CHECK(error_of<yobx::value_error>([&] { (void)obs.infer_dynamic_shapes({.derived_dims = true, .bounds = {{"batch", {1, 2}}}}); }) ==
          "bounds given for 'batch', which is not the label of a dynamic dimension");
}

TEST_CASE("the report lists the hints: relations that hold in too few calls to be sure") {
    Obs obs;
    auto forward = obs.wrap([](const T& x, const T&) { return x; }, yobx::Signature{param("x"), param("y")});
    forward(tensor({2}), tensor({5}));
    forward(tensor({6}), tensor({9}));
    const auto spec = obs.infer_export_spec();
    REQUIRE(spec.hints.size() == 1);
    CHECK(spec.hints[0].to_string() == "y_dim_0 = x_dim_0 + 3");
    CHECK(spec.report().find("Hints (hold in every call, too few observations or other constants fit as well):\n"
                             "  y_dim_0 = x_dim_0 + 3 (2 distinct observation(s))\n") !=
          std::string::npos);
    CHECK(yobx::ExportSpec::from_json(spec.to_json()).to_json() == spec.to_json());
}

TEST_CASE("the export readiness report, as text") {
    Obs obs = observe_generation();
    CHECK(obs.infer_export_spec(llm_options).report() == R"(Export readiness: 8 observed call(s), 5 input tensor(s).

Inputs:
  input_ids
    shapes: [2, 5], [2, 1], [2, 1], [2, 1], [3, 7], [3, 1], [3, 1], [3, 1]
    dynamic: 0 -> batch_size, 1 -> sequence_length
  attention_mask
    shapes: [2, 5], [2, 6], [2, 7], [2, 8], [3, 7], [3, 8], [3, 9], [3, 10]
    dynamic: 0 -> batch_size, 1 -> total_sequence_length
  past_key_values.key_cache.0
    shapes: absent, [2, 4, 5, 8], [2, 4, 6, 8], [2, 4, 7, 8], absent, [3, 4, 7, 8], [3, 4, 8, 8], [3, 4, 9, 8]
    dynamic: 0 -> batch_size, 2 -> past_sequence_length
  past_key_values.value_cache.0
    shapes: absent, [2, 4, 5, 8], [2, 4, 6, 8], [2, 4, 7, 8], absent, [3, 4, 7, 8], [3, 4, 8, 8], [3, 4, 9, 8]
    dynamic: 0 -> batch_size, 2 -> past_sequence_length
  pixel_values
    shapes: [2, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16], [3, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16]
    dynamic: 0 -> batch_size

Dimensions:
  batch_size: 2..3 (observed)
  sequence_length: 1..4096 (user bounds; observed 1..7), seen as 0 or 1
  total_sequence_length: 5..10 (observed)
  past_sequence_length: 5..9 (observed)

Relations:
  total_sequence_length = past_sequence_length + sequence_length (5 distinct observation(s); torch.export cannot express it)

Hints (hold in every call, too few observations or other constants fit as well):
  none

Constant keyword arguments:
  none

Filled by value_if_missing:
  pixel_values in call(s) 1, 2, 3, 5, 6, 7

Absent inputs (the fill each call's replay and the exported program get):
  past_key_values: absent from call(s) 0, 4; fill automatic, not checked (give check_fills or infer_export_spec a runner of the model)
  pixel_values: absent from call(s) 1, 2, 3, 5, 6, 7; fill value_if_missing (given), not checked (give check_fills or infer_export_spec a runner of the model)

Warnings:
  - dimension 'sequence_length' is 0 or 1 in 6 of 8 calls: torch.export specializes sizes 0 and 1 (with Dim.DYNAMIC it refuses to export), so export with infer_export_arguments(), where every dynamic dimension is at least 2
  - input 'token_type_ids' is absent from every call: it is not part of the export arguments
)");
}

TEST_CASE("the whole spec as JSON, loaded back by from_json") {
    Obs obs = observe_generation();
    const yobx::ExportSpec spec = obs.infer_export_spec(llm_options);
    CHECK(spec.to_json() == R"({"yobx_export_spec": 1, "num_calls": 8, "dynamic_shapes": {"dict": {"input_ids": {"dims": {"0": "batch_size", "1": "sequence_length"}}, "attention_mask": {"dims": {"0": "batch_size", "1": "total_sequence_length"}}, "past_key_values": [[{"dims": {"0": "batch_size", "2": "past_sequence_length"}}], [{"dims": {"0": "batch_size", "2": "past_sequence_length"}}]], "pixel_values": {"dims": {"0": "batch_size"}}}}, "derived_dims": true, "named_dims": false, "inputs": [{"name": "input_ids", "shapes": [[2, 5], [2, 1], [2, 1], [2, 1], [3, 7], [3, 1], [3, 1], [3, 1]], "dynamic": {"0": "batch_size", "1": "sequence_length"}}, {"name": "attention_mask", "shapes": [[2, 5], [2, 6], [2, 7], [2, 8], [3, 7], [3, 8], [3, 9], [3, 10]], "dynamic": {"0": "batch_size", "1": "total_sequence_length"}}, {"name": "past_key_values.key_cache.0", "shapes": [null, [2, 4, 5, 8], [2, 4, 6, 8], [2, 4, 7, 8], null, [3, 4, 7, 8], [3, 4, 8, 8], [3, 4, 9, 8]], "dynamic": {"0": "batch_size", "2": "past_sequence_length"}}, {"name": "past_key_values.value_cache.0", "shapes": [null, [2, 4, 5, 8], [2, 4, 6, 8], [2, 4, 7, 8], null, [3, 4, 7, 8], [3, 4, 8, 8], [3, 4, 9, 8]], "dynamic": {"0": "batch_size", "2": "past_sequence_length"}}, {"name": "pixel_values", "shapes": [[2, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16], [3, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16], [0, 3, 16, 16]], "dynamic": {"0": "batch_size"}}], "ranges": [{"label": "batch_size", "min": 2, "max": 3, "observed_min": 2, "observed_max": 3, "user_bounds": false, "zero_or_one": false}, {"label": "sequence_length", "min": 1, "max": 4096, "observed_min": 1, "observed_max": 7, "user_bounds": true, "zero_or_one": true}, {"label": "total_sequence_length", "min": 5, "max": 10, "observed_min": 5, "observed_max": 10, "user_bounds": false, "zero_or_one": false}, {"label": "past_sequence_length", "min": 5, "max": 9, "observed_min": 5, "observed_max": 9, "user_bounds": false, "zero_or_one": false}], "relations": [{"dim": "total_sequence_length", "kind": "sum", "base": "past_sequence_length", "other": "sequence_length", "constant": 0, "support": 5, "evidence": 5, "fits": 1, "text": "total_sequence_length = past_sequence_length + sequence_length"}], "hints": [], "constants": {}, "filled": {"pixel_values": [1, 2, 3, 5, 6, 7]}, "absent": [{"name": "past_key_values", "calls": [0, 4], "fill": "automatic", "user": false, "checked": false, "failing": [], "reasons": [], "tried": []}, {"name": "pixel_values", "calls": [1, 2, 3, 5, 6, 7], "fill": "value_if_missing", "user": true, "checked": false, "failing": [], "reasons": [], "tried": []}], "warnings": ["dimension 'sequence_length' is 0 or 1 in 6 of 8 calls: torch.export specializes sizes 0 and 1 (with Dim.DYNAMIC it refuses to export), so export with infer_export_arguments(), where every dynamic dimension is at least 2", "input 'token_type_ids' is absent from every call: it is not part of the export arguments"]})");
    const yobx::ExportSpec back = yobx::ExportSpec::from_json(spec.to_json());
    CHECK(back == spec);
    CHECK(back.to_python() == spec.to_python());
    CHECK(back.report() == spec.report());
    // named_dims comes back too; a spec written before it existed loads with Dim.DYNAMIC names.
    yobx::DynamicShapesOptions named = llm_options;
    named.named_dims = true;
    const yobx::ExportSpec named_spec = obs.infer_export_spec(named);
    const std::string named_json = named_spec.to_json();
    REQUIRE(named_json.find("\"named_dims\": true") != std::string::npos);
    const yobx::ExportSpec named_back = yobx::ExportSpec::from_json(named_json);
    CHECK(named_back == named_spec);
    CHECK(named_back.to_python().rfind("batch_size = torch.export.Dim('batch_size')\n", 0) == 0);
    std::string old_json = spec.to_json();
    old_json.erase(old_json.find(", \"named_dims\": false"), std::string(", \"named_dims\": false").size());
    CHECK(yobx::ExportSpec::from_json(old_json) == spec);
    // fits and absent came later too: without them, unique constants and no absent list.
    const auto erase = [](std::string& text, const std::string& from, const std::string& to) {
        const auto a = text.find(from);
        REQUIRE(a != std::string::npos);
        text.erase(a, text.find(to, a) - a);
    };
    erase(old_json, ", \"fits\": 1", ", \"text\"");
    erase(old_json, ", \"absent\": [", ", \"warnings\"");
    yobx::ExportSpec without_absent = spec;
    without_absent.absent.clear();
    CHECK(yobx::ExportSpec::from_json(old_json) == without_absent);
    std::string wrong = spec.to_json();
    wrong.replace(wrong.find("\"named_dims\": false"), std::string("\"named_dims\": false").size(), "\"named_dims\": 1");
    CHECK(error_of<yobx::value_error>([&] { (void)yobx::ExportSpec::from_json(wrong); }) ==
          "ExportSpec.from_json: $.named_dims: expected a boolean, got an integer");
}

TEST_CASE("a TensorRT optimization profile and ONNX dim_params with free-dimension overrides") {
    Obs obs = observe_generation();
    const yobx::ExportSpec spec = obs.infer_export_spec(llm_options);
    CHECK(spec.tensorrt_profile() == R"({"input_ids": {"min": [2, 1], "opt": [2, 1], "max": [3, 4096]}, "attention_mask": {"min": [2, 5], "opt": [2, 5], "max": [3, 10]}, "past_key_values.key_cache.0": {"min": [2, 4, 5, 8], "opt": [2, 4, 5, 8], "max": [3, 4, 9, 8]}, "past_key_values.value_cache.0": {"min": [2, 4, 5, 8], "opt": [2, 4, 5, 8], "max": [3, 4, 9, 8]}, "pixel_values": {"min": [0, 3, 16, 16], "opt": [0, 3, 16, 16], "max": [3, 3, 16, 16]}})");
    const std::string with_opt = spec.tensorrt_profile({{"input_ids", {4, 16}}});
    CHECK(with_opt.substr(0, 70) == R"({"input_ids": {"min": [2, 1], "opt": [4, 16], "max": [3, 4096]}, "atte)");
    CHECK(error_of<yobx::value_error>([&] { (void)spec.tensorrt_profile({{"ids", {4, 16}}}); }) ==
          "tensorrt_profile: opt names 'ids', which is not an input");
    CHECK(error_of<yobx::value_error>([&] { (void)spec.tensorrt_profile({{"input_ids", {4}}}); }) ==
          "tensorrt_profile: opt shape of 'input_ids' has rank 1, the input has rank 2");
    // A spec built by hand is checked before it is printed.
    yobx::ExportSpec broken = spec;
    broken.inputs[0].dims.push_back({5, "x"});
    CHECK(error_of<yobx::value_error>([&] { (void)broken.onnx_dims(); }) ==
          "ExportSpec: axis 5 of 'input_ids' is beyond the rank of its shapes");
    CHECK(spec.onnx_dims() == R"({"dim_params": {"input_ids": {"0": "batch_size", "1": "sequence_length"}, "attention_mask": {"0": "batch_size", "1": "total_sequence_length"}, "past_key_values.key_cache.0": {"0": "batch_size", "2": "past_sequence_length"}, "past_key_values.value_cache.0": {"0": "batch_size", "2": "past_sequence_length"}, "pixel_values": {"0": "batch_size"}}, "free_dimension_overrides": {"batch_size": 2, "sequence_length": 1, "total_sequence_length": 7, "past_sequence_length": 7}})");
}

TEST_CASE("from_json: each malformed spec gets a message naming where and what") {
    Obs obs = observe_generation();
    const std::string good = obs.infer_export_spec(llm_options).to_json();
    const auto message = [](const std::string& text) {
        return error_of<yobx::value_error>([&] { (void)yobx::ExportSpec::from_json(text); });
    };
    const auto replaced = [&](const std::string& from, const std::string& to) {
        std::string s = good;
        const auto at = s.find(from);
        REQUIRE(at != std::string::npos);
        return s.replace(at, from.size(), to);
    };
    CHECK(message("[]") == "ExportSpec.from_json: $: expected an object, got an array");
    CHECK(message("{\"yobx_export_spec\": 2}") == "ExportSpec.from_json: $.yobx_export_spec: unsupported version 2, expected 1");
    CHECK(message("{\"yobx_export_spec\": 1}") == "ExportSpec.from_json: $: missing member \"num_calls\"");
    CHECK(message("{\"yobx_export_spec\": 1, \"num_calls\": -1}") ==
          "ExportSpec.from_json: $.num_calls: expected a non-negative integer, got -1");
    CHECK(message(replaced("\"num_calls\": 8", "\"num_calls\": \"8\"")) ==
          "ExportSpec.from_json: $.num_calls: expected an integer, got a string");
    CHECK(message(replaced("{\"dict\": {\"input_ids\"", "{\"set\": {\"input_ids\"")) ==
          "ExportSpec.from_json: $.dynamic_shapes: unknown member \"set\", expected \"dims\", \"tuple\" or \"dict\"");
    CHECK(message(replaced("{\"dims\": {\"0\": \"batch_size\", \"1\": \"sequence_length\"}}",
                           "{\"dims\": {\"1\": \"batch_size\", \"0\": \"sequence_length\"}}")) ==
          "ExportSpec.from_json: $.dynamic_shapes.dict.input_ids.dims: axes must be increasing, got 0 after 1");
    CHECK(message(replaced("\"dynamic\": {\"0\": \"batch_size\", \"1\": \"sequence_length\"}",
                           "\"dynamic\": {\"x\": \"batch_size\"}")) ==
          "ExportSpec.from_json: $.inputs[0].dynamic: axis \"x\" is not a non-negative integer");
    CHECK(message(replaced("\"shapes\": [[2, 5]", "\"shapes\": [[2, 5.5]")) ==
          "ExportSpec.from_json: $.inputs[0].shapes[0][1]: expected an integer, got a number");
    CHECK(message(replaced("\"shapes\": [[2, 5], [2, 1]", "\"shapes\": [[2, 5], [2, 1, 1]")) ==
          "ExportSpec.from_json: $.inputs[0].shapes[1]: rank 3, the earlier shapes have rank 2");
    CHECK(message(replaced("\"dynamic\": {\"0\": \"batch_size\", \"1\": \"sequence_length\"}",
                           "\"dynamic\": {\"0\": \"batch_size\", \"2\": \"sequence_length\"}")) ==
          "ExportSpec.from_json: $.inputs[0].dynamic: axis 2 is beyond the rank 2 of the input's shapes");
    CHECK(message(replaced("\"min\": 1, \"max\": 4096", "\"min\": 5000, \"max\": 4096")) ==
          "ExportSpec.from_json: $.ranges[1]: min 5000 is greater than max 4096");
    CHECK(message(replaced("\"kind\": \"sum\"", "\"kind\": \"product\"")) ==
          "ExportSpec.from_json: $.relations[0].kind: unknown relation kind \"product\", expected offset, scale, "
          "floordiv or sum");
    CHECK(message(replaced("\"other\": \"sequence_length\"", "\"other\": \"\"")) ==
          "ExportSpec.from_json: $.relations[0]: a sum needs \"other\"");
    CHECK(message(replaced("\"warnings\": [\"", "\"warnings\": [3, \"")) ==
          "ExportSpec.from_json: $.warnings[0]: expected a string, got an integer");
    CHECK(message(replaced("\"fits\": 1", "\"fits\": -1")) ==
          "ExportSpec.from_json: $.relations[0].fits: expected a non-negative integer, got -1");
    CHECK(message(replaced("\"calls\": [0, 4]", "\"calls\": [0, -4]")) ==
          "ExportSpec.from_json: $.absent[0].calls: expected a non-negative integer, got -4");
    CHECK(message(replaced("\"failing\": [], \"reasons\": []", "\"failing\": [1], \"reasons\": []")) ==
          "ExportSpec.from_json: $.absent[0].reasons: 0 reason(s) for 1 failing call(s)");
    CHECK(message(replaced("\"reasons\": []", "\"reasons\": [2]")) ==
          "ExportSpec.from_json: $.absent[0].reasons[0]: expected a string, got an integer");
    CHECK(message(replaced("\"fill\": \"automatic\"", "\"fill\": 0")) ==
          "ExportSpec.from_json: $.absent[0].fill: expected a string, got an integer");
    CHECK(message(good + "x") == "ExportSpec.from_json: malformed JSON at offset " + std::to_string(good.size()) +
                                     ": unexpected trailing character 'x'");
}

TEST_CASE("warnings: an explicitly named axis that never varied, an input absent from every call") {
    Obs obs;
    auto forward = obs.wrap([](const T& x, const T&) { return x; },
                            yobx::Signature{param("x"), param("y"), param("unused", yobx::none)});
    for (std::int64_t n : {3, 8, 20}) forward(tensor({n, 4}), tensor({n, 4}));
    const auto spec = obs.infer_export_spec({.dim_names = {{"x", {{0, "batch"}}}, {"y", {{0, "batch"}, {1, "batch"}}}}});
    CHECK(spec.warnings == std::vector<std::string>{
                               "y axis 1 is named 'batch' but was 4 in every call, while 'batch' is dynamic elsewhere: "
                               "torch.export will treat it as a constant",
                               "input 'unused' is absent from every call: it is not part of the export arguments"});
    CHECK(spec.relations.empty());
    CHECK(spec.ranges == std::vector<yobx::DimRange>{{"batch", 3, 20, 3, 20, false, false}});
}

TEST_CASE("constant keyword arguments show in the spec as Python literals") {
    Obs obs;
    auto forward = obs.wrap([](yobx::Args<T> args, yobx::Kwargs<T>) { return args[0].tensor(); },
                            yobx::Signature{param("x"), yobx::kw_only("use_cache", false), yobx::kw_only("mode", "a")});
    for (std::int64_t n : {3, 8}) forward({V(tensor({n, 4}))}, {{"use_cache", V(true)}, {"mode", V("b")}});
    const auto spec = obs.infer_export_spec();
    CHECK(spec.constants.size() == 2);
    CHECK(spec.constants.find("use_cache")->second == "True");
    CHECK(spec.constants.find("mode")->second == "'b'");
    const std::string report = spec.report();
    CHECK(report.find("Constant keyword arguments:\n  use_cache = True\n  mode = 'b'\n") != std::string::npos);
    CHECK(yobx::ExportSpec::from_json(spec.to_json()) == spec);
}
