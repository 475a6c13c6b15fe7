// InputObserver warnings: what makes a result unusable, said in warnings(), in the readiness
// report and, as it happens, on the log stream.
#include "../observer_support.hpp"

#include <yobx/sym.hpp>

#include <sstream>

TEST_CASE("one recorded call: every dimension static, said") {
    std::ostringstream log;
    Obs obs({.log = &log});
    auto f = obs.wrap(first_tensor, Signature{param("x")});
    f({tensor({2, 3})}, {});
    const std::string one =
        "only one call was recorded: with no set_batch_dimension_for every dimension is static (infer_dynamic_shapes "
        "gives {} for every input), which is usually incorrect; record calls with different sizes, or pass "
        "set_batch_dimension_for";
    CHECK(obs.warnings() == std::vector<std::string>{one});
    CHECK(obs.infer_dynamic_shapes().to_python() == "({},)");
    CHECK(log.str() == "yobx::InputObserver warning: " + one + "\n");  // once, however often it is asked
    CHECK(obs.infer_export_spec().warnings == std::vector<std::string>{one});
    // set_batch_dimension_for is the fix: the spec does not say it then.
    CHECK(obs.infer_export_spec({.set_batch_dimension_for = true}).warnings.empty());
    f({tensor({4, 3})}, {});
    CHECK(obs.warnings().empty());
}

TEST_CASE("calls made after store_n_calls: counted and said") {
    std::ostringstream log;
    Obs obs({.log = &log});
    auto f = obs.wrap(first_tensor, Signature{param("x")}, 2);
    for (std::int64_t n : {2, 3, 4, 5, 6}) f({tensor({n})}, {});
    CHECK(obs.num_obs() == 2);
    const std::string dropped = "3 call(s) made after store_n_calls calls were recorded were not recorded (give wrap or "
                                "observe a larger store_n_calls to record them)";
    CHECK(obs.warnings() == std::vector<std::string>{dropped});
    // Logged at the first one, as it happened.
    CHECK(log.str() == "yobx::InputObserver warning: 1 call(s) made after store_n_calls calls were recorded were not "
                       "recorded (give wrap or observe a larger store_n_calls to record them)\n");
    CHECK(obs.infer_export_spec().warnings == std::vector<std::string>{dropped});
    // Counted up to 1000 (then the pass-through call only reads the counter).
    for (int i = 0; i < 1000; ++i) f({tensor({2})}, {});
    CHECK(obs.warnings() == std::vector<std::string>{"1000 or more call(s) made after store_n_calls calls were "
                                                     "recorded were not recorded (give wrap or observe a larger "
                                                     "store_n_calls to record them)"});
}

TEST_CASE("a dynamic dimension only ever 0 or 1: said") {
    Obs obs;
    auto f = obs.wrap(first_tensor, xy);
    f({tensor({1, 3})}, {});
    f({tensor({0, 4})}, {});
    f({tensor({1, 5})}, {});
    CHECK(obs.warnings() == std::vector<std::string>{
                                "x axis 0 is dynamic but was only ever 0 or 1 (1, 0, 1): torch.export specializes both "
                                "sizes, so nothing tells it the dimension is dynamic; record calls with larger sizes, or "
                                "export with infer_export_arguments()"});
}

TEST_CASE("constants that differ: said when the call is recorded, refused at inference naming the calls") {
    std::ostringstream log;
    Obs obs({.log = &log});
    auto f = obs.wrap([](const T& x, double) { return x; }, Signature{param("x"), param("scale", 1.0)});
    f(tensor({2}), 1.0);
    f(tensor({3}), 1.0);
    CHECK(log.str().empty());
    f(tensor({4}), 0.5);
    const std::string differ = "calls 0 and 2 differ in 'scale': absent (default 1.0) vs 0.5: infer_dynamic_shapes and "
                               "infer_arguments will refuse them (torch.export takes one value of a constant; make the "
                               "calls with the same constants, or observe each setting with its own observer)";
    CHECK(log.str() == "yobx::InputObserver warning: " + differ + "\n");
    CHECK(obs.warnings() == std::vector<std::string>{differ});
    // The seed's sentence, word for word, raised at inference as the seed raises it, then the calls.
    CHECK(error_of<yobx::runtime_error>([&] { obs.infer_dynamic_shapes(); }) ==
          "Two calls were made with different constant values, {'scale': 0.5} != {} (calls 0 and 2 differ in 'scale': "
          "absent (default 1.0) vs 0.5)");
}

TEST_CASE("calls that cannot be aligned: the warning says the inference will fail") {
    Obs obs;
    auto f = obs.wrap(first_tensor, Signature{param("a", yobx::none), param("b", yobx::none)});
    f({tensor({2})}, {});
    f({yobx::none, tensor({3})}, {});
    CHECK(obs.warnings() ==
          std::vector<std::string>{"the inference will fail: At least one call to the observed model must contain all "
                                   "the named arguments. Call 1 has ['b'] but call 0, the one with the most tensors, has "
                                   "['a']. Make one call with all of them, or give the missing ones with value_if_missing."});
}

TEST_CASE("the observer's value types print with operator<< as their repr or to_string") {
    const auto text = [](const auto& x) {
        std::ostringstream os;
        os << x;
        return os.str();
    };
    CHECK(text(yobx::ArgRef("input_ids")) == "'input_ids'");
    CHECK(text(yobx::ArgRef(2)) == "2");
    CHECK(text(Signature{param("x"), param("scale", 1.0)}) == "(x, scale=1.0)");
    CHECK(text(yobx::DefaultValue(true)) == "True");
    CHECK(text(yobx::Fill<T>::constant(0.5)) == "constant(0.5)");
    CHECK(text(yobx::DimRelation{.kind = yobx::RelationKind::scale, .dim = "p2", .base = "p4", .constant = 4}) == "p2 = 4*p4");
    CHECK(text(yobx::AbsentInput{.name = "mask", .calls = {0, 2}, .fill = "ones"}) ==
          "mask: absent from call(s) 0, 2; fill ones, not checked (give check_fills or infer_export_spec a runner of "
          "the model)");
    CHECK(text(yobx::Shape{yobx::SymInt::symbol("a"), 3}) == "[a, 3]");
    CHECK(yobx::to_string(yobx::Shape{}) == "[]");
}
