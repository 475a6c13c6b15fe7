// Patches: source capture, diffs, PatchInfo, PatchDetails and its reports over
// a traced graph, PatchGuard, and the shipped patches of the shape rules.
#include "../error_of.hpp"

#include <yobx/patches.hpp>
#include <yobx/shape_inference.hpp>

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using test::error_of;
using yobx::PatchDetails;
using yobx::PatchGuard;
using yobx::PatchInfo;

namespace patch_test {

// A hook of the user's code, and two replacements.
inline int (*scale)(int) = nullptr;

constexpr int double_first_line = __LINE__ + 1;
YOBX_PATCH_SOURCE(double_it,
int double_it(int x) {
    return 2 * x;
}) YOBX_PATCH_SOURCE_END
constexpr int double_last_line = __LINE__ - 1;

YOBX_PATCH_SOURCE(triple_it,
int triple_it(int x) {
    // comments do not reach the captured text
    const int factor = 3;
    return factor * x;
}) YOBX_PATCH_SOURCE_END

// Not wrapped: its source is not available.
inline int halve_it(int x) { return x / 2; }

// A std::function hook and a global flag.
inline std::function<int(int)> hook;
inline bool fast_path = false;

}  // namespace patch_test

using namespace patch_test;

namespace {

// A graph in torch.fx's shape: nodes with a name and a meta map.
struct Node {
    std::string name;
    std::map<std::string, std::string> meta;
};
struct Graph {
    std::vector<Node> nodes;
};
static_assert(yobx::TracedGraph<Graph>);
static_assert(!yobx::TracedGraph<std::vector<Node>>);

std::string frame(std::string_view file, int line, std::string_view fn) {
    return "File \"" + std::string(file) + "\", line " + std::to_string(line) + ", in " + std::string(fn);
}

// A patch whose apply and undo append to a log, and may throw on apply.
PatchInfo logging_patch(const std::string& name, std::vector<std::string>& log, bool throws = false) {
    return PatchInfo(
        name, "original_" + name, "test",
        [&log, name, throws] {
            if (throws) throw std::runtime_error("cannot apply " + name);
            log.push_back("apply " + name);
        },
        [&log, name] { log.push_back("undo " + name); });
}

}  // namespace

TEST_CASE("YOBX_PATCH_SOURCE captures the name, the text, the file and the exact span") {
    const yobx::SourceText& s = double_it_source();
    CHECK(s.name == "double_it");
    CHECK(s.code == "int double_it(int x) { return 2 * x; }");
    CHECK(std::string_view(s.file).ends_with("tests/patches/test_patches.cpp"));
    CHECK(s.first_line == double_first_line);
    CHECK(s.last_line == double_last_line);
    CHECK(s.text() == "int double_it(int x) {\n    return 2 * x;\n}\n");
    CHECK(triple_it_source().text() == "int triple_it(int x) {\n    const int factor = 3;\n    return factor * x;\n}\n");
    CHECK(double_it(4) == 8);  // the definition compiles as written
}

TEST_CASE("find_source finds a wrapped function from its address, and nothing for others") {
    REQUIRE(yobx::find_source(&double_it));
    CHECK(yobx::find_source(&double_it)->name == "double_it");
    CHECK(yobx::find_source(&triple_it)->name == "triple_it");
    CHECK_FALSE(yobx::find_source(&halve_it));
    CHECK(yobx::find_source(&yobx::shape::default_broadcast_shapes<>)->name == "default_broadcast_shapes");
}

TEST_CASE("the layout puts one statement per line and keeps initializers, for headers and literals whole") {
    using yobx::detail::layout_code;
    CHECK(layout_code("int f() { std::vector<int> v{1, 2}; for (int i = 0; i < 2; ++i) { v[i] += 1; } return v[0]; }") ==
          "int f() {\n"
          "    std::vector<int> v{1, 2};\n"
          "    for (int i = 0; i < 2; ++i) {\n"
          "        v[i] += 1;\n"
          "    }\n"
          "    return v[0];\n"
          "}\n");
    CHECK(layout_code("void g(int x) { if (x) { h(\"a; {b}\", ';'); } else { h(R\"(c; })\", '}'); } }") ==
          "void g(int x) {\n"
          "    if (x) {\n"
          "        h(\"a; {b}\", ';');\n"
          "    } else {\n"
          "        h(R\"(c; })\", '}');\n"
          "    }\n"
          "}\n");
    CHECK(layout_code("struct S { int a; int b; }; auto l = [](int x) { return x; };") ==
          "struct S {\n"
          "    int a;\n"
          "    int b;\n"
          "};\n"
          "auto l = [](int x) {\n"
          "    return x;\n"
          "};\n");
    // A digit separator is not a character literal; `[&] {` opens a lambda's block.
    CHECK(layout_code("int k() { int n = 1'000; auto f = [&] { return n; }; return f(); }") ==
          "int k() {\n"
          "    int n = 1'000;\n"
          "    auto f = [&] {\n"
          "        return n;\n"
          "    };\n"
          "    return f();\n"
          "}\n");
}

TEST_CASE("unified_diff writes diff -u's hunks, ranges and context") {
    using yobx::detail::unified_diff;
    CHECK(unified_diff("a\nb\n", "a\nb\n", "original", "rewritten") == "");
    CHECK(unified_diff("a\nb\n", "a\nc\n", "original", "rewritten") ==
          "--- original\n+++ rewritten\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
    // One line on a side is written without a length, none as `start,0`.
    CHECK(unified_diff("", "x\n", "o", "r") == "--- o\n+++ r\n@@ -0,0 +1 @@\n+x\n");
    CHECK(unified_diff("x\n", "", "o", "r") == "--- o\n+++ r\n@@ -1 +0,0 @@\n-x\n");
    // Changes more than 6 lines apart are two hunks with 3 lines of context each.
    const std::string ten = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
    CHECK(unified_diff(ten, "0\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n13\n", "o", "r") ==
          "--- o\n+++ r\n"
          "@@ -1,4 +1,4 @@\n-1\n+0\n 2\n 3\n 4\n"
          "@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+13\n");
    // Six lines apart or fewer: one hunk.
    CHECK(unified_diff("1\n2\n3\n4\n5\n6\n7\n8\n", "0\n2\n3\n4\n5\n6\n7\n9\n", "o", "r") ==
          "--- o\n+++ r\n@@ -1,8 +1,8 @@\n-1\n+0\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+9\n");
}

TEST_CASE("unified_diff marks a last line without a newline as GNU diff does (issue 29)") {
    using yobx::detail::unified_diff;
    // Each expected text is what `diff -u` (GNU diffutils) writes for the pair.
    CHECK(unified_diff("a\nb", "a\nc", "o", "r") ==
          "--- o\n+++ r\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n");
    // Only the final newline differs: the texts differ (the diff used to be empty).
    CHECK(unified_diff("a\nb", "a\nb\n", "o", "r") ==
          "--- o\n+++ r\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
    CHECK(unified_diff("a\nb", "z\na\nb", "o", "r") == "--- o\n+++ r\n@@ -1,2 +1,3 @@\n+z\n a\n b\n\\ No newline at end of file\n");
    CHECK(unified_diff("", "q", "o", "r") == "--- o\n+++ r\n@@ -0,0 +1 @@\n+q\n\\ No newline at end of file\n");
    CHECK(unified_diff("q", "", "o", "r") == "--- o\n+++ r\n@@ -1 +0,0 @@\n-q\n\\ No newline at end of file\n");
    CHECK(unified_diff("a\nb", "a\nb", "o", "r") == "");
}

TEST_CASE("PatchInfo::make swaps a function pointer and takes its name and sources from YOBX_PATCH_SOURCE") {
    scale = &double_it;
    PatchInfo p = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    CHECK(p.name() == "triple_it");
    CHECK(p.original_name() == "double_it");
    CHECK(p.family() == "test");
    CHECK(p.refid() == "patch-test-triple_it");
    CHECK(p.title() == "test: double_it -> triple_it");
    CHECK(p.patch_source()->name == "triple_it");
    CHECK(p.original_source()->name == "double_it");
    CHECK_FALSE(p.is_applied());
    p.apply();
    CHECK(p.is_applied());
    CHECK(scale(5) == 15);
    PatchInfo copy = p;  // a handle: the copy is the same patch
    CHECK(copy.is_applied());
    CHECK(copy == p);
    copy.undo();
    CHECK_FALSE(p.is_applied());
    CHECK((scale == &double_it));
}

TEST_CASE("PatchInfo::make swaps a std::function and a plain value") {
    hook = &double_it;
    PatchInfo p = PatchInfo::make(&triple_it, hook, {.original = "double_it", .family = "test"});
    CHECK(p.original_source()->name == "double_it");  // found through std::function::target
    p.apply();
    CHECK(hook(2) == 6);
    p.undo();
    CHECK(hook(2) == 4);

    PatchInfo flag = PatchInfo::make(true, fast_path, {.original = "fast_path", .family = "config", .name = "enable_fast_path"});
    CHECK_FALSE(flag.original_source());
    flag.apply();
    CHECK(fast_path);
    flag.undo();
    CHECK_FALSE(fast_path);
}

TEST_CASE("PatchInfo::make without a source needs a name") {
    CHECK(error_of<yobx::value_error>([] { (void)PatchInfo::make(&halve_it, scale, {.original = "double_it", .family = "test"}); }) ==
          "PatchInfo::make: the replacement of 'double_it' has no name: define it inside YOBX_PATCH_SOURCE or pass a name");
    CHECK(PatchInfo::make(&halve_it, scale, {.original = "double_it", .family = "test", .name = "halve_it"}).name() == "halve_it");
}

TEST_CASE("applying an applied patch or undoing one that is not applied is an error naming the patch") {
    std::vector<std::string> log;
    PatchInfo p = logging_patch("p", log);
    CHECK(error_of<yobx::runtime_error>([&] { p.undo(); }) == "PatchInfo::undo: patch 'p' is not applied");
    p.apply();
    CHECK(error_of<yobx::runtime_error>([&] { p.apply(); }) == "PatchInfo::apply: patch 'p' is already applied");
    p.undo();
    CHECK(log == std::vector<std::string>{"apply p", "undo p"});
}

TEST_CASE("the PatchInfo constructor checks its name and actions, dependencies never form a cycle") {
    CHECK(error_of<yobx::value_error>([] { PatchInfo("", "f", "t", [] {}, [] {}); }) ==
          "PatchInfo: the patch of 'f' has an empty name");
    CHECK(error_of<yobx::value_error>([] { PatchInfo("p", "f", "t", [] {}, nullptr); }) ==
          "PatchInfo: patch 'p' needs both an apply and an undo action");
    std::vector<std::string> log;
    PatchInfo p = logging_patch("p", log);
    CHECK(error_of<yobx::value_error>([&] { p.add_dependency(p); }) ==
          "PatchInfo::add_dependency: patch 'p' cannot depend on itself");
    PatchInfo x = logging_patch("x", log), y = logging_patch("y", log), z = logging_patch("z", log);
    x.add_dependency(y);
    y.add_dependency(z);
    CHECK(error_of<yobx::value_error>([&] { z.add_dependency(x); }) ==
          "PatchInfo::add_dependency: patch 'z' cannot depend on 'x', which depends on it (x -> y -> z)");
    CHECK(z.depends_on().empty());
}

TEST_CASE("make_diff is the unified diff original -> patch, then the dependencies' diffs") {
    PatchInfo p = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    p.set_original_source(double_it_source());
    const std::string own =
        "--- original\n"
        "+++ rewritten\n"
        "@@ -1,3 +1,4 @@\n"
        "-int double_it(int x) {\n"
        "-    return 2 * x;\n"
        "+int triple_it(int x) {\n"
        "+    const int factor = 3;\n"
        "+    return factor * x;\n"
        " }\n";
    CHECK(p.make_diff() == own);

    PatchInfo dep = PatchInfo::make(&halve_it, scale, {.original = "double_it", .family = "test", .name = "halve_it"});
    dep.set_original_source(double_it_source());
    p.add_dependency(dep);
    CHECK(p.make_diff() == own +
                               "--- original\n"
                               "+++ rewritten\n"
                               "@@ -1,3 +1 @@\n"
                               "-int double_it(int x) {\n"
                               "-    return 2 * x;\n"
                               "-}\n"
                               "+// the source of halve_it is not available: it is not defined inside YOBX_PATCH_SOURCE\n");
}

TEST_CASE("format_diff writes the raw title and the seed's RST section") {
    scale = &double_it;
    PatchInfo p = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    const std::string diff = p.make_diff();
    CHECK(p.format_diff("raw") == "test: double_it -> triple_it\n" + diff);
    // The format as a type; the names stay for the seed's and JSON's side.
    CHECK(p.format_diff() == p.format_diff("raw"));
    CHECK(p.format_diff(yobx::DiffFormat::rst) == p.format_diff("rst"));
    CHECK(p.format_diff("rst") ==
          ".. _patch-test-triple_it:\n"
          "\n"
          "test: double_it -> triple_it\n"
          "============================\n"
          "\n"
          ".. code-block:: diff\n"
          "    :linenos:\n"
          "\n"
          "    --- original\n"
          "    +++ rewritten\n"
          "    @@ -1,3 +1,4 @@\n"
          "    -int double_it(int x) {\n"
          "    -    return 2 * x;\n"
          "    +int triple_it(int x) {\n"
          "    +    const int factor = 3;\n"
          "    +    return factor * x;\n"
          "     }\n");
    CHECK(error_of<yobx::value_error>([&] { (void)p.format_diff("html"); }) ==
          "PatchInfo::format_diff: unknown format 'html', expected 'raw' or 'rst'");
}

TEST_CASE("PatchDetails is an ordered list with find, extend and checked indexing") {
    std::vector<std::string> log;
    PatchInfo a = logging_patch("a", log), b = logging_patch("b", log), c = logging_patch("c", log);
    PatchDetails d{a, b};
    PatchDetails more;
    more.append(c);
    d.extend(more);
    REQUIRE(d.size() == 3);
    std::vector<std::string> names;
    for (const auto& p : d) names.push_back(p.name());
    CHECK(names == std::vector<std::string>{"a", "b", "c"});
    CHECK(d[1] == b);
    CHECK(*d.find("c") == c);
    CHECK_FALSE(d.find("original_a"));  // find looks at the patch's name
    CHECK(error_of<yobx::value_error>([&] { (void)d[3]; }) == "PatchDetails: index 3 is out of range (3 patches)");
    CHECK(error_of<yobx::value_error>([&] { d.append(logging_patch("a", log)); }) ==
          "PatchDetails::append: a patch with refid 'patch-test-a' is already in the collection");
}

namespace {

// Nodes of a graph traced through triple_it (inside its span), double_it, and elsewhere.
Graph traced_graph() {
    const yobx::SourceText& t = triple_it_source();
    const yobx::SourceText& d = double_it_source();
    Graph g;
    g.nodes.push_back({"mul", {{"stack_trace", frame("model.cpp", 10, "forward") + "\n  " +
                                                    frame(t.file, t.first_line + 2, "triple_it")}}});
    g.nodes.push_back({"add", {{"stack_trace", frame("model.cpp", 11, "forward")}}});
    g.nodes.push_back({"constant", {}});
    // A relative path names the same file as an absolute __FILE__.
    g.nodes.push_back({"mul_1", {{"stack_trace", frame("tests/patches/test_patches.cpp", t.last_line, "triple_it")}}});
    g.nodes.push_back({"sub", {{"stack_trace", frame(t.file, t.last_line + 1, "after")}}});
    g.nodes.push_back({"neg", {{"stack_trace", frame(d.file, d.first_line, "double_it")}}});
    g.nodes.push_back({"other_file", {{"stack_trace", frame("other/test_patches.cpp.h", t.first_line, "x")}}});
    g.nodes.push_back({"absolute", {{"stack_trace", frame("/test_patches.cpp", t.first_line, "x")}}});
    return g;
}

}  // namespace

TEST_CASE("patches_involved_in_graph matches stack frames against each patch's file and lines") {
    scale = &double_it;
    PatchInfo triple = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    PatchInfo halve = PatchInfo::make(&halve_it, scale, {.original = "double_it", .family = "test", .name = "halve_it"});  // no source: never involved
    PatchInfo twice = PatchInfo::make(&double_it, scale, {.original = "double_it", .family = "test2"});
    const Graph g = traced_graph();
    const auto involved = PatchDetails{halve, triple, twice}.patches_involved_in_graph(g);
    REQUIRE(involved.size() == 2);
    CHECK(involved[0].patch == triple);
    REQUIRE(involved[0].nodes.size() == 2);
    CHECK(involved[0].nodes[0].node == &g.nodes[0]);
    CHECK(involved[0].nodes[0].frame ==
          frame(triple_it_source().file, triple_it_source().first_line + 2, "triple_it"));
    CHECK(involved[0].nodes[1].node == &g.nodes[3]);
    CHECK(involved[0].nodes[1].index == 3);
    CHECK(involved[1].patch == twice);
    REQUIRE(involved[1].nodes.size() == 1);
    CHECK(involved[1].nodes[0].node->name == "neg");
}

TEST_CASE("the stack-trace reader takes only lines that start with a frame, and line numbers that end at ',' or the line") {
    using yobx::detail::parse_stack_trace;
    const auto frames = [](std::string_view trace) {
        std::vector<std::string> out;
        for (const auto& f : parse_stack_trace(trace))
            out.push_back(std::string(f.file) + ":" + std::to_string(f.line) + " [" + std::string(f.text) + "]");
        return out;
    };
    // torch.fx echoes each frame's source line under it: a quoted frame there is not a frame (issue 29).
    CHECK(frames("  File \"/src/m.py\", line 5, in f\n    s = 'File \"/src/p.py\", line 7, in g'\n") ==
          std::vector<std::string>{"/src/m.py:5 [File \"/src/m.py\", line 5, in f]"});
    CHECK(frames("x = 1  # File \"/src/p.py\", line 7, in g\n").empty());
    // Digits must end at ',' or at the end of the line.
    CHECK(frames("File \"a.py\", line 15x, in f\nFile \"a.py\", line 15.5, in f\nFile \"a.py\", line , in f").empty());
    CHECK(frames("File \"a.py\", line 15") == std::vector<std::string>{"a.py:15 [File \"a.py\", line 15]"});
    CHECK(frames("File \"a.py\", line 99999999999, in f").empty());  // more than an int: not a line number
    // A '"' inside the path; tabs as indentation.
    CHECK(frames("\tFile \"/src/my \"odd\" dir/m.py\", line 3, in f\n") ==
          std::vector<std::string>{"/src/my \"odd\" dir/m.py:3 [File \"/src/my \"odd\" dir/m.py\", line 3, in f]"});
    // NUL bytes are bytes like any other: in a path, in the text after the line number, in a line
    // that is not a frame; none is lost, none invented.
    using namespace std::literals;
    CHECK(frames("File \"/src/a\0b.py\", line 4, in f\0g\n  x\0 File \"/src/p.py\", line 7\nFile \"c.py\", line 9\0\n"sv) ==
          std::vector<std::string>{"/src/a\0b.py:4 [File \"/src/a\0b.py\", line 4, in f\0g]"s});
    CHECK(frames("\0File \"a.py\", line 1, in f\nFile \"b.py\", line 2, in g\0\n"sv) ==
          std::vector<std::string>{"b.py:2 [File \"b.py\", line 2, in g\0]"s});
    // CRLF and CR line ends: the '\r' is not part of the frame.
    CHECK(frames("File \"a.py\", line 1, in f\r\n    y = f(x)\r\nFile \"b.py\", line 2, in g\rFile \"c.py\", line 3, in h\r\n") ==
          std::vector<std::string>{"a.py:1 [File \"a.py\", line 1, in f]", "b.py:2 [File \"b.py\", line 2, in g]",
                                   "c.py:3 [File \"c.py\", line 3, in h]"});
}

TEST_CASE("paths are normalised lexically before the tail rule, POSIX and Windows") {
    using yobx::detail::normalize_path;
    using yobx::detail::same_file;
    CHECK(normalize_path("/cwd/./dir/x.py") == "/cwd/dir/x.py");
    CHECK(normalize_path("a/../b/x.py") == "b/x.py");
    CHECK(normalize_path("//src///mod.py") == "/src/mod.py");
    CHECK(normalize_path("/../x.py") == "/x.py");
    CHECK(normalize_path("../../x.py") == "../../x.py");
    CHECK(normalize_path("a/..") == ".");
    CHECK(normalize_path("C:\\src\\mod.py") == "c:/src/mod.py");
    CHECK(normalize_path("C:\\Users\\Me\\Proj\\src\\mod.py") == "c:/users/me/proj/src/mod.py");
    CHECK(normalize_path("Src\\Mod.py") == "src/mod.py");
    CHECK(normalize_path("/Home/Me/Mod.py") == "/Home/Me/Mod.py");  // POSIX keeps its case
    // Python 3.11 writes /cwd/./dir/x.py for a sys.path entry ./dir (issue 29: missed).
    CHECK(same_file("/cwd/./dir/x.py", "/cwd/dir/x.py"));
    CHECK(same_file("a/../src/mod.py", "/home/u/src/mod.py"));
    CHECK(same_file("/home//u/src/mod.py", "/home/u/src/mod.py"));
    CHECK(same_file("../src/mod.py", "/home/u/src/mod.py"));
    CHECK(same_file("src/mod.py", "/home/u/src/mod.py"));
    CHECK(same_file("/home/u/src/mod.py", "mod.py"));  // the basename tail rule
    CHECK(same_file("u/src/mod.py", "src/mod.py"));
    // Two absolute paths must be the same file (issue 29: /x//src/mod.py matched /src/mod.py).
    CHECK_FALSE(same_file("/x//src/mod.py", "/src/mod.py"));
    CHECK_FALSE(same_file("/src/mod.py", "/x/src/mod.py"));
    CHECK_FALSE(same_file("mysrc/mod.py", "/home/src/mod.py"));
    CHECK_FALSE(same_file("dir/sub/a.py", "/a.py"));
    CHECK_FALSE(same_file("..", "/a/.."));
    CHECK_FALSE(same_file("", "/src/mod.py"));
    // Windows: '\' is '/', the drive letter's case does not matter.
    CHECK(same_file("C:\\src\\mod.py", "c:/src/mod.py"));
    CHECK(same_file("src\\mod.py", "C:/home/src/mod.py"));
    CHECK_FALSE(same_file("C:\\src\\mod.py", "D:\\src\\mod.py"));
    // Windows compares names case-insensitively, POSIX does not.
    CHECK(same_file("C:\\Users\\Me\\Proj\\src\\mod.py", "c:/users/me/proj/src/mod.py"));
    CHECK(same_file("c:/users/me/proj/src/mod.py", "C:/Users/Me/Proj/Src/Mod.py"));
    CHECK(same_file("Proj/Src/mod.py", "C:\\Users\\Me\\proj\\src\\MOD.py"));
    CHECK(same_file("C:\\Users\\Me\\proj\\src\\MOD.py", "src/Mod.py"));
    CHECK_FALSE(same_file("/home/Me/src/mod.py", "/home/me/src/mod.py"));
    CHECK_FALSE(same_file("Src/mod.py", "/home/me/src/mod.py"));
}

TEST_CASE("a report matches frames whose paths differ in spelling from __FILE__") {
    scale = &double_it;
    PatchInfo triple = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    const std::string file(triple_it_source().file);
    const int line = triple_it_source().first_line + 1;
    const std::size_t slash = file.rfind('/') + 1;  // tests/patches/test_patches.cpp -> tests/patches/./test_patches.cpp
    const std::string dotted = file.substr(0, slash) + "./" + file.substr(slash);
    Graph g{{{"dotted", {{"stack_trace", frame(dotted, line, "triple_it")}}},
             {"crlf", {{"stack_trace", frame(file, line, "triple_it") + "\r\n    return factor * x;\r\n"}}},
             {"quoted", {{"stack_trace", "  File \"/elsewhere.py\", line 1, in f\n    '" + frame(file, line, "triple_it") + "'\n"}}},
             {"other_root", {{"stack_trace", frame("/nowhere/" + file, line, "triple_it")}}}}};
    if (file.starts_with('/')) g.nodes.pop_back();  // an absolute __FILE__ would not match under /nowhere anyway
    const auto involved = PatchDetails{triple}.patches_involved_in_graph(g);
    REQUIRE(involved.size() == 1);
    std::vector<std::string> names, frames;
    for (const auto& hit : involved[0].nodes) {
        names.push_back(hit.node->name);
        frames.push_back(hit.frame);
    }
    std::vector<std::string> expected_names{"dotted", "crlf"};
    if (!file.starts_with('/')) expected_names.push_back("other_root");  // a relative __FILE__ is a tail
    CHECK(names == expected_names);
    CHECK(frames[1] == frame(file, line, "triple_it"));  // no '\r'
}

TEST_CASE("make_report lists each involved patch with its diff and nodes, as text or RST") {
    scale = &double_it;
    PatchInfo triple = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    const Graph g = traced_graph();
    const PatchDetails d{triple};
    const std::string t = std::string(triple_it_source().file);
    const std::string l1 = std::to_string(triple_it_source().first_line + 2);
    const std::string l2 = std::to_string(triple_it_source().last_line);
    CHECK(d.make_report(g) == "1 patch(es) involved in the graph.\n\n" + triple.format_diff("raw") +
                                  "nodes created inside triple_it (2):\n"
                                  "  mul: File \"" + t + "\", line " + l1 + ", in triple_it\n"
                                  "  mul_1: File \"tests/patches/test_patches.cpp\", line " + l2 + ", in triple_it\n");
    CHECK(d.make_report(g, "rst") == "1 patch(es) involved in the graph.\n\n" + triple.format_diff("rst") +
                                         "\nNodes created inside ``triple_it`` (2):\n\n"
                                         "- ``mul``: ``File \"" + t + "\", line " + l1 + ", in triple_it``\n"
                                         "- ``mul_1``: ``File \"tests/patches/test_patches.cpp\", line " + l2 + ", in triple_it``\n");
    CHECK(PatchDetails{}.make_report(g) == "No patch is involved in the graph.\n");

    // A node without a `name` member is labelled by its position.
    struct BareNode {
        std::map<std::string, std::string> meta;
    };
    struct BareGraph {
        std::vector<BareNode> nodes;
    };
    const BareGraph bare{{{{}}, {{{"stack_trace", frame(t, triple_it_source().last_line, "triple_it")}}}}};
    CHECK(d.make_report(bare).ends_with("nodes created inside triple_it (1):\n  node 1: File \"" + t + "\", line " + l2 +
                                        ", in triple_it\n"));
    CHECK(d.make_report(g, yobx::DiffFormat::rst) == d.make_report(g, "rst"));
    CHECK(error_of<yobx::value_error>([&] { (void)d.make_report(g, "md"); }) ==
          "PatchDetails::make_report: unknown format 'md', expected 'raw' or 'rst'");
}

TEST_CASE("PatchGuard applies dependencies first, each once, and undoes in reverse order") {
    static_assert(!std::is_copy_constructible_v<PatchGuard> && std::is_nothrow_move_constructible_v<PatchGuard>);
    std::vector<std::string> log;
    PatchInfo base = logging_patch("base", log), a = logging_patch("a", log), b = logging_patch("b", log);
    a.add_dependency(base);
    b.add_dependency(base);
    {
        PatchGuard guard(PatchDetails{a, b});
        CHECK(log == std::vector<std::string>{"apply base", "apply a", "apply b"});
        CHECK(guard.details().size() == 3);
        CHECK(guard.details()[0] == base);
        PatchGuard moved = std::move(guard);  // the moved-from guard restores nothing
        CHECK(base.is_applied());
    }
    CHECK(log == std::vector<std::string>{"apply base", "apply a", "apply b", "undo b", "undo a", "undo base"});
    CHECK_FALSE(base.is_applied());
}

TEST_CASE("PatchGuard restores the patches already applied when one throws") {
    scale = &double_it;
    hook = &double_it;
    fast_path = false;
    PatchInfo p1 = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    PatchInfo p2 = PatchInfo::make(&triple_it, hook, {.original = "double_it", .family = "test_hook"});
    PatchInfo p3 = PatchInfo::make(true, fast_path, {.original = "fast_path", .family = "config", .name = "enable_fast_path"});
    std::vector<std::string> log;
    PatchInfo bad = logging_patch("bad", log, true);
    CHECK(error_of<std::runtime_error>([&] { PatchGuard guard(PatchDetails{p1, p2, p3, bad}); }) == "cannot apply bad");
    CHECK((scale == &double_it));
    CHECK((*hook.target<int (*)(int)>() == &double_it));
    CHECK_FALSE(fast_path);
    CHECK_FALSE(p1.is_applied());
    CHECK_FALSE(p2.is_applied());
    CHECK_FALSE(p3.is_applied());
}

TEST_CASE("PatchGuard refuses a patch that is already applied, naming it") {
    std::vector<std::string> log;
    PatchInfo a = logging_patch("a", log), b = logging_patch("b", log);
    PatchGuard outer(PatchDetails{a});
    CHECK(error_of<yobx::runtime_error>([&] { PatchGuard inner(PatchDetails{b, a}); }) ==
          "PatchInfo::apply: patch 'a' is already applied");
    CHECK_FALSE(b.is_applied());  // b was restored when a failed
}

TEST_CASE("two nested guards over the same target restore correctly, inner first") {
    scale = &double_it;
    PatchInfo outer_patch = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "outer"});
    PatchInfo inner_patch = PatchInfo::make(&halve_it, scale, {.original = "triple_it", .family = "inner", .name = "halve_it"});
    {
        PatchGuard outer(PatchDetails{outer_patch});
        CHECK(scale(6) == 18);
        {
            PatchGuard inner(PatchDetails{inner_patch});
            CHECK(scale(6) == 3);
        }
        CHECK(scale(6) == 18);
    }
    CHECK((scale == &double_it));
}

TEST_CASE("a log stream that throws leaves no target patched (issue 29)") {
    scale = &double_it;
    fast_path = false;
    PatchInfo p1 = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"});
    PatchInfo p2 = PatchInfo::make(true, fast_path, {.original = "fast_path", .family = "config", .name = "enable_fast_path"});
    // A log whose writes throw, and a stream that lets the exception out.
    struct FullBuffer : std::streambuf {
        int_type overflow(int_type) override { throw std::runtime_error("the log is full"); }
        std::streamsize xsputn(const char*, std::streamsize) override { throw std::runtime_error("the log is full"); }
    } buffer;
    std::ostream log(&buffer);
    log.exceptions(std::ios::badbit);
    // The first patch is applied, then its log line throws: both patches must end unapplied.
    CHECK(error_of<std::runtime_error>([&] { PatchGuard guard(PatchDetails{p1, p2}, &log); }) == "the log is full");
    CHECK((scale == &double_it));
    CHECK_FALSE(fast_path);
    CHECK_FALSE(p1.is_applied());
    CHECK_FALSE(p2.is_applied());
}

TEST_CASE("guards over one target destroyed in the wrong order still restore the original (issue 29)") {
    scale = &double_it;
    hook = &double_it;
    PatchInfo outer_patch = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "outer"});
    PatchInfo inner_patch = PatchInfo::make(&halve_it, scale, {.original = "triple_it", .family = "inner", .name = "halve_it"});
    PatchInfo hook_outer = PatchInfo::make(&triple_it, hook, {.original = "double_it", .family = "hook_outer"});
    PatchInfo hook_inner = PatchInfo::make(&halve_it, hook, {.original = "triple_it", .family = "hook_inner", .name = "halve_it"});
    {
        std::vector<PatchGuard> guards;  // destroyed front to back: the outer guard first
        guards.emplace_back(PatchDetails{outer_patch, hook_outer});
        guards.emplace_back(PatchDetails{inner_patch, hook_inner});
        CHECK(scale(6) == 3);
        CHECK(hook(6) == 3);
        guards.front().restore();  // the outer patches end first: the inner ones still hold the targets
        CHECK(scale(6) == 3);
        CHECK(hook(6) == 3);
        CHECK_FALSE(outer_patch.is_applied());
    }
    CHECK((scale == &double_it));
    CHECK((*hook.target<int (*)(int)>() == &double_it));
    {
        std::vector<PatchGuard> guards;
        guards.emplace_back(PatchDetails{outer_patch});
        guards.emplace_back(PatchDetails{inner_patch});
    }  // the vector's own order
    CHECK((scale == &double_it));
    // Three patches, the middle one undone first.
    PatchInfo third = PatchInfo::make(&double_it, scale, {.original = "halve_it", .family = "third", .name = "double_it"});
    outer_patch.apply();
    inner_patch.apply();
    third.apply();
    inner_patch.undo();
    CHECK(scale(6) == 12);
    third.undo();
    CHECK(scale(6) == 18);
    outer_patch.undo();
    CHECK((scale == &double_it));
}

TEST_CASE("threads apply and undo patches of their own targets at the same time") {
    // PatchInfo::make's targets share one registry per target type: it must be safe across threads.
    std::vector<int> targets(8, 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < targets.size(); ++t)
        threads.emplace_back([&targets, t] {
            PatchInfo a = PatchInfo::make(1, targets[t], {.original = "zero", .family = "thread" + std::to_string(t), .name = "one"});
            PatchInfo b = PatchInfo::make(2, targets[t], {.original = "one", .family = "thread" + std::to_string(t), .name = "two"});
            for (int i = 0; i < 200; ++i) {
                PatchGuard outer(PatchDetails{a});
                PatchGuard inner(PatchDetails{b});
                if (targets[t] != 2) throw std::logic_error("wrong value under the guards");
                outer.restore();  // out of order: the target stays 2 until inner ends
                if (targets[t] != 2) throw std::logic_error("wrong value after the outer restore");
            }
        });
    for (auto& th : threads) th.join();
    CHECK(targets == std::vector<int>(8, 0));
}

TEST_CASE("restore() undoes every patch, then rethrows the first failure") {
    std::vector<std::string> log;
    bool fail = true;
    PatchInfo fragile("fragile", "f", "test", [] {}, [&] {
        if (fail) throw std::runtime_error("cannot undo fragile");
    });
    PatchInfo after = logging_patch("after", log);
    PatchGuard guard(PatchDetails{after, fragile});
    CHECK(error_of<std::runtime_error>([&] { guard.restore(); }) == "cannot undo fragile");
    CHECK(log == std::vector<std::string>{"apply after", "undo after"});
    CHECK(guard.details().size() == 2);  // what the guard applied stays readable
}

namespace {

// x[a, b] + y[c, b] where nothing relates a and c (the seed's TinyBroadcastAddModel).
std::string broadcast_add(bool expand = false) {
    yobx::ShapeEnv env;
    yobx::ShapeInference si(env);
    const auto a = env.create_symbol("a", 4), b = env.create_symbol("b", 8), c = env.create_symbol("c", 4);
    const yobx::SymTensor x({a, b}, yobx::DType::float32), y({c, b}, yobx::DType::float32);
    std::ostringstream s;
    if (expand) s << yobx::shape::expand(env, {a, b}, {c, b})[0];
    else s << si.add(x, y);
    return s.str();
}

}  // namespace

TEST_CASE("with the shipped patches, the broadcast-add model infers [Max(a, c), b] and after them it throws again") {
    CHECK(error_of<yobx::GuardOnDataDependentSymNode>([] { broadcast_add(); }).starts_with(
        "Could not guard on data-dependent expression Eq(a, c)"));
    {
        auto guard = yobx::apply_patches_for_model();
        CHECK(broadcast_add() == "SymTensor(float32, [Max(a, c), b])");
        CHECK(broadcast_add(true) == "Max(a, c)");  // infer_size, through Expand
        CHECK((yobx::shape_hooks.broadcast_shapes == &yobx::patches::patched_broadcast_shapes));
    }
    CHECK((yobx::shape_hooks.broadcast_shapes == &yobx::shape::default_broadcast_shapes));
    CHECK((yobx::shape_hooks.infer_size == &yobx::shape::default_infer_size));
    CHECK(error_of<yobx::GuardOnDataDependentSymNode>([] { broadcast_add(true); }).starts_with(
        "Could not guard on data-dependent expression Eq(a, c)"));
}

TEST_CASE("a patch of a hook table entry finds the sources of the default rule and of the patch") {
    // the entry is a ShapeHook, empty for the default: source_of_value asks it which function it calls
    const PatchInfo p = PatchInfo::make(&yobx::patches::patched_infer_size<>, yobx::shape_hooks.infer_size,
                                        {.original = "default_infer_size", .family = "user"});
    REQUIRE(p.original_source().has_value());
    CHECK(p.original_source()->name == "default_infer_size");
    REQUIRE(p.patch_source().has_value());
    CHECK(p.patch_source()->name == "patched_infer_size");
}

TEST_CASE("apply_patches_for_model applies the user's patches after the shipped ones and prints them when verbose") {
    scale = &double_it;
    PatchInfo user = PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "user"});
    std::ostringstream out;
    {
        auto guard = yobx::apply_patches_for_model({.patches = {user}, .verbose = true, .log = &out});
        std::vector<std::string> names;
        for (const auto& p : guard.details()) names.push_back(p.name());
        CHECK(names == std::vector<std::string>{"patched_broadcast_shapes", "patched_infer_size", "triple_it"});
        CHECK(scale(1) == 3);
    }
    CHECK(out.str() ==
          "[PatchGuard] applied yobx: default_broadcast_shapes -> patched_broadcast_shapes\n"
          "[PatchGuard] applied yobx: default_infer_size -> patched_infer_size\n"
          "[PatchGuard] applied user: double_it -> triple_it\n"
          "[PatchGuard] undone user: double_it -> triple_it\n"
          "[PatchGuard] undone yobx: default_infer_size -> patched_infer_size\n"
          "[PatchGuard] undone yobx: default_broadcast_shapes -> patched_broadcast_shapes\n");
    auto only_user = yobx::apply_patches_for_model({.patch_yobx = false, .patches = {user}});
    CHECK(only_user.details().size() == 1);
}

TEST_CASE("the shipped patches' diffs show the guard replaced by sym_max") {
    const PatchDetails shipped = yobx::shipped_patches();
    REQUIRE(shipped.size() == 2);
    CHECK(shipped[0].refid() == "patch-yobx-patched_broadcast_shapes");
    CHECK(shipped[1].title() == "yobx: default_infer_size -> patched_infer_size");
    const std::string diff = shipped[1].make_diff();
    CHECK(diff ==
          "--- original\n"
          "+++ rewritten\n"
          "@@ -1,4 +1,4 @@\n"
          "-template <class = void> Shape default_infer_size(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy, "
          "std::string_view op, source_location where) {\n"
          "-    const std::array<Shape, 2> shapes{a, b};\n"
          "-    return default_broadcast_shapes(env, shapes, policy, op, where);\n"
          "+template <class = void> Shape patched_infer_size(ShapeEnv& env, const Shape& a, const Shape& b, BroadcastPolicy policy, "
          "std::string_view op, source_location where) {\n"
          "+    if (policy == BroadcastPolicy::strict) policy = BroadcastPolicy::sym_max;\n"
          "+    return shape::default_infer_size(env, a, b, policy, op, where);\n"
          " }\n");
}

TEST_CASE("the seed's positional PatchInfo::make still works, deprecated for the named form") {
    std::function<int(int)> scale = double_it;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    PatchInfo p = PatchInfo::make(&triple_it, scale, "double_it", "test");
    PatchInfo named = PatchInfo::make(&halve_it, scale, "double_it", "test", "halve_it");
#pragma GCC diagnostic pop
    CHECK(p.title() == PatchInfo::make(&triple_it, scale, {.original = "double_it", .family = "test"}).title());
    CHECK(named.name() == "halve_it");
    p.apply();
    CHECK(scale(2) == 6);
    p.undo();
    CHECK(scale(2) == 4);
}
