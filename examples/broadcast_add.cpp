// The tiny broadcast-add model of the patches guide: x[a, b] + y[c, b] where
// nothing relates a and c. Broadcasting needs a == c, or one of them to be 1,
// and nothing can prove either: each broadcast policy answers differently.
#include <yobx/shape_inference.hpp>

#include <iostream>
#include <span>
#include <string_view>
#include <utility>

using namespace yobx;

// TinyBroadcastAddModel.forward, in shapes.
SymTensor forward(ShapeInference& si, const SymTensor& x, const SymTensor& y) { return si.add(x, y); }

// Inputs seen at run time: x is [4, 8], y is [4, 8]; only the hints say a == c.
std::pair<SymTensor, SymTensor> inputs(ShapeEnv& env) {
    const SymInt a = env.create_symbol("a", 4, ValueRange::at_least(2));
    const SymInt b = env.create_symbol("b", 8, ValueRange::at_least(2));
    const SymInt c = env.create_symbol("c", 4, ValueRange::at_least(2));
    return {SymTensor({a, b}, DType::float32), SymTensor({c, b}, DType::float32)};
}

// A replacement for the broadcast rule, as the patch layer installs one.
Shape broadcast_with_sym_max(ShapeEnv& env, std::span<const Shape> shapes, BroadcastPolicy, std::string_view op,
                             source_location where) {
    return shape::default_broadcast_shapes(env, shapes, BroadcastPolicy::sym_max, op, where);
}

int main() {
    std::cout << "== strict\n";
    {
        ShapeEnv env;
        ShapeInference si(env);
        auto [x, y] = inputs(env);
        try {
            forward(si, x, y);
        } catch (const GuardOnDataDependentSymNode& e) {
            std::cout << "GuardOnDataDependentSymNode: " << e.what() << "\n";
        }
    }

    std::cout << "\n== sym_max\n";
    {
        ShapeEnv env;
        ShapeInference si(env, BroadcastPolicy::sym_max);
        auto [x, y] = inputs(env);
        std::cout << forward(si, x, y) << "\n";
    }

    std::cout << "\n== strict, with the broadcast_shapes hook swapped for a sym_max rule\n";
    {
        ShapeEnv env;
        ShapeInference si(env);
        auto [x, y] = inputs(env);
        const BroadcastShapesFn original = std::exchange(shape_hooks.broadcast_shapes, &broadcast_with_sym_max);
        const SymTensor z = forward(si, x, y);
        shape_hooks.broadcast_shapes = original;
        std::cout << z << "\n";
    }

    std::cout << "\n== new_symbol\n";
    {
        ShapeEnv env;
        ShapeInference si(env, BroadcastPolicy::new_symbol);
        auto [x, y] = inputs(env);
        const SymTensor z = forward(si, x, y);
        const std::string s0 = z.shape()[0].to_string();
        std::cout << z << "  (" << s0 << " has hint " << *env.hint(s0) << ")\n";
    }

    std::cout << "\n== strict policy, draft ShapeEnv\n";
    {
        ShapeEnv env(ShapeEnvMode::draft);
        ShapeInference si(env);
        auto [x, y] = inputs(env);
        std::cout << forward(si, x, y) << "\n";
        std::cout << env.draft_report().to_string();
    }
}
