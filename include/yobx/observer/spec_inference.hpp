// yobx/observer/spec_inference.hpp — the ExportSpec of InputObserverInfo.
//
// Inputs with their shapes and labels, ranges, relations and hints, constants,
// what value_if_missing filled in, and the warnings of the readiness report.
// Included by yobx/observer/info.hpp, which declares the class.
#pragma once

#include <yobx/observer/info.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace yobx {

template <class T>
ExportSpec InputObserverInfo<T>::infer_export_spec(const DynamicShapesOptions& options) {
    DynamicShapesOptions o = options;
    if (o.dim_names.mode() == DimNames::Mode::none) o.dim_names = DimNames::automatic();
    ExportSpec spec;
    const auto dims = infer_dynamic_dimensions(o.set_batch_dimension_for);
    const auto labels = label_dims(dims, o.dim_names);
    const auto observed = dim_series(dims, labels, /*assumed=*/false);
    const auto assumed = dim_series(dims, labels, /*assumed=*/true);
    check_bounds(o.bounds, observed);
    Relations rel = find_relations(assumed, o.relations);
    spec.dynamic_shapes = mirror_best(dims, labels);
    if (o.derived_dims) spec.dynamic_shapes = with_definitions(std::move(spec.dynamic_shapes), assumed, rel.relations, o);
    spec.num_calls = inputs_.size();
    const auto names = flat_names();
    for (std::size_t f = 0; f < dims.size(); ++f) {
        InputSpec in{names[f], shapes_at(f), {}};
        for (std::size_t i = 0; i < dims[f].size(); ++i) in.dims.push_back({dims[f][i], labels[f][i]});
        spec.inputs.push_back(std::move(in));
    }
    for (const auto& series : observed) {
        DimRange r;
        r.label = series.label;
        bool any = false;
        std::size_t small = 0, known = 0;
        for (const auto& v : series.values) {
            if (!v) continue;
            r.observed_min = any ? std::min(r.observed_min, *v) : *v;
            r.observed_max = any ? std::max(r.observed_max, *v) : *v;
            any = true;
            ++known;
            if (*v <= 1) ++small;
        }
        r.zero_or_one = small > 0;
        r.min = r.observed_min;
        r.max = r.observed_max;
        if (auto b = o.bounds.find(series.label); b != o.bounds.end()) {
            r.min = b->second.first;
            r.max = b->second.second;
            r.user_bounds = true;
        }
        if (r.zero_or_one)
            spec.warnings.push_back("dimension " + detail::repr_string(r.label) + " is 0 or 1 in " + std::to_string(small) +
                                    " of " + std::to_string(known) +
                                    " calls: torch.export specializes sizes 0 and 1 (with Dim.DYNAMIC it refuses to "
                                    "export), so export with infer_export_arguments(), where every dynamic "
                                    "dimension is at least 2");
        spec.ranges.push_back(std::move(r));
    }
    spec.relations = std::move(rel.relations);
    spec.hints = std::move(rel.hints);
    for (const auto& [k, v] : inputs_[best_].cst_kwargs()) spec.constants.insert_or_assign(k, v.repr());
    for (std::size_t c = 0; c < inputs_.size(); ++c)
        for (const auto& name : inputs_[c].filled()) {
            if (!spec.filled.contains(name)) spec.filled.insert_or_assign(name, std::vector<std::size_t>{});
            spec.filled.find(name)->second.push_back(c);
        }
    for (const auto& w : recorded_warnings()) spec.warnings.push_back(w);
    if (inputs_.size() == 1 && o.set_batch_dimension_for.empty()) spec.warnings.push_back(result_warnings().front());
    spec.absent = absent_inputs();
    for (const auto& a : spec.absent)
        if (a.checked && !a.failing.empty())
            spec.warnings.push_back("the fill of input " + detail::repr_string(a.name) + " does not reproduce call(s) " +
                                    AbsentInput::join(a.failing) + " (see Absent inputs)");
    // An explicit label on an axis that never varied: torch.export would see a constant there.
    if (o.dim_names.mode() == DimNames::Mode::explicit_map) {
        std::set<std::string> dynamic_labels;
        for (const auto& series : observed) dynamic_labels.insert(series.label);
        for (const auto& [ref, axes] : o.dim_names.map()) {
            const std::string name = ref.is_position() && static_cast<std::size_t>(ref.position()) < sig_.size()
                                         ? sig_[static_cast<std::size_t>(ref.position())].name
                                         : (ref.is_position() ? std::string() : ref.name());
            for (std::size_t f = 0; f < dims.size(); ++f) {
                if (slots_[slot_of(f)].name != name) continue;
                for (const auto& [axis, label] : axes) {
                    if (std::find(dims[f].begin(), dims[f].end(), axis) != dims[f].end()) continue;
                    const auto& shapes = shapes_at(f);
                    const auto sh = std::find_if(shapes.begin(), shapes.end(), [](const auto& x) { return x.has_value(); });
                    if (sh == shapes.end() || axis < 0 || static_cast<std::size_t>(axis) >= (*sh)->size()) continue;
                    spec.warnings.push_back(names[f] + " axis " + std::to_string(axis) + " is named " +
                                            detail::repr_string(label) + " but was " +
                                            std::to_string((**sh)[static_cast<std::size_t>(axis)]) + " in every call" +
                                            (dynamic_labels.contains(label) ? ", while " + detail::repr_string(label) +
                                                                                  " is dynamic elsewhere"
                                                                            : std::string()) +
                                            ": torch.export will treat it as a constant");
                }
            }
        }
    }
    for (const auto& p : sig_.parameters()) {
        if (p.kind == ParamKind::var_positional || p.kind == ParamKind::var_keyword) continue;
        bool seen = false;
        for (const auto& c : inputs_) {
            const auto present = present_names(c);
            seen = seen || std::find(present.begin(), present.end(), p.name) != present.end() ||
                   c.cst_kwargs().contains(p.name);
        }
        if (!seen)
            spec.warnings.push_back("input " + detail::repr_string(p.name) +
                                    " is absent from every call: it is not part of the export arguments");
    }
    return spec;
}

// The name of each flat tensor of the best candidate: the argument, then `.key` or `.index` per level
// (`past_key_values.key_cache.0`); an *args item is `<args>_<j>`.
template <class T>
std::vector<std::string> InputObserverInfo<T>::flat_names() const {
    std::vector<std::string> out;
    const auto add = [&](const V& v, const std::string& name) {
        for (const auto& path : detail::tensor_paths(v)) {
            std::string n = name;
            for (const auto& level : path)
                n += "." + (level.kind == detail::PathLevel::Kind::key || !level.key.empty() ? level.key : std::to_string(level.position));
            out.push_back(std::move(n));
        }
    };
    const InputCandidate<T>& best = inputs_[best_];
    for (std::size_t i = 0; i < best.args().size(); ++i) {
        const auto var = sig_.var_positional();
        const std::string name = i < sig_.num_positional() || !var
                                     ? (i < sig_.size() ? sig_[i].name : "arg" + std::to_string(i))
                                     : var->first + "_" + std::to_string(i - sig_.num_positional());
        add(best.args()[i], name);
    }
    for (const auto& [k, v] : best.kwargs()) add(v, k);
    return out;
}

}  // namespace yobx
