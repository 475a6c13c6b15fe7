// Generated graphs of the shape-inference ops (ShapeInference) over inputs
// with symbolic and constant dims, run twice: on the symbols, in strict or
// draft mode, and on the symbols' hints as constants. Every failure must be a
// yobx::error; where both runs give an output, the symbolic shape and values
// evaluated at the hints must equal the concrete ones.
#pragma once

#include "generators.hpp"

#include <yobx/shape_inference.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fuzzgen {

struct ShapeOp {
    std::size_t kind = 0;
    std::vector<std::size_t> inputs;
    std::vector<std::int64_t> ints, more;
    std::int64_t number = 0;
    bool flag = false;
};

class ShapeGraphRun {
public:
    ShapeGraphRun(yobx::ShapeEnvMode mode, yobx::BroadcastPolicy policy, const yobx::SymbolValues* constants)
        : env_(mode), si_(env_, policy), constants_(constants) {}

    yobx::ShapeEnv& env() { return env_; }
    std::vector<std::optional<yobx::SymTensor>>& pool() { return pool_; }

    /// A symbol, or its hint when the run is concrete.
    yobx::SymInt dim(const std::string& name, std::int64_t hint) {
        if (constants_) return yobx::SymInt(hint);
        if (created_.insert(name).second) env_.create_symbol(name, hint);
        return yobx::SymInt::symbol(name);
    }

    static constexpr std::size_t op_count = 17;

    void run(const ShapeOp& op) {
        std::vector<const yobx::SymTensor*> in;
        for (std::size_t i : op.inputs) {
            if (i >= pool_.size() || !pool_[i]) {
                pool_.push_back(std::nullopt);
                return;
            }
            in.push_back(&*pool_[i]);
        }
        try {
            pool_.push_back(apply(op, in));
        } catch (const yobx::error&) {
            pool_.push_back(std::nullopt);
        }
    }

private:
    yobx::SymTensor apply(const ShapeOp& op, const std::vector<const yobx::SymTensor*>& in) {
        using yobx::SymTensor;
        const auto values = [](const std::vector<std::int64_t>& v) {
            std::vector<yobx::SymInt> out(v.begin(), v.end());
            return SymTensor::from_values(out);
        };
        switch (op.kind) {
            case 0: return si_.shape(*in[0], op.ints[0], op.ints[1]);
            case 1: return si_.size(*in[0]);
            case 2:
                return si_.gather(*in[0], op.flag ? SymTensor::scalar(op.number) : values(op.ints), op.more[0]);
            case 3: {
                std::vector<SymTensor> parts;
                for (auto* t : in) parts.push_back(*t);
                return si_.concat(parts, op.number);
            }
            case 4: return si_.unsqueeze(*in[0], op.ints);
            case 5:
                return op.flag ? si_.squeeze(*in[0]) : si_.squeeze(*in[0], op.ints);
            case 6:
                return si_.slice(*in[0], values(op.ints), values(op.more), std::vector<std::int64_t>{op.number},
                                 std::vector<std::int64_t>{op.flag ? -1 - (op.number & 1) : 1 + (op.number & 1)});
            case 7: return si_.reshape(*in[0], op.flag ? *in[1] : values(op.ints), op.number & 1);
            case 8: return si_.expand(*in[0], op.flag ? *in[1] : values(op.ints));
            case 9: return si_.add(*in[0], *in[1]);
            case 10: return si_.sub(*in[0], *in[1]);
            case 11: return si_.mul(*in[0], *in[1]);
            case 12: return si_.div(*in[0], *in[1]);
            case 13:
                if (op.flag) return si_.transpose(*in[0]);
                return si_.transpose(*in[0], op.ints);
            case 14: return si_.matmul(*in[0], *in[1]);
            case 15: return si_.nonzero(*in[0]);
            default:
                return si_.cast(*in[0], op.flag ? yobx::DType::int32 : yobx::DType::float32);
        }
    }

    yobx::ShapeEnv env_;
    yobx::ShapeInference si_;
    const yobx::SymbolValues* constants_;
    std::set<std::string> created_;
    std::vector<std::optional<yobx::SymTensor>> pool_;
};

/// The inputs of a graph: tensors over a, b, c (hints 2..7) and constants.
inline void shape_inputs(Bytes& in, ShapeGraphRun& run, const yobx::SymbolValues& hints) {
    const auto dim = [&](std::size_t k) -> yobx::SymInt {
        static const char* const names[] = {"a", "b", "c"};
        if (k < 3) return run.dim(names[k], hints.at(names[k]));
        return static_cast<std::int64_t>(k - 3);  // 0..4
    };
    const std::size_t n = 2 + in.below(3);
    for (std::size_t t = 0; t < n; ++t) {
        yobx::Shape shape;
        const std::size_t rank = in.below(4);
        for (std::size_t r = 0; r < rank; ++r) shape.push_back(dim(in.below(8)));
        run.pool().push_back(yobx::SymTensor(shape, in.coin() ? yobx::DType::float32 : yobx::DType::int64));
    }
    std::vector<yobx::SymInt> values;
    for (std::size_t i = 0, k = 1 + in.below(3); i < k; ++i) values.push_back(in.coin() ? dim(in.below(3)) : yobx::SymInt(-1 + static_cast<std::int64_t>(in.below(5))));
    run.pool().push_back(yobx::SymTensor::from_values(values));
}

inline ShapeOp shape_op(Bytes& in, std::size_t pool_size) {
    static const std::int64_t bounds[] = {-5, -2, -1, 0, 1, 2, 3, 5, std::numeric_limits<std::int64_t>::max(),
                                          std::numeric_limits<std::int64_t>::min()};
    const auto small = [&] { return static_cast<std::int64_t>(in.below(9)) - 4; };
    ShapeOp op;
    op.kind = in.below(ShapeGraphRun::op_count);
    const std::size_t arity = op.kind == 3 ? 1 + in.below(3) : (op.kind >= 7 && op.kind <= 14 && op.kind != 13) ? 2 : 1;
    for (std::size_t i = 0; i < arity; ++i) op.inputs.push_back(pool_size - 1 - in.below(std::min<std::size_t>(pool_size, 6)));
    op.flag = in.coin();
    op.number = small();
    for (std::size_t i = 0, n = 1 + in.below(3); i < n; ++i) op.ints.push_back(op.kind == 6 ? in.pick(bounds) : small());
    op.more.push_back(op.kind == 6 ? in.pick(bounds) : small());
    if (op.kind == 0) op.ints.resize(2, std::numeric_limits<std::int64_t>::max());
    if (op.kind == 6) op.ints.resize(1);
    if (op.kind == 8 && !op.flag)
        for (auto& v : op.ints) v = v < 0 ? 1 : v;
    return op;
}

/// `symbolic` evaluated at `hints` equals `concrete`, for each dim and value
/// concrete knows as a constant and symbolic expresses in a, b, c. Returns true
/// where the hints leave sym_max's documented assumption (a side of 0 broadcast
/// with 1 gives Max = 1, not 0): what follows is outside it and is not compared.
inline bool compare_runs(const yobx::SymTensor& symbolic, const yobx::SymTensor& concrete, const yobx::SymbolValues& hints,
                         yobx::BroadcastPolicy policy, const std::string& where) {
    bool outside = false;
    const auto same = [&](const std::vector<yobx::SymInt>& s, const std::vector<yobx::SymInt>& c, const char* what) {
        if (s.size() != c.size()) defect(where + ": " + what + " lengths differ: " + symbolic.to_string() + " vs " + concrete.to_string());
        for (std::size_t i = 0; i < s.size(); ++i) {
            const auto cv = c[i].maybe_constant();
            if (!cv) continue;
            bool known = true;
            for (const auto& name : s[i].free_symbols()) known = known && hints.contains(name);
            if (!known) continue;
            std::int64_t sv = 0;
            try {
                sv = s[i].evaluate_with(hints);
            } catch (const yobx::value_error&) {
                continue;  // a division by zero or overflow in an expression the concrete run never formed
            }
            // sym_max's documented assumption: a side broadcast with 1 is not 0 (the ShapeEnv may
            // have simplified the Max away, so the value says it: 1 where the broadcast is 0)
            if (policy == yobx::BroadcastPolicy::sym_max && sv == 1 && *cv == 0) {
                outside = true;
                continue;
            }
            if (sv != *cv) defect(where + ": " + what + " " + std::to_string(i) + " is " + s[i].to_string() + " = " +
                                  std::to_string(sv) + " at the hints, the concrete run gives " + std::to_string(*cv) +
                                  " (" + symbolic.to_string() + " vs " + concrete.to_string() + ")");
        }
    };
    if (symbolic.dtype() != concrete.dtype()) defect(where + ": dtypes differ");
    same(symbolic.shape(), concrete.shape(), "dimension");
    if (symbolic.values() && concrete.values()) same(*symbolic.values(), *concrete.values(), "value");
    return outside;
}

inline void check_shape_graph(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const auto mode = in.coin() ? yobx::ShapeEnvMode::strict : yobx::ShapeEnvMode::draft;
    static const yobx::BroadcastPolicy policies[] = {yobx::BroadcastPolicy::strict, yobx::BroadcastPolicy::sym_max,
                                                     yobx::BroadcastPolicy::new_symbol};
    const auto policy = in.pick(policies);
    yobx::SymbolValues hints;
    for (const char* name : {"a", "b", "c"}) hints[name] = 2 + static_cast<std::int64_t>(in.below(6));
    ShapeGraphRun symbolic(mode, policy, nullptr), concrete(yobx::ShapeEnvMode::strict, policy, &hints);
    // The same bytes build the same inputs in both runs.
    Bytes for_concrete = in;
    shape_inputs(in, symbolic, hints);
    shape_inputs(for_concrete, concrete, hints);
    for (std::size_t k = 0, n = in.below(16); k < n; ++k) {
        const ShapeOp op = shape_op(in, symbolic.pool().size());
        symbolic.run(op);
        concrete.run(op);
        const auto& s = symbolic.pool().back();
        const auto& c = concrete.pool().back();
        if (s && c && compare_runs(*s, *c, hints, policy, "op " + std::to_string(k) + " (kind " + std::to_string(op.kind) + ")"))
            return;
    }
}

}  // namespace fuzzgen
