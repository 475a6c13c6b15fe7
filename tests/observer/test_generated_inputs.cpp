// Replays of the structure-aware fuzz targets (tests/fuzz) on inputs from a
// seeded generator, so that every build of the suite (ci, clang, asan with
// _GLIBCXX_ASSERTIONS) runs them; and the unified diffs of generated text
// pairs judged by GNU patch.
#include "../error_of.hpp"
#include "../fuzz/diff_check.hpp"
#include "../fuzz/generators.hpp"
#include "../fuzz/observer_check.hpp"
#include "../fuzz/shape_graph_check.hpp"
#include "../fuzz/stack_trace_check.hpp"
#include "../fuzz/sym_laws_check.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

namespace {

namespace fs = std::filesystem;

// Runs check on `count` byte strings of up to 512 bytes from seeds 0, 1, ...
template <class Check>
void replay(Check check, std::size_t count) {
    for (std::uint64_t seed = 0; seed < count; ++seed) {
        const auto bytes = fuzzgen::random_bytes(seed, 16 + seed % 497);
        INFO("seed " << seed);
        check(bytes.data(), bytes.size());
    }
}

void write_file(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}
std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("unified_diff: generated pairs apply strictly and give the second text") {
    replay(fuzzgen::check_unified_diff, 4000);
}

TEST_CASE("shape inference: generated graphs fail only with yobx errors and agree with their run at the hints") {
    replay(fuzzgen::check_shape_graph, 4000);
}

TEST_CASE("shape inference: the graph check reads sym_max's assumption from the value, also where the Max was simplified away") {
    // Found by fuzz_shape_graph: Div of [Max(0, Min(0, a - 1) - Min(1, a - 1))] (0 at a = 4) with
    // [Min(0, a - 1) + 1] (1) is Max of the two under sym_max, which the ShapeEnv simplifies to the
    // second: 1 where the broadcast is 0, with no "Max(" left in the printed form.
    const yobx::SymInt a = yobx::SymInt::symbol("a");
    const yobx::SymTensor symbolic(yobx::Shape{sym_min(yobx::SymInt(0), a - 1) + 1}, yobx::DType::int64);
    const yobx::SymTensor concrete({0}, yobx::DType::int64);
    const yobx::SymbolValues hints{{"a", 4}};
    CHECK(fuzzgen::compare_runs(symbolic, concrete, hints, yobx::BroadcastPolicy::sym_max, "op 14"));
    CHECK(test::error_of<std::logic_error>([&] { fuzzgen::compare_runs(symbolic, concrete, hints, yobx::BroadcastPolicy::strict, "op 14"); }) ==
          "op 14: dimension 0 is Min(1, a) = 1 at the hints, the concrete run gives 0 "
          "(SymTensor(int64, [Min(1, a)]) vs SymTensor(int64, [0]))");
    // agreeing runs are inside every policy's assumptions
    CHECK_FALSE(fuzzgen::compare_runs(concrete, concrete, hints, yobx::BroadcastPolicy::sym_max, "op 0"));
}

TEST_CASE("symbolic algebra: generated expressions keep their values, print-parse identically, and every proof holds") {
    replay(fuzzgen::check_sym_laws, 3000);
}

TEST_CASE("observer: generated call sequences fail only with yobx errors, export specs survive their JSON") {
    replay(fuzzgen::check_observer, 3000);
}

TEST_CASE("stack traces: generated torch.fx traces are read frame for frame, paths by the component rule") {
    replay(fuzzgen::check_stack_trace, 4000);
}

TEST_CASE("unified_diff: generated pairs round-trip through GNU patch -F0 byte for byte") {
    // The reference is GNU patch: without it the test fails saying so, not with a bare "patch: not found".
    REQUIRE_MESSAGE(std::system("patch --version > /dev/null 2>&1") == 0,
                    "GNU patch is not installed: this test applies yobx's diffs with it (apt-get install patch; "
                    "scripts/deps.sh installs it)");
    const fs::path dir = fs::temp_directory_path() / ("yobx_diff_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir);
    std::size_t applied = 0, without_final_newline = 0;
    for (std::uint64_t seed = 0; seed < 400; ++seed) {
        const auto bytes = fuzzgen::random_bytes(1000 + seed, 256);
        fuzzgen::Bytes in(bytes.data(), bytes.size());
        const auto [before, after] = fuzzgen::text_pair(in);
        const std::string diff = yobx::detail::unified_diff(before, after, "before", "after");
        if (diff.empty()) continue;
        write_file(dir / "before", before);
        write_file(dir / "diff", diff);
        fs::remove(dir / "after");
        // --binary: keep '\r' as data; -F0: no fuzz; -s: quiet unless it fails
        const std::string command = "patch --binary -F0 -s --no-backup-if-mismatch -o '" + (dir / "after").string() + "' '" +
                                    (dir / "before").string() + "' < '" + (dir / "diff").string() + "' 2>&1";
        INFO("seed " << (1000 + seed) << "\n" << diff);
        CHECK(std::system(command.c_str()) == 0);
        CHECK(read_file(dir / "after") == after);
        ++applied;
        if (!before.ends_with('\n') || !after.ends_with('\n')) ++without_final_newline;
    }
    fs::remove_all(dir);
    CHECK(applied > 300);  // the pairs are mostly different texts
    CHECK(without_final_newline > 100);
}

TEST_CASE("unified_diff: two 20,000-line texts, linear memory") {
    std::string a, b;
    for (int i = 0; i < 20000; ++i) a += "line " + std::to_string(i * 7919 % 5003) + "\n";
    b = a;
    for (std::size_t at = 1000; at < b.size(); at += 9000) b.insert(b.find('\n', at) + 1, "inserted\n");
    const std::string diff = yobx::detail::unified_diff(a, b, "a", "b");
    std::string why;
    CHECK(fuzzgen::apply_unified_diff(a, diff, why) == b);
    CHECK(why == "");
    // completely different texts: every line removed, then every line added
    const std::string c(20000, 'x'), d(20000, 'y');
    CHECK(yobx::detail::unified_diff(c, d, "c", "d") ==
          "--- c\n+++ d\n@@ -1 +1 @@\n-" + c + "\n\\ No newline at end of file\n+" + d + "\n\\ No newline at end of file\n");
}
