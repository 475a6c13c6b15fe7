// parse + simplify of transformer shape expressions, and equality of expression
// pairs (benchmarks/sym_corpus.txt, sym_pairs.txt). Run through compare_sym.py
// to see the ratio against SymPy. `bench_sym --decide` prints yobx's verdict on
// each pair (1 equal, 0 not proven equal) for compare_sym.py to check.
#include <yobx/sym.hpp>

#include <benchmark/benchmark.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> lines(const char* file) {
    std::ifstream in(std::string(YOBX_BENCH_DIR) + "/" + file);
    std::vector<std::string> out;
    for (std::string l; std::getline(in, l);)
        if (!l.empty() && l[0] != '#') out.push_back(trim(l));
    if (out.empty()) throw std::runtime_error(std::string("bench_sym: cannot read ") + file);
    return out;
}

const std::vector<std::string>& corpus() {
    static const auto c = lines("sym_corpus.txt");
    return c;
}

const std::vector<std::pair<std::string, std::string>>& pairs() {
    static const auto p = [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& l : lines("sym_pairs.txt")) {
            const auto at = l.find(';');
            out.emplace_back(trim(l.substr(0, at)), trim(l.substr(at + 1)));
        }
        return out;
    }();
    return p;
}

bool equal(const std::string& a, const std::string& b) { return yobx::parse_sym(a).identical(yobx::parse_sym(b)); }

// Parse into the canonical form: what SymPy does with sympify + simplify.
void parse_simplify(benchmark::State& state) {
    const auto& c = corpus();
    for (auto _ : state)
        for (const auto& text : c) benchmark::DoNotOptimize(yobx::parse_sym(text));
    state.counters["expressions"] = static_cast<double>(c.size());
}
BENCHMARK(parse_simplify);

// Decide equality from the text: two parses and a structural comparison.
void equality(benchmark::State& state) {
    const auto& p = pairs();
    for (auto _ : state)
        for (const auto& [a, b] : p) benchmark::DoNotOptimize(equal(a, b));
    state.counters["pairs"] = static_cast<double>(p.size());
}
BENCHMARK(equality);

// Equality of expressions already parsed (a hash check, then a structural walk).
void equality_parsed(benchmark::State& state) {
    std::vector<std::pair<yobx::SymInt, yobx::SymInt>> parsed;
    for (const auto& [a, b] : pairs()) parsed.emplace_back(yobx::parse_sym(a), yobx::parse_sym(b));
    for (auto _ : state)
        for (const auto& [a, b] : parsed) benchmark::DoNotOptimize(a.identical(b));
    state.counters["pairs"] = static_cast<double>(parsed.size());
}
BENCHMARK(equality_parsed);

// Equality proven by a ShapeEnv (its ranges, replacements and bounds), on parsed pairs:
// the question the observer and the shape rules ask. Symbols are created on first sight.
void shape_env_proof(benchmark::State& state) {
    yobx::ShapeEnv env;
    std::vector<yobx::SymBool> questions;
    for (const auto& [a, b] : pairs()) questions.push_back(yobx::parse_sym(a) == yobx::parse_sym(b));
    for (auto _ : state)
        for (const auto& q : questions) benchmark::DoNotOptimize(env.statically_known_true(q));
    state.counters["pairs"] = static_cast<double>(questions.size());
}
BENCHMARK(shape_env_proof);

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "--decide") == 0) {
        for (const auto& [a, b] : pairs()) std::cout << (equal(a, b) ? 1 : 0) << "\n";
        for (const auto& text : corpus()) std::cout << "= " << yobx::parse_sym(text) << "\n";
        return 0;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
