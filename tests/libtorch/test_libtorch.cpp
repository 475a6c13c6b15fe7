// The LibTorch adapter: at::Tensor as a yobx tensor, IValue conversions,
// signatures from schemas, observed TorchScript and nn modules, the KV cache,
// kernel patches, and the demo model's observed shapes.
#include "../error_of.hpp"
#include "tiny_llm.hpp"

#include <yobx/adapters/libtorch.hpp>

#include <doctest/doctest.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

using test::error_of;
using yobx::libtorch::CustomNodes;
using yobx::libtorch::from_ivalue;
using yobx::libtorch::to_ivalue;
using TV = yobx::Value<at::Tensor>;

namespace {

std::vector<std::int64_t> shape(const at::Tensor& t) { return t.sizes().vec(); }

// A TorchScript module with optional arguments and a default.
torch::jit::Module optional_module() {
    torch::jit::Module m("OptionalModel");
    m.define(R"(
def forward(self, x, mask: Optional[Tensor] = None, scale: float = 1.0):
    y = x * scale
    if mask is not None:
        y = y + mask
    return y
)");
    return m;
}

// A TorchScript module taking a list, a dict and a flag.
torch::jit::Module container_module() {
    torch::jit::Module m("ContainerModel");
    m.define(R"(
def forward(self, x, items: List[Tensor], extra: Dict[str, Tensor], flag: bool = False):
    y = x
    for t in items:
        y = y + t
    for k in extra.keys():
        y = y + extra[k]
    if flag:
        y = y * 2.0
    return (y, items[0])
)");
    return m;
}

}  // namespace

TEST_CASE("at::Tensor is a yobx tensor: shape, dtype, detached deep clone, empty and zeros like a tensor") {
    static_assert(yobx::Tensor<at::Tensor>);
    at::Tensor t = at::ones({2, 3}, at::kFloat).requires_grad_(true);
    CHECK(yobx::shape_of(t) == std::vector<std::int64_t>{2, 3});
    CHECK((yobx::dtype_of(t) == yobx::libtorch::DType{at::kFloat}));
    CHECK(yobx::dtype_of(t).name() == "float32");
    CHECK(yobx::libtorch::DType{at::kLong}.name() == "int64");
    CHECK(yobx::libtorch::DType{at::kBool}.name() == "bool");
    CHECK(yobx::libtorch::DType{at::kQInt8}.name() == "QInt8");  // no Python-style name: c10's

    at::Tensor c = yobx::clone(t);
    CHECK_FALSE(c.requires_grad());
    CHECK(c.data_ptr() != t.data_ptr());
    {
        torch::NoGradGuard no_grad;
        t.fill_(5);
    }
    CHECK(c.sum().item<double>() == 6.0);

    const at::Tensor like = at::ones({1}, at::kLong);
    const at::Tensor e = yobx::tensor_traits<at::Tensor>::empty({0, 4}, like);
    CHECK(shape(e) == std::vector<std::int64_t>{0, 4});
    CHECK((e.scalar_type() == at::kLong));
    const at::Tensor z = yobx::tensor_traits<at::Tensor>::zeros({2, 2}, t);
    CHECK((z.scalar_type() == at::kFloat));
    CHECK_FALSE(z.requires_grad());
    CHECK(z.sum().item<double>() == 0.0);
    CHECK(yobx::tensor_traits<at::Tensor>::to_doubles(at::arange(4, at::kInt).view({2, 2}).t()) ==
          std::vector<double>{0, 2, 1, 3});

    const TV v(at::zeros({2, 3}, at::kHalf));
    CHECK(v.repr() == "Tensor(shape=[2, 3], dtype=float16)");
}

TEST_CASE("IValue <-> Value round-trips every kind") {
    const at::Tensor a = at::ones({2}), b = at::zeros({3}, at::kLong);
    SUBCASE("scalars") {
        CHECK(from_ivalue(c10::IValue()).is_none());
        CHECK(from_ivalue(c10::IValue(true)).as_bool() == true);
        CHECK(from_ivalue(c10::IValue(std::int64_t{7})).as_int() == 7);
        CHECK(from_ivalue(c10::IValue(0.5)).as_double() == 0.5);
        CHECK(from_ivalue(c10::IValue("text")).as_string() == "text");
        CHECK(to_ivalue(TV()).isNone());
        CHECK(to_ivalue(TV(false)).toBool() == false);
        CHECK(to_ivalue(TV(3)).toInt() == 3);
        CHECK(to_ivalue(TV(1.5)).toDouble() == 1.5);
        CHECK(to_ivalue(TV("s")).toStringRef() == "s");
    }
    SUBCASE("tensors: the same tensor both ways, an undefined one is None") {
        CHECK(from_ivalue(c10::IValue(a)).tensor().is_same(a));
        CHECK(to_ivalue(TV(a)).toTensor().is_same(a));
        CHECK(from_ivalue(c10::IValue(at::Tensor())).is_none());
    }
    SUBCASE("containers, nested, with the element types TorchScript declares") {
        const TV v = TV::dict({{"x", a},
                               {"pair", TV::tuple({b, 2})},
                               {"list", TV::list({a, b})},
                               {"nested", TV::list({TV::list({1, 2}), TV::list({})})},
                               {"flags", TV::dict({{"on", true}})}});
        const c10::IValue iv = to_ivalue(v);
        CHECK(iv.type()->str() == "Dict(str, Any)");
        const auto d = iv.toGenericDict();
        CHECK(d.at("list").type()->str() == "Tensor[]");
        CHECK(d.at("nested").type()->str() == "Any[]");  // int[] and an empty list: no common element type
        CHECK(d.at("nested").toListRef()[0].type()->str() == "int[]");
        CHECK(d.at("flags").type()->str() == "Dict(str, bool)");
        CHECK(d.at("pair").isTuple());
        const TV back = from_ivalue(iv);
        CHECK(back.repr() == "{'x': Tensor(shape=[2], dtype=float32), 'pair': (Tensor(shape=[3], dtype=int64), 2), "
                             "'list': [Tensor(shape=[2], dtype=float32), Tensor(shape=[3], dtype=int64)], "
                             "'nested': [[1, 2], []], 'flags': {'on': True}}");
        CHECK(back["list"][1].tensor().is_same(b));
        CHECK(to_ivalue(TV::list({TV::tuple({a, 1}), TV::tuple({b, 2})})).type()->str() == "(Tensor, int)[]");
    }
    SUBCASE("a registered node: refused by default, or written as the list of its children") {
        yobx::libtorch::KVCache cache{{a}, {b}};
        const TV v = yobx::to_value<at::Tensor>(cache);
        CHECK(v.repr() == "DynamicCache(key_cache=[Tensor(shape=[2], dtype=float32)], "
                          "value_cache=[Tensor(shape=[3], dtype=int64)])");
        CHECK(error_of<yobx::type_error>([&] { (void)to_ivalue(v); }) ==
              "to_ivalue: DynamicCache is a registered node, which has no IValue form; pass CustomNodes::as_lists "
              "to write it as the list of its children");
        const c10::IValue iv = to_ivalue(v, CustomNodes::as_lists);
        CHECK(iv.type()->str() == "Tensor[][]");
        CHECK(from_ivalue(iv).repr() == "[[Tensor(shape=[2], dtype=float32)], [Tensor(shape=[3], dtype=int64)]]");
    }
    SUBCASE("an IValue is a pytree: flattened through its Value form") {
        const c10::IValue iv = to_ivalue(TV::tuple({a, TV::list({b, 3})}));
        const auto [leaves, spec] = yobx::tree_flatten<at::Tensor>(iv);
        REQUIRE(leaves.size() == 2);
        CHECK(leaves[1].is_same(b));
        CHECK(spec.to_string() == "TreeSpec(tuple, None, [*, TreeSpec(list, None, [*, 3])])");
        const auto back = yobx::tree_unflatten<c10::IValue>(std::vector<at::Tensor>{b, a}, spec);
        CHECK(back.toTupleRef().elements()[0].toTensor().is_same(b));
        CHECK(back.toTupleRef().elements()[1].type()->str() == "Any[]");
    }
    SUBCASE("what has no Value form names its tag") {
        CHECK(error_of<yobx::type_error>([] { (void)from_ivalue(c10::IValue(c10::Device("cpu"))); }) ==
              "from_ivalue: cannot convert an IValue with tag Device to a yobx::Value (supported: None, Bool, Int, "
              "Double, String, Tensor, List, Tuple, GenericDict with str keys)");
        c10::impl::GenericDict d(c10::IntType::get(), c10::TensorType::get());
        d.insert(std::int64_t{1}, a);
        CHECK(error_of<yobx::type_error>([&] { (void)from_ivalue(c10::IValue(d)); }) ==
              "from_ivalue: a dict key is an IValue with tag Int; yobx::Value dicts have str keys");
        CHECK(error_of<yobx::type_error>([] { (void)from_ivalue(c10::IValue(c10::complex<double>(1, 2))); }) ==
              "from_ivalue: cannot convert an IValue with tag ComplexDouble to a yobx::Value (supported: None, Bool, "
              "Int, Double, String, Tensor, List, Tuple, GenericDict with str keys)");
    }
}

TEST_CASE("pickle_value writes what torch.load's weights_only reads: no torch.jit._pickle global, tensors as torch.save") {
    yobx::libtorch::KVCache cache;
    cache.update(at::ones({1, 2, 3, 4}), at::zeros({1, 2, 3, 4}), 0);
    const TV v = TV::dict({{"x", TV(at::arange(6, at::kLong).view({2, 3}))},
                           {"items", TV::list({TV(at::ones({2})), TV(std::int64_t{3}), TV()})},
                           {"pair", TV::tuple({TV(true), TV(std::string("s"))})},
                           {"cache", yobx::to_value<at::Tensor>(cache)}});
    const std::vector<char> bytes = yobx::libtorch::pickle_value(v);
    const std::string text(bytes.begin(), bytes.end());
    CHECK(text.find("torch.jit._pickle") == std::string::npos);
    CHECK(text.find("_rebuild_tensor_v2") != std::string::npos);
    CHECK(text.find("data.pkl") != std::string::npos);
    // torch::pickle_save, which save_value used before, tags the same lists and dicts.
    const std::vector<char> tagged = torch::jit::pickle_save(to_ivalue(v, CustomNodes::as_lists));
    CHECK(std::string(tagged.begin(), tagged.end()).find("restore_type_tag") != std::string::npos);
    // LibTorch reads it back: the cache as the list of its children.
    CHECK(from_ivalue(torch::jit::pickle_load(bytes)).repr() ==
          "{'x': Tensor(shape=[2, 3], dtype=int64), 'items': [Tensor(shape=[2], dtype=float32), 3, None], "
          "'pair': (True, 's'), 'cache': [[Tensor(shape=[1, 2, 3, 4], dtype=float32)], "
          "[Tensor(shape=[1, 2, 3, 4], dtype=float32)]]}");
    CHECK(from_ivalue(torch::jit::pickle_load(bytes))["x"].tensor().equal(at::arange(6, at::kLong).view({2, 3})));
    CHECK(error_of<yobx::runtime_error>([&] { yobx::libtorch::save_value(v, "/nonexistent/dir/args.pt"); }) ==
          "save_value: cannot open '/nonexistent/dir/args.pt' for writing");
}

TEST_CASE("a Signature from a FunctionSchema: names, defaults, keyword-only, self skipped") {
    const auto schema = torch::jit::parseSchema(
        "f(Tensor x, Tensor? mask=None, int n=3, float eps=0.5, bool flag=True, str mode='mean', *, int k=1) -> Tensor");
    const yobx::Signature s = yobx::libtorch::signature_from_schema(schema);
    CHECK(s.to_string() == "(x, mask=None, n=3, eps=0.5, flag=True, mode='mean', *, k=1)");
    CHECK(s[6].kind == yobx::ParamKind::keyword_only);

    CHECK(yobx::libtorch::signature_of(optional_module()).to_string() == "(x, mask=None, scale=1.0)");
    CHECK(yobx::libtorch::signature_of(container_module()).to_string() == "(x, items, extra, flag=False)");
    CHECK(error_of<yobx::value_error>([] { (void)yobx::libtorch::signature_of(optional_module(), "generate"); }) ==
          "signature_of: the module has no method 'generate'");
    CHECK(error_of<yobx::not_implemented_error>([] {
              (void)yobx::libtorch::signature_from_schema(torch::jit::parseSchema("g(Tensor x, int[] dims=[1, 2]) -> Tensor"));
          }) == "signature_from_schema: parameter 'dims' of g has a default of tag GenericList; a yobx::Signature "
                "default is None, bool, int, float or str");
}

TEST_CASE("a TorchScript module with an optional argument absent in some calls: dynamic shapes and arguments") {
    yobx::InputObserver<at::Tensor> observer;
    torch::jit::Module m = optional_module();
    auto forward = yobx::libtorch::wrap_forward(observer, m);
    const c10::IValue y1 = forward({at::ones({2, 3})});
    CHECK(shape(y1.toTensor()) == std::vector<std::int64_t>{2, 3});
    forward({at::ones({3, 3}), at::ones({3, 3})});
    forward({at::ones({4, 3})}, {{"mask", at::ones({4, 3})}});
    forward({at::ones({5, 3})});  // beyond store_n_calls: not recorded
    CHECK(observer.num_obs() == 3);

    CHECK(observer.infer_dynamic_shapes().to_python() ==
          "({0: torch.export.Dim.DYNAMIC}, {0: torch.export.Dim.DYNAMIC})");
    CHECK(observer.infer_dynamic_shapes({.dim_names = true}).to_python_strings() == "({0: 'x_dim_0'}, {0: 'x_dim_0'})");
    CHECK(observer.infer_arguments().repr() ==
          "(Tensor(shape=[3, 3], dtype=float32), Tensor(shape=[3, 3], dtype=float32))");
    // The first call had no mask: the mask's only dynamic axis has x's size (x_dim_0), 2 in that call,
    // so it is zeros of [2, 3], which the model can add to x.
    CHECK(observer.infer_arguments(std::size_t{0}).repr() ==
          "(Tensor(shape=[2, 3], dtype=float32), Tensor(shape=[2, 3], dtype=float32))");
    CHECK(observer.infer_arguments(std::size_t{0})[1].tensor().equal(at::zeros({2, 3})));

    // Each call replayed as it was made runs the module again; its outputs match the recorded ones.
    const auto discrepancies = observer.check_discrepancies(yobx::libtorch::method_runner(m));
    REQUIRE(discrepancies.size() == 3);
    for (const auto& d : discrepancies) {
        CHECK(d.success);
        CHECK(d.abs == 0.0);
    }
}

TEST_CASE("check_discrepancies replays a TorchScript call as made: an absent Optional[Tensor] is None") {
    // The mask must have x's length, as an encoder's padding mask must: a filled mask of another length fails.
    torch::jit::Module m("MaskedModel");
    m.define(R"(
def forward(self, x, mask: Optional[Tensor] = None):
    if mask is not None:
        assert mask.size(0) == x.size(0), "Mask size should match input size"
        return x * mask
    return x * 2.0
)");
    yobx::InputObserver<at::Tensor> observer;
    auto forward = yobx::libtorch::wrap_forward(observer, m);
    forward({at::ones({2})}, {{"mask", at::ones({2})}});
    forward({at::ones({3})});
    forward({at::ones({4})});
    // The runner calls the module with what it is given: positional IValues, keywords by name.
    const auto runner = yobx::libtorch::method_runner(m);
    CHECK(error_of<yobx::value_error>([&] { (void)yobx::libtorch::method_runner(m, "generate"); }) ==
          "method_runner: the module has no method 'generate'");
    const auto observed = observer.check_discrepancies(runner);
    REQUIRE(observed.size() == 3);
    for (const auto& d : observed) {
        CHECK(d.success);
        CHECK(d.abs == 0.0);
        CHECK(d.filled.empty());
    }
    // The inferred arguments fill the mask with zeros of its only observed shape, [2]: the model refuses it.
    const auto inferred = observer.check_discrepancies(runner, 1e-4, 0.1, yobx::Replay::inferred);
    CHECK(inferred[0].success);
    CHECK(inferred[1].filled == std::vector<std::string>{"mask"});
    CHECK_FALSE(inferred[1].success);
    CHECK(inferred[1].error.find("Mask size should match input size") != std::string::npos);
}

TEST_CASE("wrap_method observes a method other than forward, as scripted nn.LSTM has (forward__0)") {
    torch::jit::Module m("TwoMethods");
    m.define(R"(
def forward__0(self, x, h: Optional[Tensor] = None):
    if h is None:
        return x + 1.0
    return x + h

def forward(self, x):
    return x
)");
    yobx::InputObserver<at::Tensor> observer;
    auto call = yobx::libtorch::wrap_method(observer, m, "forward__0");
    CHECK(call({at::ones({2, 3})}).toTensor().sum().item<double>() == 12.0);
    call({at::ones({4, 3}), at::ones({4, 3})});
    call({at::ones({5, 3}), at::ones({5, 3})});
    CHECK(observer.num_obs() == 3);
    CHECK(observer.info().signature().to_string() == "(x, h=None)");
    CHECK(observer.infer_dynamic_shapes().to_python() == "({0: torch.export.Dim.DYNAMIC}, {0: torch.export.Dim.DYNAMIC})");
    CHECK(error_of<yobx::value_error>([&] { (void)yobx::libtorch::wrap_method(observer, m, "forward__1"); }) ==
          "signature_of: the module has no method 'forward__1'");
}

TEST_CASE("wrap_forward returns forward's IValue as is, only a recorded call converts it") {
    torch::jit::Module m("DeviceModel");
    m.define("def forward(self, x):\n    return x.device\n");
    yobx::InputObserver<at::Tensor> observer;
    auto recording = yobx::libtorch::wrap_forward(observer, m, 1);
    CHECK(error_of<yobx::type_error>([&] { recording({at::ones({2})}); }) ==
          "from_ivalue: cannot convert an IValue with tag Device to a yobx::Value (supported: None, Bool, Int, "
          "Double, String, Tensor, List, Tuple, GenericDict with str keys)");
    CHECK(observer.num_obs() == 0);
    auto passing = yobx::libtorch::wrap_forward(observer, m, 0);
    CHECK(passing({at::ones({2})}).toDevice() == c10::Device("cpu"));
}

TEST_CASE("a TorchScript module with list, dict and constant arguments") {
    yobx::InputObserver<at::Tensor> observer;
    auto forward = yobx::libtorch::wrap_forward(observer, container_module());
    for (std::int64_t n : {2, 3, 4}) {
        const c10::List<at::Tensor> items({at::ones({n, 2}), at::ones({n, 2})});
        c10::Dict<std::string, at::Tensor> extra;
        extra.insert("bias", at::ones({n, 2}));
        const c10::IValue out = forward({at::ones({n, 2}), items, extra}, {{"flag", true}});
        CHECK(out.toTupleRef().elements()[0].toTensor().sum().item<double>() == 16.0 * static_cast<double>(n));
    }
    CHECK(observer.infer_dynamic_shapes({.dim_names = true}).to_python_strings() ==
          "{'x': {0: 'x_dim_0'}, 'items': [{0: 'x_dim_0'}, {0: 'x_dim_0'}], 'extra': {'bias': {0: 'x_dim_0'}}, "
          "'flag': None}");
    CHECK(observer.infer_arguments().repr() ==
          "{'x': Tensor(shape=[2, 2], dtype=float32), 'items': [Tensor(shape=[2, 2], dtype=float32), "
          "Tensor(shape=[2, 2], dtype=float32)], 'extra': {'bias': Tensor(shape=[2, 2], dtype=float32)}, 'flag': True}");
    CHECK(observer.info().flat_outputs().size() == 3);
}

TEST_CASE("KVCache: update appends along the sequence, registered as DynamicCache") {
    yobx::libtorch::KVCache cache;
    CHECK(cache.get_seq_length() == 0);
    cache.update(at::zeros({1, 2, 3, 4}), at::zeros({1, 2, 3, 4}), 0);
    auto [k, v] = cache.update(at::ones({1, 2, 1, 4}), at::ones({1, 2, 1, 4}), 0);
    CHECK(shape(k) == std::vector<std::int64_t>{1, 2, 4, 4});
    CHECK(v.sum().item<double>() == 8.0);
    CHECK(cache.get_seq_length() == 4);
    CHECK(cache.num_layers() == 1);
    CHECK(error_of<yobx::value_error>([&] { cache.update(at::zeros({1, 2, 1, 4}), at::zeros({1, 2, 1, 4}), 2); }) ==
          "KVCache::update: layer 2 comes before layer 1 was cached");
    CHECK(error_of<yobx::value_error>([&] { cache.update(at::zeros({2, 4}), at::zeros({1, 2, 1, 4}), 0); }) ==
          "KVCache::update: key and value must be 4-D [batch, heads, sequence, head_dim], got 2-D and 4-D");

    const auto paths = yobx::tree_flatten_with_path<at::Tensor>(cache).first;  // (key path, tensor) pairs
    REQUIRE(paths.size() == 2);
    CHECK(yobx::keystr(paths[0].first) == ".key_cache[0]");
    CHECK(yobx::keystr(paths[1].first) == ".value_cache[0]");
}

namespace {
std::atomic<int> kernel_calls{0};
}  // namespace

YOBX_PATCH_SOURCE(relu_as_doubled_abs,
at::Tensor relu_as_doubled_abs(const at::Tensor& self) {
    ++kernel_calls;
    return self.abs() * 2;
}
) YOBX_PATCH_SOURCE_END

TEST_CASE("kernel_patch overrides an aten kernel for one dispatch key inside a PatchGuard") {
    const at::Tensor x = torch::tensor({-1.0, 2.0});
    yobx::PatchDetails details;
    details.append(yobx::libtorch::kernel_patch("aten::relu", c10::DispatchKey::CPU, &relu_as_doubled_abs));
    const yobx::PatchInfo& p = details[0];
    CHECK(p.name() == "relu_as_doubled_abs");
    CHECK(p.original_name() == "aten::relu[CPU]");
    CHECK(p.family() == "libtorch");
    kernel_calls = 0;
    {
        yobx::PatchGuard guard(details);
        CHECK(p.is_applied());
        CHECK(at::relu(x).equal(torch::tensor({2.0, 4.0})));
        CHECK(kernel_calls == 1);
    }
    CHECK_FALSE(p.is_applied());
    CHECK(at::relu(x).equal(torch::tensor({0.0, 2.0})));  // the original kernel is back
    CHECK(kernel_calls == 1);
    CHECK(p.make_diff() ==
          "--- original\n+++ rewritten\n@@ -1 +1,4 @@\n"
          "-// the source of aten::relu[CPU] is not available: it is not defined inside YOBX_PATCH_SOURCE\n"
          "+at::Tensor relu_as_doubled_abs(const at::Tensor& self) {\n+    ++kernel_calls;\n"
          "+    return self.abs() * 2;\n+}\n");

    // A traced graph whose node was created inside the kernel: the report names the patch and the node.
    struct Node {
        std::string name;
        std::map<std::string, std::string> meta;
    };
    struct Graph {
        std::vector<Node> nodes;
    };
    const yobx::SourceText src = relu_as_doubled_abs_source();
    const std::string frame = "File \"" + std::string(src.file) + "\", line " + std::to_string(src.first_line + 2) +
                              ", in relu_as_doubled_abs";
    const Graph g{{{"abs", {{"stack_trace", frame}}}, {"mul", {{"stack_trace", "File \"model.py\", line 3, in f"}}}}};
    CHECK(details.make_report(g) == "1 patch(es) involved in the graph.\n\n" + p.format_diff("raw") +
                                        "nodes created inside relu_as_doubled_abs (1):\n  abs: " + frame + "\n");
    CHECK(p.format_diff("raw").rfind("libtorch: aten::relu[CPU] -> relu_as_doubled_abs\n", 0) == 0);

    SUBCASE("the dispatcher's override warning is dropped while a patch registers, other warnings pass") {
        struct Capture : c10::WarningHandler {
            std::vector<std::string> messages;
#if TORCH_VERSION_MAJOR >= 2
            void process(const c10::Warning& w) override { messages.push_back(w.msg()); }
#else
            void process(const c10::SourceLocation&, const std::string& msg, const bool) override { messages.push_back(msg); }
#endif
        } capture;
        yobx::libtorch::detail::WarningHandlerGuard guard(&capture);
        yobx::libtorch::detail::OverrideWarningFilter filter(&capture);
        const c10::SourceLocation here{"f", "file.cpp", 1};
        const auto warn = [&](const std::string& msg) {
#if TORCH_VERSION_MAJOR >= 2
            filter.process(c10::Warning(c10::UserWarning(), here, msg, false));
#else
            filter.process(here, msg, false);
#endif
        };
        // LibTorch 1.x's text, then 2.x's warn-once text (the dispatcher's own words, two spaces included).
        warn("Overriding a previously registered kernel for the same operator and the same dispatch key\n");
        warn("Warning only once for all operators,  other operators may also be overridden.\n"
             "  Overriding a previously registered kernel for the same operator and the same dispatch key\n");
        warn("another warning");
        warn("a warning that quotes Overriding a previously registered kernel");
        CHECK(capture.messages ==
              std::vector<std::string>{"another warning", "a warning that quotes Overriding a previously registered kernel"});
        capture.messages.clear();
#if TORCH_VERSION_MAJOR < 2
        // Without the filter LibTorch 1.x's dispatcher warns at every override: the filter is what keeps
        // applying quiet. (2.x warns once per process, and this test's first apply was that once.)
        auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
        lib->impl("relu", &relu_as_doubled_abs);
        lib.reset();
        REQUIRE(capture.messages.size() == 1);
        CHECK(capture.messages[0].rfind("Overriding a previously registered kernel", 0) == 0);
        capture.messages.clear();
#endif
        yobx::PatchInfo copy = p;  // the same patch
        copy.apply();
        copy.undo();
        CHECK(capture.messages.empty());
    }
    SUBCASE("override_kernel: one kernel, one guard") {
        {
            auto guard = yobx::libtorch::override_kernel("aten::relu", c10::DispatchKey::CPU, &relu_as_doubled_abs);
            CHECK(guard.details()[0].name() == "relu_as_doubled_abs");
            CHECK(at::relu(x).equal(torch::tensor({2.0, 4.0})));
        }
        CHECK(at::relu(x).equal(torch::tensor({0.0, 2.0})));
    }
    SUBCASE("a stateful lambda, another overload, applied twice in turn") {
        int calls = 0;
        yobx::PatchInfo add = yobx::libtorch::kernel_patch(
            "aten::add.Tensor", c10::DispatchKey::CPU,
            [&calls](const at::Tensor& a, const at::Tensor&, const at::Scalar&) {
                ++calls;
                return a.clone();
            },
            "add_returns_first");
        CHECK(add.name() == "add_returns_first");
        for (int round = 0; round < 2; ++round) {
            add.apply();
            CHECK(at::add(x, x).equal(x));
            add.undo();
            CHECK(at::add(x, x).equal(x * 2));
        }
        CHECK(calls == 2);
    }
    SUBCASE("errors: a malformed name, an unknown operator, a kernel of another signature") {
        CHECK(error_of<yobx::value_error>([] {
                  (void)yobx::libtorch::kernel_patch("relu", c10::DispatchKey::CPU, &relu_as_doubled_abs);
              }) == "kernel_patch: 'relu' is not an operator name (namespace::name[.overload])");
        CHECK(error_of<yobx::value_error>([] {
                  (void)yobx::libtorch::kernel_patch("aten::no_such_op", c10::DispatchKey::CPU, &relu_as_doubled_abs);
              }) == "kernel_patch: no operator 'aten::no_such_op' is registered with the dispatcher");
        yobx::PatchInfo wrong = yobx::libtorch::kernel_patch(
            "aten::relu", c10::DispatchKey::CPU, [](const at::Tensor& a, std::int64_t) { return a; }, "wrong");
        const std::string message = error_of<yobx::type_error>([&] { wrong.apply(); });
        CHECK(message.rfind("kernel_patch(aten::relu): the dispatcher refused the kernel: ", 0) == 0);
        CHECK(message.find("\nMismatch in kernel C++ signatures\n  operator: aten::relu(Tensor self) -> Tensor\n") !=
              std::string::npos);
        CHECK(message.find("  kernel 2: at::Tensor (at::Tensor const&, long)\n    dispatch key: CPU\n"
                           "    registered at " __FILE__ ":") != std::string::npos);  // where kernel_patch was called
        CHECK_FALSE(wrong.is_applied());
        CHECK(at::relu(x).equal(torch::tensor({0.0, 2.0})));
    }
}


YOBX_PATCH_SOURCE(relu_inplace_as_doubled_abs,
at::Tensor& relu_inplace_as_doubled_abs(at::Tensor& self) {
    ++kernel_calls;
    return self.abs_().mul_(2);
}
) YOBX_PATCH_SOURCE_END

TEST_CASE("a scripted model calls in-place kernels: list the operators it calls and patch the one it calls") {
    torch::jit::Module block("Block");
    block.define("def forward(self, x):\n    y = x * 2.0\n    return torch.relu_(y)\n");
    torch::jit::Module model("Model");
    model.register_module("block", block);
    model.define("def forward(self, x):\n    y = self.block.forward(x)\n    if bool(y.sum() > 0.0):\n        y.add_(1.0)\n    return y\n");
    const std::vector<std::string> ops = yobx::libtorch::called_operators(model);
    CHECK(ops == std::vector<std::string>{"aten::mul", "aten::relu_", "aten::sum", "aten::gt", "aten::Bool", "aten::add_"});
    CHECK(error_of<yobx::value_error>([&] { (void)yobx::libtorch::called_operators(model, "generate"); }) ==
          "called_operators: the module has no method 'generate'");

    const at::Tensor x = torch::tensor({-1.0, 2.0});
    kernel_calls = 0;
    {
        // aten::relu is not what the model calls: its override never runs.
        auto guard = yobx::libtorch::override_kernel("aten::relu", c10::DispatchKey::CPU, &relu_as_doubled_abs);
        CHECK(model.forward({x}).toTensor().equal(torch::tensor({1.0, 5.0})));
        CHECK(kernel_calls == 0);
    }
    {
        auto guard = yobx::libtorch::override_kernel("aten::relu_", c10::DispatchKey::CPU, &relu_inplace_as_doubled_abs);
        CHECK(model.forward({x}).toTensor().equal(torch::tensor({5.0, 9.0})));
        CHECK(kernel_calls == 1);
    }
}

TEST_CASE("the demo's model observed through wrap while it generates: exact arguments and dynamic shapes") {
    tiny_llm::TinyLLM model = tiny_llm::make_model();
    CHECK(tiny_llm::forward_signature().to_string() ==
          "(input_ids, attention_mask=None, position_ids=None, past_key_values=None)");
    yobx::InputObserver<at::Tensor> observer;
    const auto call_model = [&](const at::Tensor& ids, const tiny_llm::ForwardKwargs& kw) { return model->forward(ids, kw); };
    auto forward = observer.wrap(call_model, tiny_llm::forward_signature(), 6);
    const at::Tensor t1 = tiny_llm::generate(forward, tiny_llm::make_prompt(2, 5, 64, 1), 3);
    const at::Tensor t2 = tiny_llm::generate(forward, tiny_llm::make_prompt(3, 7, 64, 2), 3);
    CHECK(shape(t1) == std::vector<std::int64_t>{2, 3});
    CHECK(shape(t2) == std::vector<std::int64_t>{3, 3});
    CHECK(observer.num_obs() == 6);

    // Recording does not change what the model computes.
    const at::Tensor again = tiny_llm::generate(call_model, tiny_llm::make_prompt(2, 5, 64, 1), 3);
    CHECK(again.equal(t1));

    const auto& info = observer.info();
    std::vector<std::size_t> tensors_per_call;  // prefill: 3 (no cache); decode: 3 + 2 layers x (key, value)
    for (const auto& c : info.inputs()) tensors_per_call.push_back(c.size());
    CHECK(tensors_per_call == std::vector<std::size_t>{3, 7, 7, 3, 7, 7});

    CHECK(observer.infer_dynamic_shapes({.set_batch_dimension_for = true, .dim_names = true}).to_python_strings() ==
          "{'input_ids': {0: 'batch_size', 1: 'sequence_length'}, "
          "'attention_mask': {0: 'batch_size', 1: 'total_sequence_length'}, "
          "'position_ids': {0: 'batch_size', 1: 'sequence_length'}, "
          "'past_key_values': [[{0: 'batch_size', 2: 'past_sequence_length'}, {0: 'batch_size', 2: 'past_sequence_length'}], "
          "[{0: 'batch_size', 2: 'past_sequence_length'}, {0: 'batch_size', 2: 'past_sequence_length'}]]}");
    CHECK(observer.infer_arguments().repr() ==
          "{'input_ids': Tensor(shape=[2, 1], dtype=int64), 'attention_mask': Tensor(shape=[2, 6], dtype=int64), "
          "'position_ids': Tensor(shape=[2, 1], dtype=int64), 'past_key_values': DynamicCache(key_cache=["
          "Tensor(shape=[2, 4, 5, 8], dtype=float32), Tensor(shape=[2, 4, 5, 8], dtype=float32)], value_cache=["
          "Tensor(shape=[2, 4, 5, 8], dtype=float32), Tensor(shape=[2, 4, 5, 8], dtype=float32)])}");
    // The prefill call had no cache: each cache tensor is empty along past_sequence_length.
    CHECK(observer.infer_arguments(std::size_t{3}).repr() ==
          "{'input_ids': Tensor(shape=[3, 7], dtype=int64), 'attention_mask': Tensor(shape=[3, 7], dtype=int64), "
          "'position_ids': Tensor(shape=[3, 7], dtype=int64), 'past_key_values': DynamicCache(key_cache=["
          "Tensor(shape=[3, 4, 0, 8], dtype=float32), Tensor(shape=[3, 4, 0, 8], dtype=float32)], value_cache=["
          "Tensor(shape=[3, 4, 0, 8], dtype=float32), Tensor(shape=[3, 4, 0, 8], dtype=float32)])}");
}

TEST_CASE("save_python writes a literal as a Python file defining it, a file it cannot write is named") {
    const std::string dir = std::filesystem::temp_directory_path() / ("yobx_save_python_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto read = [](const std::string& path) {
        std::ifstream f(path);
        return std::string(std::istreambuf_iterator<char>(f), {});
    };
    yobx::libtorch::save_python(dir + "/a.py", "{'x': {0: torch.export.Dim.DYNAMIC}}", "The shapes.");
    CHECK(read(dir + "/a.py") == "# The shapes.\nimport torch\n\ndynamic_shapes = {'x': {0: torch.export.Dim.DYNAMIC}}\n");
    // Code that already defines it (derived_dims), and another name without torch.
    yobx::libtorch::save_python(dir + "/b.py", "batch = torch.export.Dim('batch')\ndynamic_shapes = {'x': {0: batch}}", "Derived.");
    CHECK(read(dir + "/b.py") == "# Derived.\nimport torch\n\nbatch = torch.export.Dim('batch')\ndynamic_shapes = {'x': {0: batch}}\n");
    yobx::libtorch::save_python(dir + "/c.py", "{'x': {0: 'batch'}}", "Labels.", "dynamic_axes");
    CHECK(read(dir + "/c.py") == "# Labels.\ndynamic_axes = {'x': {0: 'batch'}}\n");
    std::filesystem::remove_all(dir);
    CHECK(error_of<yobx::runtime_error>([&] { yobx::libtorch::save_python(dir + "/no/such/dir.py", "{}", "x"); }) ==
          "save_python: cannot write '" + dir + "/no/such/dir.py'");
}
