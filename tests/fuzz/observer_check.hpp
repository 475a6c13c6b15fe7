// Generated call sequences for the InputObserver: tensors of ranks 0-3 with
// sizes 0-5, optional arguments, nested lists and dicts, constants, keywords
// under **kwargs, a fill for an absent input, then every inference (dynamic
// shapes, export spec, check_fills, arguments). Failures must be yobx errors; an export spec must survive its
// JSON form.
#pragma once

#include "generators.hpp"

#include <yobx/dense_tensor.hpp>
#include <yobx/observer.hpp>

#include <string>
#include <vector>

namespace fuzzgen {

using ObsTensor = yobx::DenseTensor;
using ObsValue = yobx::Value<ObsTensor>;

inline ObsTensor observer_tensor(Bytes& in, const std::vector<std::int64_t>& batch) {
    std::vector<std::int64_t> shape;
    const std::size_t rank = in.below(4);
    for (std::size_t r = 0; r < rank; ++r)
        shape.push_back(r < batch.size() && in.below(3) != 0 ? batch[r] : static_cast<std::int64_t>(in.below(6)));
    return ObsTensor::zeros(shape, in.below(4) == 0 ? yobx::DType::int64 : yobx::DType::float32);
}

inline ObsValue observer_value(Bytes& in, const std::vector<std::int64_t>& batch, int depth = 0) {
    switch (in.below(depth < 2 ? 7 : 4)) {
        case 0: return yobx::none;
        case 1: return static_cast<std::int64_t>(in.below(3));
        case 2:
        case 3: return observer_tensor(in, batch);
        case 4: {
            ObsValue::List items;
            for (std::size_t i = 0, n = in.below(3); i < n; ++i) items.push_back(observer_value(in, batch, depth + 1));
            return in.coin() ? ObsValue::list(items) : ObsValue::tuple(items);
        }
        default: {
            static const char* const keys[] = {"k", "v", "pos"};
            typename ObsValue::Dict d;
            for (std::size_t i = 0, n = in.below(3); i < n; ++i) d.insert_or_assign(keys[i], observer_value(in, batch, depth + 1));
            return ObsValue::dict(std::move(d));
        }
    }
}

inline void check_observer(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const yobx::Signature sig{yobx::param("x"), yobx::param("y", yobx::none), yobx::param("mask", yobx::none),
                              yobx::kw_only("flag", true), yobx::var_kwargs("kwargs")};
    // What an absent y or mask means (fill_if_missing), sometimes.
    using Fill = yobx::Fill<ObsTensor>;
    const Fill fills[] = {Fill::automatic(), Fill::zeros(), Fill::ones(), Fill::empty(), Fill::constant(2),
                          Fill::empty_largest_dynamic()};
    yobx::InputObserver<ObsTensor>::Options options_in;
    if (in.coin()) options_in.fill_if_missing = {{in.coin() ? "y" : "mask", fills[in.below(6)]}};
    yobx::InputObserver<ObsTensor> obs(options_in);
    auto forward = obs.wrap([](yobx::Args<ObsTensor>, yobx::Kwargs<ObsTensor>) { return ObsValue(); }, sig, 1 + in.below(4));
    static const char* const keywords[] = {"y", "mask", "flag", "cache", "extra"};
    for (std::size_t c = 0, n = 1 + in.below(4); c < n; ++c) {
        const std::vector<std::int64_t> batch{1 + static_cast<std::int64_t>(in.below(4)), static_cast<std::int64_t>(in.below(5))};
        yobx::Args<ObsTensor> args;
        yobx::Kwargs<ObsTensor> kwargs;
        for (std::size_t i = 0, k = in.below(3); i < k; ++i) args.push_back(observer_value(in, batch));
        for (std::size_t i = 0, k = in.below(3); i < k; ++i) {
            const char* key = in.pick(keywords);
            kwargs.insert_or_assign(key, std::string(key) == "flag" ? ObsValue(in.coin()) : observer_value(in, batch));
        }
        try {
            (void)forward(args, kwargs);
        } catch (const yobx::error&) {
        }
    }
    yobx::DynamicShapesOptions options;
    if (in.coin()) options.set_batch_dimension_for = true;
    if (in.coin()) options.dim_names = true;
    options.derived_dims = in.coin();
    try {
        (void)obs.infer_dynamic_shapes(options).to_python();
        (void)obs.infer_dynamic_shapes(options).to_python_strings();
    } catch (const yobx::error&) {
    }
    try {
        const yobx::ExportSpec spec = obs.infer_export_spec(options);
        const yobx::ExportSpec again = yobx::ExportSpec::from_json(spec.to_json());
        if (!(again == spec)) defect("the export spec changed through its JSON:\n" + spec.to_json());
        (void)spec.report();
        (void)spec.to_python();
    } catch (const yobx::error&) {
    }
    // The fills checked on a model that returns its first tensor argument (absent: nothing).
    try {
        for (const auto& a : obs.check_fills([](const ObsValue& call) {
                 for (const auto& v : call[0].items())
                     if (v.is_tensor()) return v;
                 for (const auto& kv : call[1].dict())
                     if (kv.second.is_tensor()) return kv.second;
                 return ObsValue();
             }))
            (void)a.to_string();
    } catch (const yobx::error&) {
    }
    try {
        (void)obs.infer_arguments().repr();
    } catch (const yobx::error&) {
    }
    for (std::size_t i = 0; i < 4; ++i) {
        try {
            (void)obs.infer_arguments(i, {.flat = in.coin()}).repr();
        } catch (const yobx::error&) {
        }
    }
    try {
        (void)obs.infer_export_arguments({.set_batch_dimension_for = in.coin() ? yobx::BatchDimensionFor(true) : yobx::BatchDimensionFor{}})
            .repr();
    } catch (const yobx::error&) {
    }
}

}  // namespace fuzzgen
