// The operator rules' tests (tests/onnx/ops/<family>.cpp, one file per family of
// include/yobx/onnx/ops/): attributes, one rule run on a NodeContext, shapes and values as text.
#pragma once

#include <yobx/onnx/ops.hpp>

#include "../../error_of.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rules_test {

using namespace yobx;
using namespace yobx::onnx;

inline Attribute ints(std::vector<std::int64_t> v) {
    Attribute a;
    a.kind = Attribute::Kind::ints;
    a.ints = std::move(v);
    return a;
}
inline Attribute integer(std::int64_t v) {
    Attribute a;
    a.kind = Attribute::Kind::int_;
    a.i = v;
    return a;
}
inline Attribute text(std::string v) {
    Attribute a;
    a.kind = Attribute::Kind::string;
    a.s = std::move(v);
    return a;
}

/// Runs one operator of the default domain on these inputs.
inline std::vector<std::optional<TensorInfo>> run(ShapeEnv& env, std::string_view op, int opset, std::vector<const TensorInfo*> inputs,
                                           const Attributes& attributes = {}, std::size_t outputs = 1,
                                           BroadcastPolicy policy = BroadcastPolicy::new_symbol, std::string_view domain = "") {
    const Rule rule = default_registry().find(domain, op, opset);
    REQUIRE_MESSAGE(static_cast<bool>(rule), std::string(op));
    NodeContext ctx(env, policy, domain, op, "n", opset, std::move(inputs), attributes, outputs);
    rule(ctx);
    return ctx.outputs();
}

inline std::string shape_of(const std::optional<TensorInfo>& t) {
    REQUIRE(t.has_value());
    REQUIRE(t->shape.has_value());
    return format_shape(*t->shape);
}
inline std::string values_of(const std::optional<TensorInfo>& t) {
    REQUIRE(t.has_value());
    return t->values ? format_shape(*t->values) : "none";
}

inline TensorInfo ints_tensor(std::vector<SymInt> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return TensorInfo::of(elem::int64, {n}, std::move(v));
}

}  // namespace rules_test
