// The same shape computation run twice: under a strict ShapeEnv it stops at
// the first guard the constraints cannot decide; under a draft ShapeEnv it
// takes the hints' answer, goes on, and reports every assumption it made.
#include <yobx/sym.hpp>

#include <iostream>
#include <string>
#include <vector>

using yobx::ShapeEnv;
using yobx::SymInt;

using yobx::Shape;  // std::vector<SymInt>, printed `[a, b + 1, 3]` by operator<< and to_string

// Multidirectional broadcast of two shapes of the same rank: equal dims, or one is 1.
Shape broadcast(ShapeEnv& env, const Shape& x, const Shape& y) {
    Shape out;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (env.evaluate(x[i] == y[i]))
            out.push_back(x[i]);
        else if (env.evaluate(x[i] == 1))
            out.push_back(y[i]);
        else if (env.evaluate(y[i] == 1))
            out.push_back(x[i]);
        else
            throw yobx::value_error("shapes " + to_string(x) + " and " + to_string(y) + " do not broadcast");
    }
    return out;
}

// The shape code of one model step: x[a, b] + y[c, b], split b into heads, add a bias [c, b] again.
Shape model_step(ShapeEnv& env) {
    const SymInt a = env.create_symbol("a", 4, yobx::ValueRange::at_least(2));
    const SymInt b = env.create_symbol("b", 64, yobx::ValueRange::at_least(2));
    const SymInt c = env.create_symbol("c", 4, yobx::ValueRange::at_least(2));
    env.check(mod(b, 8) == 0, "the hidden size splits into 8 heads");  // a constraint, not a guess

    const Shape sum = broadcast(env, {a, b}, {c, b});        // Eq(a, c) cannot be proven
    const Shape heads = {sum[0], 8, floordiv(sum[1], 8)};    // b//8 is exact: 8 divides b
    const Shape flat = {heads[0], heads[1] * heads[2]};      // 8*(b//8) simplifies to b
    return broadcast(env, {flat[0], env.simplify(flat[1])}, {c, b});  // Eq(a, c) again
}

int main() {
    std::cout << "== strict\n";
    ShapeEnv strict;
    try {
        model_step(strict);
    } catch (const yobx::GuardOnDataDependentSymNode& e) {
        std::cout << "GuardOnDataDependentSymNode: " << e.what() << "\n";
    }

    std::cout << "\n== draft\n";
    ShapeEnv draft(yobx::ShapeEnvMode::draft);
    const Shape out = model_step(draft);
    std::cout << "output shape: " << out << "\n";
    std::cout << "runtime asserts:\n";
    for (const auto& r : draft.runtime_asserts()) std::cout << "  " << r.condition << "  (" << r.message << ")\n";
    std::cout << draft.draft_report().to_string();
}
