// TreeSpec's JSON form: exact text, round trips, and a clear error for every malformed input.
#include "../support.hpp"

#include <yobx/detail/json.hpp>
#include <yobx/detail/utf8.hpp>
#include <yobx/treespec.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

using yobx::TreeSpec;

namespace {

// The message from_json throws for text, or "no error".
std::string error_of(std::string_view text) {
    try {
        TreeSpec::from_json(text);
    } catch (const yobx::value_error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("to_json writes a versioned document") {
    auto spec = TreeSpec::tuple({TreeSpec::leaf(), TreeSpec::none(),
                                 TreeSpec::dict({"use_cache"}, {TreeSpec::constant(true)}),
                                 TreeSpec::custom("Pair2", {}, {TreeSpec::constant(std::string("a\"b"))})});
    CHECK(spec.to_json() ==
          "{\"yobx_treespec\": 1, \"root\": {\"kind\": \"tuple\", \"children\": [{\"kind\": \"leaf\"}, "
          "{\"kind\": \"none\"}, {\"kind\": \"dict\", \"keys\": [\"use_cache\"], \"children\": [{\"kind\": "
          "\"bool\", \"value\": true}]}, {\"kind\": \"custom\", \"type\": \"Pair2\", \"keys\": null, "
          "\"children\": [{\"kind\": \"str\", \"value\": \"a\\\"b\"}]}]}}");
}

TEST_CASE("from_json reads back what to_json wrote") {
    test::KVCache c{{test::tensor({1}), test::tensor({1})}, {test::tensor({1}), test::tensor({1})}};
    std::tuple<std::map<std::string, std::optional<test::KVCache>>, double, std::int64_t, std::string, bool> x{
        {{"past_key_values", c}, {"none", std::nullopt}}, -2.5, -(1LL << 62), "tab\t\u00e9\x01", false};
    auto spec = yobx::tree_structure(x);
    auto back = TreeSpec::from_json(spec.to_json());
    CHECK(back == spec);
    CHECK(back.to_string() == spec.to_string());
    CHECK(back.to_json() == spec.to_json());
}

TEST_CASE("non-finite float constants round-trip through strings") {
    auto spec = TreeSpec::tuple({TreeSpec::constant(std::numeric_limits<double>::infinity()),
                                 TreeSpec::constant(-std::numeric_limits<double>::infinity()),
                                 TreeSpec::constant(std::numeric_limits<double>::quiet_NaN()),
                                 TreeSpec::constant(3.0), TreeSpec::constant(1e-300)});
    const std::string j = spec.to_json();
    CHECK(j.find("{\"kind\": \"float\", \"value\": \"inf\"}") != std::string::npos);
    CHECK(j.find("{\"kind\": \"float\", \"value\": 3.0}") != std::string::npos);
    auto back = TreeSpec::from_json(j);
    CHECK(back == spec);
    CHECK(std::isnan(std::get<double>(back.child(2).value())));
    CHECK(std::get<double>(back.child(4).value()) == 1e-300);
}

TEST_CASE("from_json accepts whitespace, escapes and integer floats") {
    auto spec = TreeSpec::from_json(
        " {\n\t\"root\" : {\"kind\":\"dict\",\"keys\":[\"\\u00e9\\ud83d\\ude00\\/\"],"
        "\"children\":[{\"kind\":\"float\",\"value\":2}]}, \"yobx_treespec\":1}\r\n");
    CHECK(spec.keys()[0] == "\u00e9\U0001F600/");
    CHECK(std::get<double>(spec.child(0).value()) == 2.0);
}

TEST_CASE("well-formed UTF-8 sequences are told from bytes that start none") {
    using yobx::detail::utf8::sequence_length;
    using yobx::detail::utf8::valid;
    CHECK(sequence_length("a", 0) == 1);
    CHECK(sequence_length("\xC3\xA9", 0) == 2);          // U+00E9
    CHECK(sequence_length("\xE2\x82\xAC", 0) == 3);      // U+20AC
    CHECK(sequence_length("\xF0\x9F\x98\x80", 0) == 4);  // U+1F600
    CHECK(sequence_length("\xF4\x8F\xBF\xBF", 0) == 4);  // U+10FFFF, the last
    CHECK(sequence_length("\xC0\xAF", 0) == 0);          // overlong '/'
    CHECK(sequence_length("\xE0\x80\xAF", 0) == 0);      // overlong, 3 bytes
    CHECK(sequence_length("\xF0\x8F\xBF\xBF", 0) == 0);  // overlong, 4 bytes
    CHECK(sequence_length("\xED\xA0\x80", 0) == 0);      // U+D800, a surrogate
    CHECK(sequence_length("\xF4\x90\x80\x80", 0) == 0);  // past U+10FFFF
    CHECK(sequence_length("\xE9", 0) == 0);              // Latin-1's e acute
    CHECK(sequence_length("\xE2\x82", 0) == 0);          // cut short
    CHECK(sequence_length("\xBF", 0) == 0);              // a continuation byte alone
    CHECK(sequence_length("\xFF", 0) == 0);
    CHECK(valid("batch \xC3\xA9t\xC3\xA9"));
    CHECK_FALSE(valid("batch \xE9t\xE9"));
}

TEST_CASE("JSON strings are written as UTF-8: a byte that starts no UTF-8 sequence as the lone surrogate Python's surrogateescape gives it, read back as the byte") {
    const auto written = [](std::string_view s) {
        std::string out;
        yobx::detail::json::write_string(out, s);
        return out;
    };
    CHECK(written("\xC3\xA9\xF0\x9F\x98\x80\"\\\n\x01") == "\"\xC3\xA9\xF0\x9F\x98\x80\\\"\\\\\\n\\u0001\"");
    CHECK(written("bat\xE9h\xFF") == "\"bat\\udce9h\\udcff\"");
    CHECK(written("\xE2\x82") == "\"\\udce2\\udc82\"");                  // cut short: each byte
    CHECK(written("\xED\xB3\xA9") == "\"\\udced\\udcb3\\udca9\"");  // a surrogate's UTF-8 form is not UTF-8
    // read back: the same bytes, a key of a TreeSpec's dict for one
    const auto read = [&](std::string_view key) {
        const TreeSpec spec = TreeSpec::from_json("{\"root\": {\"kind\": \"dict\", \"keys\": [" + written(key) +
                                                  "], \"children\": [{\"kind\": \"none\"}]}, \"yobx_treespec\": 1}");
        return std::string(spec.keys()[0]);  // keys() views the spec's strings
    };
    for (const std::string_view key : {"a\xFF", "bat\xE9h", "\xED\xB3\xA9", "\xC3\xA9 \xE2\x82"}) CHECK(read(key) == key);
    // a lone surrogate that stands for no byte is still malformed
    CHECK(error_of("\"\\udc7f\"") == "TreeSpec.from_json: malformed JSON at offset 7: unpaired low surrogate in a \\u escape");
}

TEST_CASE("from_json rejects malformed JSON with the offset and the reason") {
    const auto err = error_of;
    CHECK(err("") == "TreeSpec.from_json: malformed JSON at offset 0: expected a value, got end of input");
    CHECK(err("{") == "TreeSpec.from_json: malformed JSON at offset 1: expected a string key in an object, got end of input");
    CHECK(err("{\"a\" 1}") == "TreeSpec.from_json: malformed JSON at offset 5: expected ':' after an object key, got '1'");
    CHECK(err("[1,]") == "TreeSpec.from_json: malformed JSON at offset 3: expected a value, got ']'");
    CHECK(err("[1 2]") == "TreeSpec.from_json: malformed JSON at offset 3: expected ',' or ']' in an array, got '2'");
    CHECK(err("{} x") == "TreeSpec.from_json: malformed JSON at offset 3: unexpected trailing character 'x'");
    CHECK(err("\"abc") == "TreeSpec.from_json: malformed JSON at offset 4: unterminated string");
    CHECK(err("\"a\\qb\"") == "TreeSpec.from_json: malformed JSON at offset 2: invalid escape '\\q'");
    CHECK(err("\"\\ud800x\"") == "TreeSpec.from_json: malformed JSON at offset 7: unpaired high surrogate in a \\u escape");
    CHECK(err("\"a\nb\"") == "TreeSpec.from_json: malformed JSON at offset 2: unescaped control character in a string");
    CHECK(err("01") == "TreeSpec.from_json: malformed JSON at offset 1: unexpected trailing character '1'");
    CHECK(err("-") == "TreeSpec.from_json: malformed JSON at offset 1: expected a digit");
    CHECK(err("1.") == "TreeSpec.from_json: malformed JSON at offset 2: expected a digit after '.'");
    CHECK(err("99999999999999999999") ==
          "TreeSpec.from_json: malformed JSON at offset 0: integer 99999999999999999999 does not fit in int64");
    CHECK(err("1e999") == "TreeSpec.from_json: malformed JSON at offset 0: number 1e999 is out of the range of double");
    CHECK(err("tru") == "TreeSpec.from_json: malformed JSON at offset 0: expected 'true'");
    CHECK(err("{\"a\": 1, \"a\": 2}") == "TreeSpec.from_json: malformed JSON at offset 9: duplicate key \"a\"");
    CHECK(err(std::string(600, '[')) == "TreeSpec.from_json: malformed JSON at offset 513: nesting deeper than 512 levels");
    CHECK(err("\xff") == "TreeSpec.from_json: malformed JSON at offset 0: expected a value, got byte 0xff");
}

TEST_CASE("from_json rejects well-formed JSON that is not a TreeSpec, naming the place") {
    auto err = [](std::string_view root) { return error_of("{\"yobx_treespec\": 1, \"root\": " + std::string(root) + "}"); };
    CHECK(err("[]") == "TreeSpec.from_json: at $.root: expected an object, got an array");
    CHECK(err("{}") == "TreeSpec.from_json: at $.root: missing field 'kind'");
    CHECK(err("{\"kind\": 3}") == "TreeSpec.from_json: at $.root.kind: expected a string, got an integer");
    CHECK(err("{\"kind\": \"set\"}") ==
          "TreeSpec.from_json: at $.root.kind: unknown node kind 'set' (expected leaf, none, bool, int, float, str, "
          "list, tuple, dict or custom)");
    CHECK(err("{\"kind\": \"leaf\", \"value\": 1}") == "TreeSpec.from_json: at $.root: unexpected field 'value'");
    CHECK(err("{\"kind\": \"int\", \"value\": 1.5}") ==
          "TreeSpec.from_json: at $.root.value: expected an integer, got a number");
    CHECK(err("{\"kind\": \"float\", \"value\": \"big\"}") ==
          "TreeSpec.from_json: at $.root.value: expected a number or one of \"inf\", \"-inf\", \"nan\"");
    CHECK(err("{\"kind\": \"list\"}") == "TreeSpec.from_json: at $.root: missing field 'children'");
    CHECK(err("{\"kind\": \"list\", \"children\": [{\"kind\": \"leaf\"}, 1]}") ==
          "TreeSpec.from_json: at $.root.children[1]: expected an object, got an integer");
    CHECK(err("{\"kind\": \"dict\", \"keys\": [\"a\"], \"children\": []}") ==
          "TreeSpec.from_json: at $.root: 1 keys for 0 children");
    CHECK(err("{\"kind\": \"dict\", \"keys\": [\"a\", \"a\"], \"children\": [{\"kind\": \"leaf\"}, {\"kind\": \"leaf\"}]}") ==
          "TreeSpec.from_json: at $.root.keys[1]: duplicate key 'a'");
    CHECK(err("{\"kind\": \"dict\", \"keys\": [1], \"children\": [{\"kind\": \"leaf\"}]}") ==
          "TreeSpec.from_json: at $.root.keys[0]: expected a string, got an integer");
    CHECK(err("{\"kind\": \"dict\", \"keys\": null, \"children\": []}") ==
          "TreeSpec.from_json: at $.root.keys: expected an array, got null");
    CHECK(err("{\"kind\": \"custom\", \"type\": \"\", \"keys\": null, \"children\": []}") ==
          "TreeSpec.from_json: at $.root.type: the type name is empty");
    CHECK_THROWS_WITH_AS(TreeSpec::from_json("{\"yobx_treespec\": 2, \"root\": {\"kind\": \"leaf\"}}"),
                         "TreeSpec.from_json: at $.yobx_treespec: unsupported format version 2 (this yobx reads version 1)",
                         yobx::value_error);
    CHECK_THROWS_WITH_AS(TreeSpec::from_json("{\"root\": {\"kind\": \"leaf\"}}"),
                         "TreeSpec.from_json: at $: missing field 'yobx_treespec'", yobx::value_error);
    CHECK_THROWS_WITH_AS(TreeSpec::from_json("[1]"), "TreeSpec.from_json: at $: expected an object, got an array",
                         yobx::value_error);
}

TEST_CASE("json::Writer: one-line and line-a-member containers, its separators and escapes, read back by the parser") {
    using yobx::detail::json::Writer;
    std::string s;
    Writer w(s, "  ");
    w.begin_object(Writer::lines).member("n", 3).member("name", "a\"b\n").key("empty").begin_array(Writer::lines).end();
    w.key("items").begin_array(Writer::lines);
    w.begin_object().member("x", std::optional<std::int64_t>()).member("ok", true).key("ids").array(std::vector<std::size_t>{1, 2}).end();
    w.end().key("t").raw("0.500000").end();
    CHECK(s == "{\n    \"n\": 3,\n    \"name\": \"a\\\"b\\n\",\n    \"empty\": [],\n    \"items\": [\n      {\"x\": null, \"ok\": true, \"ids\": [1, 2]}\n"
               "    ],\n    \"t\": 0.500000\n  }");
    CHECK(w.depth() == 0);
    const auto doc = yobx::detail::json::Parser(s, "test").parse();
    CHECK(doc.find("name")->string == "a\"b\n");
    CHECK(doc.find("items")->array[0].find("ids")->array[1].integer == 2);
    CHECK_THROWS_WITH_AS(w.end(), "json::Writer::end: no container is open", std::logic_error);
}

TEST_CASE("json::Reader names who reads, the path and what was expected") {
    using yobx::detail::json::Node;
    const yobx::detail::json::Reader rd("test.from_json");
    const Node doc = yobx::detail::json::Parser(R"({"a": "x", "b": [1, -2], "c": [{"d": 1}, 3]})", "test").parse();
    CHECK_THROWS_WITH_AS(rd.need(doc, "$", "a", Node::Kind::integer), "test.from_json: $.a: expected an integer, got a string", yobx::value_error);
    CHECK_THROWS_WITH_AS(rd.need(doc, "$", "z", Node::Kind::integer), "test.from_json: $: missing member \"z\"", yobx::value_error);
    CHECK(rd.ints(*doc.find("b"), "$.b") == std::vector<std::int64_t>{1, -2});
    CHECK_THROWS_WITH_AS(rd.indices(*doc.find("b"), "$.b"), "test.from_json: $.b: expected a non-negative integer, got -2", yobx::value_error);
    CHECK_THROWS_WITH_AS(rd.strings(*doc.find("b"), "$.b"), "test.from_json: $.b[0]: expected a string, got an integer", yobx::value_error);
    std::vector<std::string> seen;
    CHECK_THROWS_WITH_AS(rd.each_object(*doc.find("c"), "$.c", [&](const Node&, const std::string& at) { seen.push_back(at); }),
                         "test.from_json: $.c[1]: expected an object, got an integer", yobx::value_error);
    CHECK(seen == std::vector<std::string>{"$.c[0]"});
}
