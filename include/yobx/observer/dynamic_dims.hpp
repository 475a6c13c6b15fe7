// yobx/observer/dynamic_dims.hpp — phase 3 of InputObserverInfo: dynamic shapes.
//
// An axis is dynamic when its size differs between calls (or is forced by
// set_batch_dimension_for); labels group the axes with the same observed sizes
// (well-known inputs first), and the result mirrors the best candidate's
// arguments as torch.export's dynamic_shapes.
// Included by yobx/observer/info.hpp, which declares the class.
#pragma once

#include <yobx/observer/info.hpp>

#include <algorithm>
#include <cctype>
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

namespace detail {

// The semantic labels of the well-known inputs, in the order they claim labels.
struct KnownInput {
    std::string_view name;
    std::pair<std::int64_t, std::string_view> axes[2];
    std::size_t n_axes;
};
inline constexpr KnownInput known_inputs[] = {
    {"input_ids", {{0, "batch_size"}, {1, "sequence_length"}}, 2},
    {"attention_mask", {{0, "batch_size"}, {1, "total_sequence_length"}}, 2},
    {"position_ids", {{0, "batch_size"}, {1, "sequence_length"}}, 2},
    {"token_type_ids", {{0, "batch_size"}, {1, "sequence_length"}}, 2},
    {"past_key_values", {{0, "batch_size"}, {2, "past_sequence_length"}}, 2},
    {"cache_position", {{0, "sequence_length"}, {}}, 1},
    {"decoder_input_ids", {{0, "batch_size"}, {1, "decoder_sequence_length"}}, 2},
    {"decoder_attention_mask", {{0, "batch_size"}, {1, "decoder_sequence_length"}}, 2},
    {"pixel_values", {{0, "batch_size"}, {}}, 1},
};

// One level of the path from a value to one of its tensors: a list or tuple position, a dict
// key, or a registered node's child (its position, and its key when the node has keys).
struct PathLevel {
    enum class Kind { position, key, child } kind;
    std::size_t position = 0;
    std::string key;
};

// The path of every tensor of v, in flat order: the one walk that names a Value's tensors
// (keyed_entry, InputObserverInfo::flat_names).
template <class T>
std::vector<std::vector<PathLevel>> tensor_paths(const Value<T>& v) {
    using V = Value<T>;
    std::vector<std::vector<PathLevel>> out;
    std::vector<PathLevel> path;
    const auto walk = [&](const auto& self, const V& x) -> void {
        switch (x.kind()) {
            case V::Kind::tensor: out.push_back(path); return;
            case V::Kind::list:
            case V::Kind::tuple:
                for (std::size_t i = 0; i < x.items().size(); ++i) {
                    path.push_back({PathLevel::Kind::position, i, {}});
                    self(self, x.items()[i]);
                    path.pop_back();
                }
                return;
            case V::Kind::dict: {
                std::size_t i = 0;
                for (const auto& [k, item] : x.dict()) {
                    path.push_back({PathLevel::Kind::key, i++, k});
                    self(self, item);
                    path.pop_back();
                }
                return;
            }
            case V::Kind::custom: {
                const auto& c = x.custom();
                for (std::size_t i = 0; i < c.children.size(); ++i) {
                    path.push_back({PathLevel::Kind::child, i, c.keys.empty() ? std::string() : c.keys[i]});
                    self(self, c.children[i]);
                    path.pop_back();
                }
                return;
            }
            default: return;
        }
    };
    walk(walk, v);
    return out;
}

// The path of the `index`-th tensor of v, its levels joined by '_' (a dict key made an identifier,
// a list or tuple position, a registered node's child position), when a dict key is on it;
// nothing otherwise.
template <class T>
std::optional<std::string> keyed_entry(const Value<T>& v, std::size_t index) {
    const auto paths = tensor_paths(v);
    if (index >= paths.size()) return std::nullopt;
    const auto& path = paths[index];
    if (std::none_of(path.begin(), path.end(), [](const PathLevel& l) { return l.kind == PathLevel::Kind::key; }))
        return std::nullopt;
    std::string out;
    for (const auto& level : path) {
        if (!out.empty()) out += '_';
        if (level.kind != PathLevel::Kind::key) {
            out += std::to_string(level.position);
            continue;
        }
        for (char ch : level.key) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    }
    return out;
}

}  // namespace detail

template <class T>
std::vector<std::vector<std::int64_t>> InputObserverInfo<T>::infer_dynamic_dimensions(const BatchDimensionFor& batch) {
    align_inputs_none_values();
    const auto forced = batch_slots(batch);
    std::vector<std::vector<std::int64_t>> out(inputs_[best_].size());
    for (std::size_t f = 0; f < out.size(); ++f) {
        const auto& shapes = shapes_at(f);
        const std::vector<std::int64_t>* first = nullptr;
        for (const auto& s : shapes)
            if (s) {
                if (first && first->size() != s->size()) {
                    std::string list = "[";
                    bool sep = false;
                    for (const auto& x : shapes)
                        if (x) {
                            list += (sep ? ", " : "") + detail::repr_shape(*x);
                            sep = true;
                        }
                    throw runtime_error("All shapes in shape_list must have the same rank but shape_list=" + list +
                                        "]. (input " + detail::repr_string(slots_[slot_of(f)].name) + ")");
                }
                first = &*s;
            }
        const bool force = forced[slot_of(f)];
        for (std::size_t axis = 0; first && axis < first->size(); ++axis) {
            bool varies = false;
            for (const auto& s : shapes) varies = varies || (s && (*s)[axis] != (*first)[axis]);
            if (varies || (axis == 0 && force)) out[f].push_back(static_cast<std::int64_t>(axis));
        }
    }
    return out;
}

template <class T>
DynamicShapes InputObserverInfo<T>::infer_dynamic_shapes(const DynamicShapesOptions& options) {
    const auto dims = infer_dynamic_dimensions(options.set_batch_dimension_for);
    const bool automatic = options.derived_dims && options.dim_names.mode() == DimNames::Mode::none;
    const auto labels = label_dims(dims, automatic ? DimNames::automatic() : options.dim_names);
    if (!options.derived_dims) return mirror_best(dims, labels);
    const auto series = dim_series(dims, labels, /*assumed=*/true);
    check_bounds(options.bounds, series);
    return with_definitions(mirror_best(dims, labels), series, find_relations(series, options.relations).relations,
                            options);
}

// User bounds: min <= max, on labels of dynamic dimensions (`series` has one entry per label).
template <class T>
void InputObserverInfo<T>::check_bounds(const DimBounds& bounds, const std::vector<DimSeries>& series) {
    for (const auto& [label, b] : bounds) {
        if (b.first > b.second)
            throw value_error("bounds of " + detail::repr_string(label) + ": min " + std::to_string(b.first) +
                              " is greater than max " + std::to_string(b.second));
        bool known = false;
        for (const auto& x : series) known = known || x.label == label;
        if (!known)
            throw value_error("bounds given for " + detail::repr_string(label) +
                              ", which is not the label of a dynamic dimension");
    }
}

// The dynamic shapes with the torch.export.Dim definitions to_python() writes (derived_dims).
template <class T>
DynamicShapes InputObserverInfo<T>::with_definitions(DynamicShapes shapes, const std::vector<DimSeries>& series,
                                                     std::vector<DimRelation> relations,
                                                     const DynamicShapesOptions& options) {
    DimDefinitions d;
    for (const auto& x : series) d.labels.push_back(x.label);
    d.relations = std::move(relations);
    d.bounds = options.bounds;
    d.named = options.named_dims;
    shapes.set_definitions(std::move(d));
    return shapes;
}

/// Per label (in order of first appearance), its size in each call, from the tensors that were
/// passed. With `assumed`, the sizes that were not observed are added as imputed: the size of a
/// value_if_missing tensor, and 0 along the axis infer_arguments empties (the largest dynamic
/// one) of an absent tensor, since a cache absent from the prefill call holds 0 tokens.
template <class T>
std::vector<DimSeries> InputObserverInfo<T>::dim_series(const std::vector<std::vector<std::int64_t>>& dims,
                                                        const std::vector<std::vector<std::optional<std::string>>>& labels,
                                                        bool assumed) const {
    std::vector<DimSeries> out;
    std::map<std::string, std::size_t> index;
    const std::size_t n = inputs_.size();
    const auto filled = [&](std::size_t f, std::size_t c) { return inputs_[c].is_filled(slots_[slot_of(f)].key); };
    for (const bool observed_pass : {true, false}) {
        if (!observed_pass && !assumed) break;
        for (std::size_t f = 0; f < dims.size(); ++f) {
            const auto& shapes = shapes_at(f);
            for (std::size_t i = 0; i < dims[f].size(); ++i) {
                if (!labels[f][i]) continue;
                auto [it, added] = index.try_emplace(*labels[f][i], out.size());
                if (added) out.push_back({*labels[f][i], std::vector<std::optional<std::int64_t>>(n), std::vector<bool>(n)});
                DimSeries& s = out[it->second];
                const auto axis = static_cast<std::size_t>(dims[f][i]);
                for (std::size_t c = 0; c < n; ++c) {
                    if (s.values[c]) continue;  // the first tensor that knows it
                    std::optional<std::int64_t> v;
                    if (shapes[c] && (observed_pass != filled(f, c))) v = (*shapes[c])[axis];
                    else if (!observed_pass && !shapes[c] && dims[f][i] == dims[f].back()) v = 0;
                    if (!v) continue;
                    s.values[c] = v;
                    s.imputed[c] = !observed_pass;
                }
            }
        }
    }
    return out;
}

// The dynamic shapes laid out as the best candidate's arguments.
template <class T>
DynamicShapes InputObserverInfo<T>::mirror_best(const std::vector<std::vector<std::int64_t>>& dims,
                                                const std::vector<std::vector<std::optional<std::string>>>& labels) const {
    const InputCandidate<T>& best = inputs_[best_];
    std::size_t next = 0;
    const auto mirror = [&](const auto& self, const V& v) -> DynamicShapes {
        switch (v.kind()) {
            case V::Kind::tensor: {
                std::vector<DynamicDim> d;
                for (std::size_t i = 0; i < dims[next].size(); ++i) d.push_back({dims[next][i], labels[next][i]});
                ++next;
                return DynamicShapes::tensor(std::move(d));
            }
            case V::Kind::list:
            case V::Kind::tuple: {
                std::vector<DynamicShapes> items;
                for (const auto& x : v.items()) items.push_back(self(self, x));
                return v.kind() == V::Kind::list ? DynamicShapes::list(std::move(items)) : DynamicShapes::tuple(std::move(items));
            }
            case V::Kind::dict: {
                ordered_dict<DynamicShapes> d;
                for (const auto& [k, x] : v.dict()) d.append_unique(k, self(self, x));
                return DynamicShapes::dict(std::move(d));
            }
            case V::Kind::custom: {
                // torch.export expects a registered class as the list of its flattened children.
                std::vector<DynamicShapes> items;
                for (const auto& x : v.custom().children) items.push_back(self(self, x));
                return DynamicShapes::list(std::move(items));
            }
            default: return DynamicShapes();
        }
    };
    std::vector<DynamicShapes> ds_args;
    for (const auto& a : best.args()) ds_args.push_back(mirror(mirror, a));
    ordered_dict<DynamicShapes> ds_kwargs;
    for (const auto& [k, v] : best.kwargs()) ds_kwargs.append_unique(k, mirror(mirror, v));
    for (const auto& kv : best.cst_kwargs()) ds_kwargs.append_unique(kv.first, DynamicShapes());

    const auto var = sig_.var_positional();
    if (ds_kwargs.empty() && !var) return DynamicShapes::tuple(std::move(ds_args));
    if (ds_args.empty()) return DynamicShapes::dict(post_process_for_kwargs(std::move(ds_kwargs)));
    ordered_dict<DynamicShapes> out;
    const std::size_t n_args = var ? std::min(ds_args.size(), var->second) : ds_args.size();
    for (std::size_t i = 0; i < n_args; ++i) out.append_unique(sig_[i].name, std::move(ds_args[i]));
    if (var) {
        std::vector<DynamicShapes> rest(std::make_move_iterator(ds_args.begin() + static_cast<std::ptrdiff_t>(n_args)),
                                        std::make_move_iterator(ds_args.end()));
        out.append_unique(var->first, DynamicShapes::tuple(std::move(rest)));
    }
    for (auto& [k, v] : ds_kwargs) out.insert_or_assign(k, std::move(v));
    return DynamicShapes::dict(post_process_for_kwargs(std::move(out)));
}

// Per slot: is its first axis forced dynamic.
template <class T>
std::vector<bool> InputObserverInfo<T>::batch_slots(const BatchDimensionFor& batch) const {
    std::vector<bool> out(slots_.size(), batch.all());
    for (const auto& ref : batch.inputs()) {
        std::optional<std::string> name;
        std::optional<std::size_t> position;
        if (ref.is_position()) {
            if (ref.position() < 0 || (static_cast<std::size_t>(ref.position()) >= sig_.size() && !sig_.var_positional()))
                throw runtime_error("argument at position " + std::to_string(ref.position()) + " is out of boundary");
            position = static_cast<std::size_t>(ref.position());
            if (*position < sig_.size()) name = sig_[*position].name;
        } else {
            name = ref.name();
            bool known = sig_.find(*name).has_value();
            for (const auto& c : inputs_) known = known || c.kwargs().contains(*name);
            if (!known)
                throw value_error("set_batch_dimension_for names " + detail::repr_string(*name) +
                                  ", which is neither a parameter of " + sig_.to_string() + " nor a recorded keyword");
        }
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if ((name && slots_[i].name == *name) || (position && slots_[i].positional && slots_[i].position == *position))
                out[i] = true;
    }
    return out;
}

// The input name used in generated labels: the argument, or "<*args name>_<j>" for an *args item.
template <class T>
std::string InputObserverInfo<T>::input_label(const Slot& s) const {
    if (s.varargs) return s.name + "_" + std::to_string(s.position - sig_.num_positional());
    return s.name;
}

// `<input>_dim_<axis>`, the reference's label, whatever the tensor's place in its argument.
template <class T>
std::string InputObserverInfo<T>::generated_label(std::size_t flat, std::int64_t axis) const {
    return input_label(slots_[slot_of(flat)]) + "_dim_" + std::to_string(axis);
}

// A generated label no other group has: `<input>_dim_<axis>`; when another group has it,
// `<input>_<index>_dim_<axis>` (the tensor's index in its argument), or, for a tensor under a dict
// key, `<input>_<key>_dim_<axis>` (`features_p3_dim_2` for features['p3']), then `_2`, `_3`, ...
template <class T>
std::string InputObserverInfo<T>::unique_label(std::size_t flat, std::int64_t axis,
                                               const std::set<std::string>& taken) const {
    const Slot& s = slots_[slot_of(flat)];
    std::string label = generated_label(flat, axis);
    if (!taken.contains(label)) return label;
    std::string base = label;
    if (s.count > 1) {
        const V* arg = lookup(inputs_[best_], s);
        const auto keyed = arg ? detail::keyed_entry(*arg, flat - s.offset) : std::nullopt;
        base = input_label(s) + "_" + (keyed ? *keyed : std::to_string(flat - s.offset)) + "_dim_" + std::to_string(axis);
    }
    label = base;
    for (int k = 2; taken.contains(label); ++k) label = base + "_" + std::to_string(k);
    return label;
}

// The sizes one dynamic axis took in each call; nullopt where the call had no tensor there, or
// one value_if_missing gave (it was not observed).
template <class T>
std::vector<std::optional<std::int64_t>> InputObserverInfo<T>::observed_sizes(std::size_t f, std::int64_t axis) const {
    std::vector<std::optional<std::int64_t>> seq;
    const auto& shapes = shapes_at(f);
    for (std::size_t c = 0; c < shapes.size(); ++c) {
        const bool filled = inputs_[c].is_filled(slots_[slot_of(f)].key);
        seq.push_back(shapes[c] && !filled ? std::optional((*shapes[c])[static_cast<std::size_t>(axis)]) : std::nullopt);
    }
    return seq;
}

template <class T>
std::vector<std::vector<std::optional<std::string>>> InputObserverInfo<T>::label_dims(const std::vector<std::vector<std::int64_t>>& dims,
                                                                                      const DimNames& names) const {
    std::vector<std::vector<std::optional<std::string>>> out(dims.size());
    for (std::size_t f = 0; f < dims.size(); ++f) out[f].resize(dims[f].size());
    if (names.mode() == DimNames::Mode::none) return out;
    if (names.mode() == DimNames::Mode::explicit_map) {
        std::vector<std::pair<std::string, const std::map<std::int64_t, std::string>*>> by_name;
        for (const auto& [ref, m] : names.map()) {
            if (ref.is_position()) {
                if (ref.position() < 0 || static_cast<std::size_t>(ref.position()) >= sig_.size())
                    throw value_error("dim_names: position " + std::to_string(ref.position()) + " is beyond the signature " + sig_.to_string());
                by_name.emplace_back(sig_[static_cast<std::size_t>(ref.position())].name, &m);
            } else {
                by_name.emplace_back(ref.name(), &m);
            }
        }
        // The axes not named: generated labels, shared by the axes observed with the same sizes.
        std::set<std::string> taken;
        std::map<std::string, std::vector<std::optional<std::int64_t>>> generated;
        for (std::size_t f = 0; f < dims.size(); ++f) {
            const Slot& s = slots_[slot_of(f)];
            const std::map<std::int64_t, std::string>* m = nullptr;
            for (const auto& [n, mm] : by_name)
                if (n == s.name) m = mm;
            for (std::size_t i = 0; i < dims[f].size(); ++i) {
                const auto axis = dims[f][i];
                if (m && m->contains(axis)) {
                    out[f][i] = m->at(axis);
                    continue;
                }
                const auto seq = observed_sizes(f, axis);
                const auto same = generated.find(generated_label(f, axis));
                if (same != generated.end() && same->second == seq) {
                    out[f][i] = same->first;
                    continue;
                }
                std::string label = unique_label(f, axis, taken);
                taken.insert(label);
                generated.try_emplace(label, seq);
                out[f][i] = std::move(label);
            }
        }
        return out;
    }
    // Automatic: group the dynamic axes by their sequence of observed sizes. Complete sequences
    // first; then a sequence with absent calls joins the first group that agrees on the calls it
    // has (a cache absent from the prefill call still has the batch size of the other inputs).
    using Seq = std::vector<std::optional<std::int64_t>>;
    std::vector<Seq> group_seq;
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> members;  // (flat, index in dims[flat])
    for (const bool complete_pass : {true, false}) {
        for (std::size_t f = 0; f < dims.size(); ++f) {
            if (dims[f].empty()) continue;
            const Seq first = observed_sizes(f, dims[f].front());
            const bool complete = std::all_of(first.begin(), first.end(), [](const auto& x) { return x.has_value(); });
            if (complete != complete_pass) continue;
            for (std::size_t i = 0; i < dims[f].size(); ++i) {
                Seq seq = observed_sizes(f, dims[f][i]);
                std::size_t g = 0;
                for (; g < group_seq.size(); ++g) {
                    bool agree = true;
                    for (std::size_t c = 0; c < seq.size() && agree; ++c)
                        agree = complete ? seq[c] == group_seq[g][c] : (!seq[c] || seq[c] == group_seq[g][c]);
                    if (agree) break;
                }
                if (g == group_seq.size()) {
                    group_seq.push_back(std::move(seq));
                    members.emplace_back();
                }
                members[g].emplace_back(f, i);
            }
        }
    }
    // Members in flat order, so that generated labels come from the first tensor of a group.
    for (auto& m : members) std::sort(m.begin(), m.end());
    std::vector<std::optional<std::string>> group_label(members.size());
    std::set<std::string> taken;
    // Known inputs claim their semantic labels first, in the table's order.
    for (const auto& known : detail::known_inputs)
        for (std::size_t a = 0; a < known.n_axes; ++a)
            for (std::size_t g = 0; g < members.size(); ++g) {
                const auto& [axis, label] = known.axes[a];
                if (group_label[g] || taken.contains(std::string(label))) continue;
                for (const auto& [f, i] : members[g])
                    if (slots_[slot_of(f)].name == known.name && dims[f][i] == axis) {
                        group_label[g] = std::string(label);
                        taken.insert(std::string(label));
                        break;
                    }
            }
    for (std::size_t g = 0; g < members.size(); ++g) {
        if (group_label[g]) continue;
        const auto [f, i] = members[g].front();
        std::string label = unique_label(f, dims[f][i], taken);
        taken.insert(label);
        group_label[g] = std::move(label);
    }
    for (std::size_t g = 0; g < members.size(); ++g)
        for (const auto& [f, i] : members[g]) out[f][i] = group_label[g];
    return out;
}

// torch.export wants keywords outside the signature under the **kwargs parameter's name.
template <class T>
ordered_dict<DynamicShapes> InputObserverInfo<T>::post_process_for_kwargs(ordered_dict<DynamicShapes> kwargs) const {
    const auto kw = sig_.var_keyword();
    if (!kw) return kwargs;
    ordered_dict<DynamicShapes> out;
    ordered_dict<DynamicShapes> extra;
    for (auto& [k, v] : kwargs) {
        if (k == *kw)
            throw value_error("Keyword argument name collision: received a keyword argument '" + *kw +
                          "' which conflicts with the **" + *kw +
                          " parameter used to collect extra keyword arguments. Passing a keyword argument with "
                          "this name is not supported.");
        if (sig_.find(k)) out.append_unique(k, std::move(v));
        else extra.append_unique(k, std::move(v));
    }
    if (extra.empty()) return out;
    out.append_unique(*kw, DynamicShapes::dict(std::move(extra)));
    return out;
}

template <class T>
std::vector<std::string> InputObserverInfo<T>::result_warnings() {
    std::vector<std::string> out;
    if (inputs_.size() == 1) {
        out.push_back("only one call was recorded: with no set_batch_dimension_for every dimension is static "
                      "(infer_dynamic_shapes gives {} for every input), which is usually incorrect; record calls with "
                      "different sizes, or pass set_batch_dimension_for");
    } else if (!inputs_.empty()) {
        std::vector<std::vector<std::int64_t>> dims;
        try {
            dims = infer_dynamic_dimensions();
        } catch (const error& e) {  // the calls cannot be aligned: every inference will say why
            if (warnings_.empty()) out.push_back(std::string("the inference will fail: ") + e.what());
        }
        const auto names = dims.empty() ? std::vector<std::string>{} : flat_names();
        for (std::size_t f = 0; f < dims.size(); ++f)
            for (const std::int64_t axis : dims[f]) {
                std::string sizes;
                bool small = true;
                for (const auto& v : observed_sizes(f, axis)) {
                    if (!v) continue;
                    small = small && *v <= 1;
                    if (!sizes.empty()) sizes += ", ";
                    sizes += std::to_string(*v);
                }
                if (small && !sizes.empty())
                    out.push_back(names[f] + " axis " + std::to_string(axis) + " is dynamic but was only ever 0 or 1 (" +
                                  sizes + "): torch.export specializes both sizes, so nothing tells it the dimension "
                                  "is dynamic; record calls with larger sizes, or export with infer_export_arguments()");
            }
    }
    for (const auto& w : out)
        if (logged_.insert(w).second && log_) *log_ << "yobx::InputObserver warning: " << w << '\n';
    return out;
}

}  // namespace yobx
