// ProgramInputs (include/yobx/program/inputs.hpp): a package's yobx.inputs metadata read, and a
// call refused before the program runs, every message checked.
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

TEST_CASE("ProgramInputs refuses a call that breaks the program's inputs before it runs") {
    using T = yobx::DenseTensor;
    const auto inputs = yobx::ProgramInputs::from_json(
        R"([{"dtype": "int64", "shape": ["s0", "s1"]}, {"dtype": "float32", "shape": ["s0", 3]}])");
    REQUIRE(inputs.inputs().size() == 2);
    const std::vector<std::string> paths{"args[0]", "kwargs['mask']"};
    const auto ids = T::zeros({2, 5}, yobx::DType::int64);
    inputs.check(std::vector<T>{ids, T::zeros({2, 3}, yobx::DType::float32)}, paths, "'m.pt2'");  // fits
    const auto refused = [&](std::vector<T> flat) {
        return error_of<yobx::value_error>([&] { inputs.check(flat, paths, "'m.pt2'"); });
    };
    CHECK(refused({T::zeros({10}, yobx::DType::int64), T::zeros({2, 3}, yobx::DType::float32)}) ==
          "args[0] is [10] int64, 'm.pt2' takes [s0, s1] int64: refused before running");
    CHECK(refused({ids, T::zeros({2, 3}, yobx::DType::float64)}) ==
          "kwargs['mask'] is [2, 3] float64, 'm.pt2' takes [s0, 3] float32: refused before running");
    CHECK(refused({ids, T::zeros({2, 4}, yobx::DType::float32)}) ==
          "kwargs['mask'] is [2, 4] float32, 'm.pt2' takes [s0, 3] float32: refused before running");
    CHECK(refused({ids, T::zeros({3, 3}, yobx::DType::float32)}) ==
          "kwargs['mask'] axis 0 is 3, args[0] axis 0 is 2: 'm.pt2' requires them equal (s0): refused before running");
    CHECK(refused({ids}) == "the call has 1 tensor(s), 'm.pt2' takes 2: refused before running");
    // No description: nothing checked.
    yobx::ProgramInputs{}.check(std::vector<T>{ids}, paths, "'m.pt2'");

    const auto bad = [](const std::string& json) { return error_of<yobx::value_error>([&] { (void)yobx::ProgramInputs::from_json(json); }); };
    CHECK(bad("{}") == "ProgramInputs: expected a list of inputs or {\"inputs\": [...], \"ranges\": {...}}");
    CHECK(bad("3") == "ProgramInputs: expected a list of inputs, got an integer");
    CHECK(bad(R"({"inputs": [], "ranges": []})") == "ProgramInputs: \"ranges\" must be an object");
    CHECK(bad(R"({"inputs": [], "ranges": {"s0": [2]}})") == "ProgramInputs: range of s0: expected [min, max or null]");
    CHECK(bad(R"({"inputs": [], "labels": []})") == "ProgramInputs: \"labels\" must be an object");
    CHECK(bad(R"({"inputs": [], "labels": {"s0 + 1": "x"}})") == "ProgramInputs: the label of s0 + 1: expected a symbol and a string");
    CHECK(bad(R"([{"dtype": "int64", "shape": ["s0 +"]}])").rfind(
              "ProgramInputs: input 0: the dimension 's0 +' is not an expression yobx reads: ", 0) == 0);
    CHECK(bad(R"([{"dtype": "int64"}])") == "ProgramInputs: input 0: expected {\"dtype\": a string, \"shape\": a list}");
    CHECK(bad(R"([{"dtype": "int64", "shape": [-1]}])") ==
          "ProgramInputs: input 0: a dimension is a non-negative integer, a symbol or an expression, got an integer");
    CHECK(bad(R"([{"dtype": "int64", "shape": [null]}])") ==
          "ProgramInputs: input 0: a dimension is a non-negative integer, a symbol or an expression, got null");
    CHECK(bad("[") == "ProgramInputs: malformed JSON at offset 1: expected a value, got end of input");
}

TEST_CASE("ProgramInputs checks expressions of symbols and the program's ranges as torch.export does") {
    using T = yobx::DenseTensor;
    // A decoder with a KV cache: the mask is s1 + s11 (sequence + past), the sequence at most 64,
    // the batch at least 3; s1's own minimum of 2 is torch's 0/1 convention, not checked.
    const auto inputs = yobx::ProgramInputs::from_json(R"({"inputs": [
        {"dtype": "int64", "shape": ["s0", "s1"]},
        {"dtype": "int64", "shape": ["s0", "s1 + s11"]},
        {"dtype": "float32", "shape": ["s0", 4, "s11", 8]}],
        "ranges": {"s0": [3, null], "s1": [2, 64], "s1 + s11": [4, null], "s11": [0, null]}})");
    REQUIRE(inputs.ranges().size() == 4);
    CHECK(inputs.ranges()[1].second.max == 64);
    const std::vector<std::string> paths{"input_ids", "attention_mask", "past"};
    const auto call = [](std::int64_t b, std::int64_t s, std::int64_t m, std::int64_t p) {
        return std::vector<T>{T::zeros({b, s}, yobx::DType::int64), T::zeros({b, m}, yobx::DType::int64),
                              T::zeros({b, 4, p, 8}, yobx::DType::float32)};
    };
    const auto refused = [&](std::vector<T> flat) {
        return error_of<yobx::value_error>([&] { inputs.check(flat, paths, "'llm.pt2'"); });
    };
    inputs.check(call(3, 5, 5, 0), paths, "'llm.pt2'");   // prefill, no past
    inputs.check(call(3, 1, 6, 5), paths, "'llm.pt2'");   // a decode step: s1 = 1 is let through, as torch does
    CHECK(refused(call(3, 1, 7, 5)) ==
          "attention_mask axis 1 is 7, 'llm.pt2' takes s1 + s11 = 6 (s1 = 1, s11 = 5): refused before running");
    CHECK(refused(call(2, 5, 5, 0)) == "input_ids axis 0 is s0 = 2, 'llm.pt2' was exported for s0 in [3, inf]: refused before running");
    CHECK(refused(call(3, 65, 65, 0)) ==
          "input_ids axis 1 is s1 = 65, 'llm.pt2' was exported for s1 in [2, 64]: refused before running");
    // With yobx's labels (yobx-export writes them from dynamic_axes.py), the messages use them.
    const auto labelled = yobx::ProgramInputs::from_json(R"({"inputs": [
        {"dtype": "int64", "shape": ["s0", "s1"]},
        {"dtype": "int64", "shape": ["s0", "s1 + s11"]},
        {"dtype": "float32", "shape": ["s0", 4, "s11", 8]}],
        "ranges": {"s1": [2, 64]},
        "labels": {"s0": "batch_size", "s1": "sequence_length", "s11": "past_sequence_length"}})");
    CHECK(labelled.named("s1 + s11") == "sequence_length + past_sequence_length");
    const auto refused_labelled = [&](std::vector<T> flat) {
        return error_of<yobx::value_error>([&] { labelled.check(flat, paths, "'llm.pt2'"); });
    };
    CHECK(refused_labelled(call(3, 1, 7, 5)) ==
          "attention_mask axis 1 is 7, 'llm.pt2' takes sequence_length + past_sequence_length = 6 "
          "(sequence_length = 1, past_sequence_length = 5): refused before running");
    CHECK(refused_labelled(call(3, 65, 65, 0)) ==
          "input_ids axis 1 is sequence_length = 65, 'llm.pt2' was exported for sequence_length in [2, 64]: refused before running");
    CHECK(refused_labelled({T::zeros({3}, yobx::DType::int64)}) == "the call has 1 tensor(s), 'llm.pt2' takes 3: refused before running");
    CHECK(error_of<yobx::value_error>([&] { labelled.check(std::vector<T>{T::zeros({3}, yobx::DType::int64),
                                                                          T::zeros({3, 5}, yobx::DType::int64),
                                                                          T::zeros({3, 4, 5, 8}, yobx::DType::float32)},
                                                           paths, "'llm.pt2'"); }) ==
          "input_ids is [3] int64, 'llm.pt2' takes [batch_size, sequence_length] int64: refused before running");
    // A symbol only an expression holds is solved for: here s11 from the mask.
    const auto solved = yobx::ProgramInputs::from_json(
        R"([{"dtype": "int64", "shape": ["s1"]}, {"dtype": "int64", "shape": ["2*s11 + s1"]}])");
    solved.check(std::vector<T>{T::zeros({3}, yobx::DType::int64), T::zeros({7}, yobx::DType::int64)}, {"a", "b"}, "'p.pt2'");
    CHECK(error_of<yobx::value_error>([&] {
              solved.check(std::vector<T>{T::zeros({3}, yobx::DType::int64), T::zeros({6}, yobx::DType::int64)}, {"a", "b"}, "'p.pt2'");
          }) == "b axis 0 is 6, 'p.pt2' takes 2*s11 + s1 for an integer s11: refused before running");
}

TEST_CASE("ProgramInputs checks the conditions the program asserts, in yobx's labels") {
    using T = yobx::DenseTensor;
    // A decoder's flat cache [k0, v0, k1, v1] whose key and value lengths torch.export kept apart
    // (s3, s5) with the equality as an assertion, a reshape's divisibility, a Ne and an inequality.
    const auto inputs = yobx::ProgramInputs::from_json(R"J({"inputs": [
        {"dtype": "int64", "shape": ["s0", "s1"]},
        {"dtype": "float32", "shape": ["s0", 4, "s3", 8]}, {"dtype": "float32", "shape": ["s0", 4, "s5", 8]}],
        "constraints": ["Eq(s3, s5)", "Eq(Mod(s1, 4), 0)", "Ne(s0, s1)", "s3 <= 2*s1 + 64"],
        "labels": {"s0": "batch", "s1": "seq", "s3": "past_kv_dim_2", "s5": "past_kv_dim_2"}})J");
    REQUIRE(inputs.constraints().size() == 4);
    CHECK(inputs.unchecked().empty());
    const std::vector<std::string> paths{"args[0]", "args[1][0]", "args[1][1]"};
    const auto call = [](std::int64_t b, std::int64_t s, std::int64_t k, std::int64_t v) {
        return std::vector<T>{T::zeros({b, s}, yobx::DType::int64), T::zeros({b, 4, k, 8}, yobx::DType::float32),
                              T::zeros({b, 4, v, 8}, yobx::DType::float32)};
    };
    const auto refused = [&](std::vector<T> flat) {
        return error_of<yobx::value_error>([&] { inputs.check(flat, paths, "'llm.pt2'"); });
    };
    inputs.check(call(2, 8, 6, 6), paths, "'llm.pt2'");
    CHECK(refused(call(2, 8, 6, 7)) ==
          "args[1][0] axis 2 is 6, args[1][1] axis 2 is 7: 'llm.pt2' requires them equal (past_kv_dim_2): refused before running");
    CHECK(refused(call(2, 6, 6, 6)) == "args[0] axis 1 is 6: 'llm.pt2' requires Eq(Mod(seq, 4), 0): refused before running");
    CHECK(refused(call(4, 4, 6, 6)) == "args[0] axis 0 is 4, args[0] axis 1 is 4: 'llm.pt2' requires Ne(batch, seq): refused before running");
    CHECK(refused(call(2, 4, 73, 73)) ==
          "args[1][0] axis 2 is 73, args[0] axis 1 is 4: 'llm.pt2' requires past_kv_dim_2 <= 2*seq + 64: refused before running");
    // The symbols named in the rule's order: torch's Eq(s5, s3) reads the value first.
    const auto reversed = yobx::ProgramInputs::from_json(R"J({"inputs": [{"dtype": "int64", "shape": ["s3", "s5"]}],
        "constraints": ["Eq(s5, s3)"], "labels": {"s3": "past", "s5": "past"}})J");
    CHECK(error_of<yobx::value_error>([&] { reversed.check(std::vector<T>{T::zeros({6, 7}, yobx::DType::int64)}, {"kv"}, "'p.pt2'"); }) ==
          "kv axis 1 is 7, kv axis 0 is 6: 'p.pt2' requires them equal (past): refused before running");
    // A rule that cannot be evaluated at the call's sizes (a zero divisor) refuses the call, saying why.
    const auto divided = yobx::ProgramInputs::from_json(R"J({"inputs": [{"dtype": "int64", "shape": ["s0", "s1"]}],
        "constraints": ["Eq(Mod(s0, s1), 0)"]})J");
    CHECK(error_of<yobx::value_error>([&] { divided.check(std::vector<T>{T::zeros({4, 0}, yobx::DType::int64)}, {"x"}, "'p.pt2'"); })
              .rfind("x axis 0 is 4, x axis 1 is 0: 'p.pt2' requires Eq(Mod(s0, s1), 0), which cannot be evaluated at these sizes (", 0) == 0);
    // Two symbols of different labels required equal: the rule itself, in the labels.
    const auto apart = yobx::ProgramInputs::from_json(R"J({"inputs": [{"dtype": "int64", "shape": ["s0", "s1"]}],
        "constraints": ["Eq(s0, s1)"], "labels": {"s0": "batch", "s1": "seq"}})J");
    CHECK(error_of<yobx::value_error>([&] { apart.check(std::vector<T>{T::zeros({2, 3}, yobx::DType::int64)}, {"x"}, "'p.pt2'"); }) ==
          "x axis 0 is 2, x axis 1 is 3: 'p.pt2' requires them equal (Eq(batch, seq)): refused before running");

    // What yobx cannot evaluate is listed with the reason, never dropped without a word.
    const auto partial = yobx::ProgramInputs::from_json(R"J({"inputs": [{"dtype": "int64", "shape": ["s0"]}],
        "constraints": ["CeilToInt(IntTrueDiv(s0, 3)) >= 1", "Eq(s9, 4)", "s0 >= 1"]})J");
    const auto unchecked = partial.unchecked();
    REQUIRE(unchecked.size() == 2);
    CHECK(unchecked[0]->text == "CeilToInt(IntTrueDiv(s0, 3)) >= 1");
    CHECK(unchecked[0]->reason.rfind("yobx does not read it: ", 0) == 0);
    CHECK(unchecked[1]->reason == "its symbol s9 is no input's dimension");
    partial.check(std::vector<T>{T::zeros({2}, yobx::DType::int64)}, {"x"}, "'p.pt2'");

    const auto bad = [](const std::string& json) { return error_of<yobx::value_error>([&] { (void)yobx::ProgramInputs::from_json(json); }); };
    CHECK(bad(R"J({"inputs": [], "constraints": {}})J") == "ProgramInputs: \"constraints\" must be a list");
    CHECK(bad(R"J({"inputs": [], "constraints": [3]})J") == "ProgramInputs: a constraint is a string, got an integer");
    CHECK(bad(R"J({"inputs": [], "observed": []})J") == "ProgramInputs: \"observed\" must be an object");
    CHECK(bad(R"J({"inputs": [], "observed": {"seq": {"min": 3, "max": 2, "tied": true}}})J") ==
          "ProgramInputs: observed seq: expected {\"min\": a size, \"max\": a size at least min, \"tied\": a boolean}");
    // Older metadata, without constraints or observations, still loads.
    CHECK(yobx::ProgramInputs::from_json(R"J({"inputs": [], "ranges": {}})J").constraints().empty());
}

TEST_CASE("ProgramInputs with as_observed: a label's dimensions equal and its size in the observed range") {
    using T = yobx::DenseTensor;
    // The six cache lengths carried one label in every observed call; the program holds no equality.
    const auto inputs = yobx::ProgramInputs::from_json(R"J({"inputs": [
        {"dtype": "int64", "shape": ["s0", "s1"]},
        {"dtype": "float32", "shape": ["s0", "s3"]}, {"dtype": "float32", "shape": ["s0", "s5"]}],
        "labels": {"s0": "batch", "s1": "seq", "s3": "past", "s5": "past"},
        "observed": {"batch": {"min": 2, "max": 4, "tied": true}, "seq": {"min": 1, "max": 7, "tied": true},
                     "past": {"min": 0, "max": 12, "tied": true}}})J");
    REQUIRE(inputs.observed().at("past").max == 12);
    const std::vector<std::string> paths{"ids", "k", "v"};
    const auto call = [](std::int64_t b, std::int64_t s, std::int64_t k, std::int64_t v) {
        return std::vector<T>{T::zeros({b, s}, yobx::DType::int64), T::zeros({b, k}, yobx::DType::float32),
                              T::zeros({b, v}, yobx::DType::float32)};
    };
    const yobx::RunnerOptions observed{.as_observed = true};
    const auto refused = [&](std::vector<T> flat, yobx::RunnerOptions options) {
        return error_of<yobx::value_error>([&] { inputs.check(flat, paths, "'llm.pt2'", options); });
    };
    inputs.check(call(2, 5, 6, 7), paths, "'llm.pt2'");  // off by default: the program's constraints only
    inputs.check(call(2, 5, 6, 6), paths, "'llm.pt2'", observed);
    CHECK(refused(call(2, 5, 6, 7), observed) ==
          "v axis 1 is 7, k axis 1 is 6: yobx observed them equal (past) in every call: refused before running (as_observed)");
    CHECK(refused(call(2, 9, 6, 6), observed) ==
          "ids axis 1 is 9, yobx observed seq in [1, 7]: refused before running (as_observed)");
    inputs.check(call(2, 9, 6, 6), paths, "'llm.pt2'", {.as_observed = true, .range_slack = 2});
    CHECK(refused(call(2, 10, 6, 6), {.as_observed = true, .range_slack = 2}) ==
          "ids axis 1 is 10, yobx observed seq in [1, 7] (range_slack 2): refused before running (as_observed)");
    CHECK(refused(call(2, 5, 6, 6), {.as_observed = true, .range_slack = -1}) ==
          "RunnerOptions: range_slack is -1, expected 0 or more");
    // A package without observations (an older yobx-export) cannot be checked as observed: said, not skipped.
    const auto older = yobx::ProgramInputs::from_json(R"J({"inputs": [{"dtype": "int64", "shape": ["s0"]}]})J");
    CHECK(error_of<yobx::value_error>([&] { older.check(std::vector<T>{T::zeros({2}, yobx::DType::int64)}, {"x"}, "'old.pt2'", observed); }) ==
          "as_observed: 'old.pt2' holds no observed sizes (its metadata has no \"observed\": compiled by an older yobx-export, "
          "or from calls that do not flatten to its inputs)");
    CHECK(error_of<yobx::value_error>([&] { yobx::ProgramInputs{}.check(std::vector<T>{T::zeros({2}, yobx::DType::int64)}, {"x"}, "'bare.pt2'", observed); })
              .rfind("as_observed: 'bare.pt2' holds no observed sizes", 0) == 0);
}

TEST_CASE("ProgramInputs: the strides the program was compiled for, evaluated at a call's sizes") {
    using T = yobx::DenseTensor;
    // images exported channels last: [s0, 3, s1, s2] with strides [3*s1*s2, 1, 3*s2, 3]
    const auto inputs = yobx::ProgramInputs::from_json(R"J({"inputs": [
        {"dtype": "float32", "shape": ["s0", 3, "s1", "s2"], "strides": ["3*s1*s2", 1, "3*s2", 3]},
        {"dtype": "int64", "shape": ["s0"]}]})J");
    const auto sizes = inputs.check(std::vector<T>{T::zeros({2, 3, 4, 5}, yobx::DType::float32), T::zeros({2}, yobx::DType::int64)},
                                    {"x", "y"}, "'p.pt2'");
    CHECK(sizes == yobx::SymbolValues{{"s0", 2}, {"s1", 4}, {"s2", 5}});
    CHECK(inputs.strides_of(0, sizes) == std::vector<std::int64_t>{60, 1, 15, 3});
    CHECK_FALSE(inputs.strides_of(1, sizes));    // none given: contiguous
    CHECK_FALSE(inputs.strides_of(0, {}));       // a symbol without a value
    CHECK_FALSE(inputs.strides_of(7, sizes));    // no such input

    const auto bad = [](const std::string& json) { return error_of<yobx::value_error>([&] { (void)yobx::ProgramInputs::from_json(json); }); };
    CHECK(bad(R"J([{"dtype": "int64", "shape": ["s0", 2], "strides": [2]}])J") ==
          "ProgramInputs: input 0: \"strides\" must be a list of one stride per dimension");
    CHECK(bad(R"J([{"dtype": "int64", "shape": ["s0"], "strides": [null]}])J") ==
          "ProgramInputs: input 0: a stride is a non-negative integer or an expression, got null");
    CHECK(bad(R"J([{"dtype": "int64", "shape": ["s0"], "strides": ["2*"]}])J").rfind(
              "ProgramInputs: input 0: the stride '2*' is not an expression yobx reads: ", 0) == 0);
}
