// Decides equality of expression pairs with a ShapeEnv, for the comparison with
// SymPy (benchmarks/compare_sym.py --random, and the ctest sym.sympy_agreement).
// Symbols s0..s3 are backed sizes (hints 3, 5, 7, 11, range [2, oo]); u0 is an
// unbacked size (no hint, range [0, oo]), like torch's data-dependent sizes.
//
//   stdin:  one pair per line, `left ; right`
//   stdout: per pair `1` (proven equal), `0` (not proven) or `E <message>`
//           (a value_error), then `# ns_per_pair <time>`: the mean time of
//           parse + statically_known_true(Eq(left, right)) over repeated passes.
#include <yobx/sym.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

int decide(const yobx::ShapeEnv& env, const std::string& a, const std::string& b) {
    return env.statically_known_true(yobx::parse_sym(a) == yobx::parse_sym(b)) ? 1 : 0;
}

}  // namespace

int main() {
    yobx::ShapeEnv env;
    const std::int64_t hints[] = {3, 5, 7, 11};
    for (int i = 0; i < 4; ++i) env.create_symbol("s" + std::to_string(i), hints[i], yobx::ValueRange::at_least(2));
    env.create_symbol("u0", std::nullopt, yobx::ValueRange::size());

    std::vector<std::pair<std::string, std::string>> pairs;
    for (std::string line; std::getline(std::cin, line);) {
        const auto at = line.find(';');
        if (trim(line).empty()) continue;
        if (at == std::string::npos) {
            std::cerr << "sym_decider: no ';' in line: " << line << "\n";
            return 2;
        }
        pairs.emplace_back(trim(line.substr(0, at)), trim(line.substr(at + 1)));
    }
    std::vector<bool> ok(pairs.size(), true);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        try {
            std::cout << decide(env, pairs[i].first, pairs[i].second) << "\n";
        } catch (const yobx::value_error& e) {
            ok[i] = false;
            std::cout << "E " << e.what() << "\n";
        }
    }
    // timing: whole passes until 0.3 s have gone by
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    std::size_t done = 0, sink = 0;
    while (done == 0 || clock::now() - start < std::chrono::milliseconds(300)) {
        for (std::size_t i = 0; i < pairs.size(); ++i)
            if (ok[i]) sink += static_cast<std::size_t>(decide(env, pairs[i].first, pairs[i].second));
        done += 1;
    }
    const double ns = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count());
    std::size_t timed = 0;
    for (const bool b : ok) timed += b;
    std::cout << "# ns_per_pair " << (timed == 0 ? 0.0 : ns / static_cast<double>(done * timed)) << " " << (sink % 2) << "\n";
    return 0;
}
