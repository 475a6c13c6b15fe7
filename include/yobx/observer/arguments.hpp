// yobx/observer/arguments.hpp — phase 4 of InputObserverInfo: the export arguments.
//
// infer_arguments fills each absent tensor of a call from the sizes the call's
// own tensors give its labels; infer_export_arguments makes sizes torch.export
// can trace without specializing (at least 2, distinct, relations kept).
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
std::vector<std::string> InputObserverInfo<T>::filled_arguments(std::size_t index) {
    align_inputs_none_values();
    check_index(index);
    const InputCandidate<T>& c = inputs_[index];
    const auto& aligned = c.aligned_flat_list();
    std::vector<std::string> out;
    for (const Slot& s : slots_) {
        const bool none = s.count > 0 && std::none_of(aligned.begin() + static_cast<std::ptrdiff_t>(s.offset),
                                                      aligned.begin() + static_cast<std::ptrdiff_t>(s.offset + s.count),
                                                      [](const auto& t) { return t.has_value(); });
        if (none || c.is_filled(s.key)) out.push_back(s.key);
    }
    return out;
}

template <class T>
auto InputObserverInfo<T>::infer_arguments(const ArgumentsOptions& options) -> V {
    align_inputs_none_values();
    const InputCandidate<T>& best = inputs_[best_];
    for (const auto& c : inputs_)
        if (c.args().size() == best.args().size() && c.kwargs().size() == best.kwargs().size())
            return build_arguments(c.aligned_flat_list(), c.filled(), options);
    return build_arguments(best.aligned_flat_list(), best.filled(), options);
}

template <class T>
auto InputObserverInfo<T>::infer_export_arguments(const ExportArgumentsOptions& options) -> V {
    align_inputs_none_values();
    if (options.min_size < 0)
        throw value_error("infer_export_arguments: min_size must be non-negative, got " + std::to_string(options.min_size));
    std::size_t base = best_;
    for (std::size_t c = 0; c < inputs_.size(); ++c) {
        const auto& flat = inputs_[c].aligned_flat_list();
        if (std::all_of(flat.begin(), flat.end(), [](const auto& t) { return t.has_value(); })) {
            base = c;
            break;
        }
    }
    std::vector<std::optional<T>> aligned = inputs_[base].aligned_flat_list();
    const Ties ties = tie_labels(options.set_batch_dimension_for);
    fill_absent(aligned, ties, inputs_[base].filled());
    // The base call's size of each label, then sizes that keep the relations.
    std::map<std::string, std::int64_t> size = label_sizes(aligned, ties);
    std::set<std::string> derived;
    for (const auto& r : ties.relations) derived.insert(r.dim);
    const auto derive = [&] { derive_sizes(ties.relations, size, /*overwrite=*/true); };
    // Free labels: at least min_size and distinct; derived ones follow. A derived size too small or
    // equal to another grows its base, a bounded number of times.
    const auto spread = [&] {
        std::set<std::int64_t> used;
        for (const auto& label : ties.order) {
            if (derived.contains(label) || !size.contains(label)) continue;
            std::int64_t& v = size[label];
            v = std::max(v, options.min_size);
            while (used.contains(v)) ++v;
            used.insert(v);
        }
    };
    spread();
    derive();
    for (int round = 0; round < 256; ++round) {
        const DimRelation* bad = nullptr;
        for (const auto& r : ties.relations) {
            const auto d = size.find(r.dim);
            if (d == size.end()) continue;
            const bool clash = std::any_of(size.begin(), size.end(),
                                           [&](const auto& kv) { return kv.first != r.dim && kv.second == d->second; });
            const auto seen = ties.observed.find(r.dim);
            const bool observed = r.kind == RelationKind::sum && seen != ties.observed.end() &&
                                  seen->second.contains(d->second);
            if (d->second < options.min_size || clash || observed) {
                bad = &r;
                break;
            }
        }
        if (!bad) break;
        size[bad->base] += bad->kind == RelationKind::floordiv ? bad->constant : 1;
        spread();
        derive();
    }
    for (std::size_t f = 0; f < aligned.size(); ++f) {
        std::vector<std::int64_t> shape = shape_of(*aligned[f]);
        bool changed = false;
        for (std::size_t i = 0; i < ties.dims[f].size(); ++i) {
            const auto& label = ties.labels[f][i];
            const auto axis = static_cast<std::size_t>(ties.dims[f][i]);
            if (!label || !size.contains(*label) || shape[axis] == size[*label]) continue;
            shape[axis] = size[*label];
            changed = true;
        }
        if (changed) aligned[f] = tensor_traits<T>::zeros(shape, *aligned[f]);
    }
    return pack_arguments(std::move(aligned), {.flat = options.flat, .as_args_kwargs = options.as_args_kwargs});
}

template <class T>
auto InputObserverInfo<T>::infer_arguments(std::size_t index, const ArgumentsOptions& options) -> V {
    align_inputs_none_values();
    check_index(index);
    return build_arguments(inputs_[index].aligned_flat_list(), inputs_[index].filled(), options);
}

template <class T>
auto InputObserverInfo<T>::infer_arguments(const V& args_or_kwargs, const ArgumentsOptions& options) -> V {
    align_inputs_none_values();
    Args<T> args;
    Kwargs<T> kwargs;
    Kwargs<T> cst;
    if (args_or_kwargs.kind() == V::Kind::tuple || args_or_kwargs.kind() == V::Kind::list) {
        args = args_or_kwargs.items();
    } else if (args_or_kwargs.kind() == V::Kind::dict) {
        for (const auto& [k, v] : args_or_kwargs.dict()) {
            if (defaults_.contains(k)) cst.append_unique(k, v);
            else kwargs.append_unique(k, v);
        }
    } else {
        throw value_error("Unexpected type " + args_or_kwargs.type_name() + " for index_or_args_or_kwargs.");
    }
    check_binding(args, kwargs);
    // An argument named here that no call recorded cannot be built.
    std::size_t position = inputs_[best_].size();
    const std::vector<std::string> best_names = present_names(inputs_[best_]);
    for (const auto& [k, v] : kwargs) {
        if (std::find(best_names.begin(), best_names.end(), k) != best_names.end()) continue;
        if (v.is_none())
            throw runtime_error("There is no tensor at position " + std::to_string(position) +
                                " in any flattened inputs. (argument " + detail::repr_string(k) +
                                " was never recorded; give its shape with value_if_missing)");
        throw runtime_error("At least one call to the observed model must contain all the named arguments. "
                            "The given arguments have " + detail::repr_names({k}) +
                            " but no recorded call has it.");
    }
    Kwargs<T> kept;
    for (auto& [k, v] : kwargs)
        if (!v.is_none()) kept.append_unique(k, std::move(v));
    InputCandidate<T> c(std::move(args), std::move(kept), std::move(cst), false);
    const auto saved = captured_;  // the stored calls' counts, which checking c must not change
    try {
        align_with(c);
    } catch (...) {
        captured_ = saved;
        throw;
    }
    captured_ = saved;
    check_aligned_sizes(std::span<const InputCandidate<T>>(&c, 1));
    return build_arguments(c.aligned_flat_list(), c.filled(), options);
}

template <class T>
auto InputObserverInfo<T>::tie_labels(const BatchDimensionFor& batch) -> Ties {
    Ties t;
    t.dims = infer_dynamic_dimensions(batch);
    t.labels = label_dims(t.dims, DimNames::automatic());
    const auto series = dim_series(t.dims, t.labels, /*assumed=*/true);
    for (const auto& x : series) {
        t.order.push_back(x.label);
        for (std::size_t c = 0; c < x.values.size(); ++c)
            if (x.values[c] && !x.is_imputed(c)) t.observed[x.label].insert(*x.values[c]);
    }
    t.relations = find_relations(series).relations;
    return t;
}

// The size of each label in one call, from its tensors (the first that has it), then from the
// relations whose terms are known.
template <class T>
std::map<std::string, std::int64_t> InputObserverInfo<T>::label_sizes(const std::vector<std::optional<T>>& aligned,
                                                                      const Ties& ties) {
    std::map<std::string, std::int64_t> size;
    for (std::size_t f = 0; f < aligned.size(); ++f) {
        if (!aligned[f]) continue;
        const std::vector<std::int64_t> shape = shape_of(*aligned[f]);
        for (std::size_t i = 0; i < ties.dims[f].size(); ++i)
            if (ties.labels[f][i] && static_cast<std::size_t>(ties.dims[f][i]) < shape.size())
                size.try_emplace(*ties.labels[f][i], shape[static_cast<std::size_t>(ties.dims[f][i])]);
    }
    derive_sizes(ties.relations, size, /*overwrite=*/false);
    return size;
}

// The sizes the relations give their derived labels, where their terms have sizes (`overwrite`:
// also where the derived label has one already).
template <class T>
void InputObserverInfo<T>::derive_sizes(const std::vector<DimRelation>& relations,
                                        std::map<std::string, std::int64_t>& size, bool overwrite) {
    for (const auto& r : relations) {
        if (!overwrite && size.contains(r.dim)) continue;
        const auto b = size.find(r.base);
        if (b == size.end()) continue;
        switch (r.kind) {
            case RelationKind::offset: size[r.dim] = b->second + r.constant; break;
            case RelationKind::scale: size[r.dim] = b->second * r.constant; break;
            case RelationKind::floordiv: size[r.dim] = detail::floor_div(b->second, r.constant); break;
            case RelationKind::sum:
                if (const auto o = size.find(r.other); o != size.end()) size[r.dim] = b->second + o->second;
                break;
        }
    }
}

// Fills each absent tensor of one call (`filled`: the inputs value_if_missing supplied in it, which a
// fill_if_missing entry replaces). The call's shape of an input is its last recorded shape, each
// dynamic axis whose label (or a relation) has a size in this call taking that size; the input's
// Fill (automatic by default, see fill.hpp) makes the tensor from it.
template <class T>
void InputObserverInfo<T>::fill_absent(std::vector<std::optional<T>>& aligned, const Ties& ties,
                                       const std::vector<std::string>& filled) const {
    for (std::size_t f = 0; f < aligned.size(); ++f) {
        const std::string& key = slots_[slot_of(f)].key;
        if (aligned[f] && replaces_value(key) && std::find(filled.begin(), filled.end(), key) != filled.end())
            aligned[f].reset();  // fill_if_missing takes precedence over value_if_missing
    }
    const std::map<std::string, std::int64_t> size = label_sizes(aligned, ties);
    for (std::size_t f = 0; f < aligned.size(); ++f) {
        if (aligned[f]) continue;
        const T* seen = nullptr;
        for (const auto& c : inputs_)
            if (const auto& t = c.aligned_flat_list()[f]) seen = &*t;  // the last one, as the seed does
        if (!seen) throw runtime_error("There is no tensor at position " + std::to_string(f) + " in any flattened inputs.");
        const Slot& slot = slots_[slot_of(f)];
        const Fill<T> fill = fill_of(slot.key);
        if (fill.kind() == Fill<T>::Kind::automatic && detail::numel(*seen) == 0) {
            aligned[f] = *seen;
            continue;
        }
        std::vector<std::int64_t> shape = shape_of(*seen);
        std::int64_t untied = -1, largest = -1;
        for (std::size_t i = 0; i < ties.dims[f].size(); ++i) {
            const auto axis = static_cast<std::size_t>(ties.dims[f][i]);
            const auto& label = ties.labels[f][i];
            largest = std::max(largest, static_cast<std::int64_t>(axis));
            if (const auto s = label ? size.find(*label) : size.end(); s != size.end()) shape[axis] = s->second;
            else untied = std::max(untied, static_cast<std::int64_t>(axis));
        }
        const std::string what = "input " + detail::repr_string(slot.key) +
                                 (slot.count > 1 ? " (tensor " + std::to_string(f - slot.offset) + ")" : std::string());
        aligned[f] = detail::make_fill(fill, std::move(shape), untied, largest, *seen, what);
    }
}

template <class T>
auto InputObserverInfo<T>::build_arguments(std::vector<std::optional<T>> aligned,
                                           const std::vector<std::string>& filled, const ArgumentsOptions& options) -> V {
    // The ties (labels and relations) are computed only when a tensor is absent.
    if (std::any_of(aligned.begin(), aligned.end(), [](const auto& t) { return !t.has_value(); }) ||
        std::any_of(filled.begin(), filled.end(), [&](const auto& k) { return replaces_value(k); })) {
        if (ties_cache_) fill_absent(aligned, *ties_cache_, filled);
        else fill_absent(aligned, tie_labels(), filled);
    }
    return pack_arguments(std::move(aligned), options);
}

// The filled flat list in the form of the best candidate's arguments.
template <class T>
auto InputObserverInfo<T>::pack_arguments(std::vector<std::optional<T>> aligned,
                                          const ArgumentsOptions& options) const -> V {
    std::vector<T> flat;
    flat.reserve(aligned.size());
    for (auto& t : aligned) flat.push_back(std::move(*t));
    if (options.flat) {
        typename V::List items;
        for (auto& t : flat) items.emplace_back(std::move(t));
        return V::list(std::move(items));
    }
    const InputCandidate<T>& best = inputs_[best_];
    V both = tree_unflatten<V>(std::move(flat), best.spec());
    typename V::List args = both[0].items();
    Kwargs<T> kwargs = both[1].dict();
    for (const auto& [k, v] : best.cst_kwargs()) kwargs.insert_or_assign(k, v);
    if (options.as_args_kwargs) return V::tuple({V::tuple(std::move(args)), V::dict(std::move(kwargs))});
    if (kwargs.empty()) return V::tuple(std::move(args));
    if (args.empty()) return V::dict(std::move(kwargs));
    if (sig_.var_positional())
        throw runtime_error("Cannot return arguments as a single tuple or a single dictionary because of '*args' in "
                            "the function signature. You need to set `as_args_kwargs=True`.");
    Kwargs<T> out;
    for (std::size_t i = 0; i < args.size(); ++i) out.append_unique(sig_[i].name, std::move(args[i]));
    for (auto& [k, v] : kwargs) out.append_unique(k, std::move(v));
    return V::dict(std::move(out));
}

}  // namespace yobx
