// What the tests of broadcasting and of the operators' dims (yobx::shape::reshape, slice,
// matmul...) share: sizes as torch.export makes them, and a shape printed.
#pragma once

#include <yobx/shape_inference.hpp>

#include "error_of.hpp"

#include <cstdint>
#include <limits>
#include <string>

namespace dims_test {

using namespace yobx;

inline constexpr std::int64_t int_max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t int_min = std::numeric_limits<std::int64_t>::min();

// Sizes as torch.export makes them: at least 2, with the observed value as hint.
struct Dims {
    ShapeEnv env;
    SymInt a = env.create_symbol("a", 4, ValueRange::at_least(2));
    SymInt b = env.create_symbol("b", 8, ValueRange::at_least(2));
    SymInt c = env.create_symbol("c", 4, ValueRange::at_least(2));
    SymInt n = env.create_symbol("n", 6, ValueRange::at_least(0));
    explicit Dims(ShapeEnvMode mode = ShapeEnvMode::strict) : env(mode) {}
};

inline std::string str(const Shape& s) { return format_shape(s); }

}  // namespace dims_test
