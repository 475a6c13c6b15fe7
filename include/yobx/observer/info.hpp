// yobx/observer/info.hpp — the recorded calls and what is inferred from them.
//
// InputObserverInfo holds the signature, the recorded calls (InputCandidate),
// their outputs and latencies, and runs phases 2 to 4 of the seed: pick the
// best candidate (most tensors), align every call on it with None
// placeholders, infer the dynamic dimensions, and build the export arguments.
// It is not synchronized: InputObserver locks around it.
#pragma once

#include <yobx/error.hpp>
#include <yobx/observer/candidate.hpp>
#include <yobx/observer/dynamic_shapes.hpp>
#include <yobx/observer/export_spec.hpp>
#include <yobx/observer/options.hpp>
#include <yobx/observer/signature.hpp>
#include <yobx/ordered_dict.hpp>
#include <yobx/tensor.hpp>
#include <yobx/value.hpp>

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

/// Values used for an argument absent from a call, by name or position
/// (only to infer shapes and arguments; they are never passed to the function).
template <class T>
using ValueIfMissing = std::vector<std::pair<ArgRef, Value<T>>>;

namespace detail {

// Python's == between two scalars (True == 1 == 1.0); other kinds compare by kind only.
template <class T>
bool python_equal(const Value<T>& a, const Value<T>& b) {
    using K = typename Value<T>::Kind;
    const auto numeric = [](const Value<T>& v) { return v.kind() == K::boolean || v.kind() == K::integer || v.kind() == K::floating; };
    const auto as_number = [](const Value<T>& v) {
        if (v.kind() == K::boolean) return v.as_bool() ? 1.0 : 0.0;
        return v.as_double();
    };
    if (numeric(a) && numeric(b)) {
        if (a.kind() != K::floating && b.kind() != K::floating)
            return (a.kind() == K::boolean ? std::int64_t{a.as_bool()} : a.as_int()) ==
                   (b.kind() == K::boolean ? std::int64_t{b.as_bool()} : b.as_int());
        return as_number(a) == as_number(b);
    }
    if (a.kind() == K::string && b.kind() == K::string) return a.as_string() == b.as_string();
    return a.kind() == K::none && b.kind() == K::none;
}

template <class T>
bool python_equal(const Kwargs<T>& a, const Kwargs<T>& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a) {
        auto it = b.find(k);
        if (it == b.end() || !python_equal(v, it->second)) return false;
    }
    return true;
}

template <class T>
Value<T> default_as_value(const DefaultValue& d) {
    if (!d.value()) return Value<T>();
    return std::visit([](const auto& x) { return Value<T>(x); }, *d.value());
}

// The first place where two values of one argument hold different non-tensor leaves (an int, a
// float, a str, None): its path (`image_shapes[0][1]`, `extra['scale']`) and the two values.
// torch.export specializes such values, so calls that differ there cannot be one export. Where
// the structures differ, the tensor counts judge (alignment's own error).
template <class T>
std::optional<std::tuple<std::string, Value<T>, Value<T>>> constant_difference(const Value<T>& a, const Value<T>& b,
                                                                              const std::string& path) {
    using V = Value<T>;
    using K = typename V::Kind;
    const auto leaf = [](const V& v) { return v.is_scalar() || v.is_none(); };
    if (leaf(a) || leaf(b)) {
        if ((leaf(a) != leaf(b) && !a.is_tensor() && !b.is_tensor()) || (leaf(a) && leaf(b) && !python_equal(a, b)))
            return std::tuple{path, a, b};
        return std::nullopt;
    }
    if (a.kind() != b.kind()) return std::nullopt;  // tensors, or a structure the tensor counts judge
    if (a.kind() == K::list || a.kind() == K::tuple) {
        if (a.items().size() != b.items().size()) return std::nullopt;
        for (std::size_t i = 0; i < a.items().size(); ++i)
            if (auto d = constant_difference(a.items()[i], b.items()[i], path + "[" + std::to_string(i) + "]")) return d;
    } else if (a.kind() == K::dict) {
        for (const auto& [k, x] : a.dict()) {
            const auto it = b.dict().find(k);
            if (it == b.dict().end()) continue;
            if (auto d = constant_difference(x, it->second, path + "[" + repr_string(k) + "]")) return d;
        }
    } else if (a.kind() == K::custom) {
        const auto& ca = a.custom();
        const auto& cb = b.custom();
        if (ca.children.size() != cb.children.size()) return std::nullopt;
        for (std::size_t i = 0; i < ca.children.size(); ++i)
            if (auto d = constant_difference(ca.children[i], cb.children[i],
                                             path + (ca.keys.empty() ? "[" + std::to_string(i) + "]" : "." + ca.keys[i])))
                return d;
    }
    return std::nullopt;
}

inline std::string repr_names(const std::vector<std::string>& names) {
    std::string s = "[";
    for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + repr_string(names[i]);
    return s + "]";
}

inline std::string repr_shape(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) s += ",";
    return s + ")";
}

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

}  // namespace detail

/// Everything the observer recorded, and phases 2-4 of the inference:
///   const auto& info = observer.info();
///   info.inputs()[0].to_string();  info.latencies()[0];  info.flat_outputs()[0].size();
template <class T>
class InputObserverInfo {
    static_assert(std::is_same_v<dim_t<T>, std::int64_t>,
                  "yobx::InputObserverInfo<T>: the observer records concrete tensors, whose "
                  "tensor_traits<T>::shape returns int64_t sizes");

public:
    using V = Value<T>;

    /// Validates value_if_missing against the signature (the seed's ValueError for an unknown name of
    /// a function without **kwargs, or a position beyond the signature).
    InputObserverInfo(Signature signature, ValueIfMissing<T> value_if_missing)
        : sig_(std::move(signature)), value_if_missing_(std::move(value_if_missing)) {
        for (const auto& p : sig_.parameters())
            if (p.default_value && !p.default_value->is_none()) defaults_.append_unique(p.name, detail::default_as_value<T>(*p.default_value));
        for (const auto& [key, v] : value_if_missing_) {
            if (key.is_position()) {
                if (key.position() < 0 || static_cast<std::size_t>(key.position()) >= sig_.size())
                    throw value_error("Unexpected keyword argument k=" + std::to_string(key.position()) +
                                      " provided as a value_if_missing input for a function that does not accept it. "
                                      "All value_if_missing indices must be in the observed signature: " +
                                      sig_.names_repr() + ".");
            } else if (!sig_.has_named(key.name()) && !sig_.var_keyword()) {
                throw value_error("Unexpected keyword argument " + detail::repr_string(key.name()) +
                                  " provided as a value_if_missing input for a function that does not accept it. "
                                  "All value_if_missing keys must be in the observed signature: " +
                                  sig_.names_repr() + ".");
            }
        }
    }

    const Signature& signature() const noexcept { return sig_; }
    const ValueIfMissing<T>& value_if_missing() const noexcept { return value_if_missing_; }
    /// The number of recorded calls.
    std::size_t size() const noexcept { return inputs_.size(); }
    const std::vector<InputCandidate<T>>& inputs() const noexcept { return inputs_; }
    /// Per call: the structure of the output and its tensors (deep copies).
    const std::vector<TreeSpec>& outputs_specs() const noexcept { return outputs_specs_; }
    const std::vector<std::vector<T>>& flat_outputs() const noexcept { return flat_outputs_; }
    /// Per call: the time the function took, in seconds.
    const std::vector<double>& latencies() const noexcept { return latencies_; }

    /// The call with the most tensors (ties: the one with more arguments, then the first).
    const InputCandidate<T>& best_candidate() const {
        check_captured();
        return inputs_[best_];
    }
    std::size_t best_candidate_index() const {
        check_captured();
        return best_;
    }

    /// Phase 1 without storing: Python's add_inputs. Keeps constant kwargs (bool/int/float/str differing
    /// from a non-None default), drops other scalars and None keywords, applies value_if_missing, orders
    /// the keywords as the signature does, and checks the call binds to the signature.
    InputCandidate<T> make_candidate(Args<T> args, Kwargs<T> kwargs, bool clone = true) const {
        check_binding(args, kwargs);
        Kwargs<T> cst;
        Kwargs<T> kept;
        Kwargs<T> other;  // not exported; kept to replay the call
        for (auto& [k, v] : kwargs) {
            if (v.is_scalar()) {
                auto d = defaults_.find(k);
                if (sig_.has_named(k) && d != defaults_.end() && !detail::python_equal(v, d->second)) cst.append_unique(k, v);
                else if (!is_default(k, v)) other.append_unique(k, v);
                continue;
            }
            if (v.is_none()) {
                if (!is_default(k, v)) other.append_unique(k, v);
                continue;
            }
            kept.append_unique(k, std::move(v));
        }
        std::vector<std::string> filled;
        for (const auto& [key, v] : value_if_missing_) {
            if (key.is_position()) {
                const auto k = static_cast<std::size_t>(key.position());
                if (k >= args.size())
                    throw not_implemented_error(
                        "Unexpected keyword argument k=" + std::to_string(k) +
                        " provided as a value_if_missing input for a function that does not accept it. "
                        "All value_if_missing indices must be in the observed signature: " + sig_.names_repr() +
                        ", only " + std::to_string(args.size()) + " were given.");
                if (args[k].is_none()) {
                    args[k] = v;
                    filled.push_back(k < sig_.num_positional() ? sig_[k].name
                                                               : "*" + sig_.var_positional()->first + "[" +
                                                                     std::to_string(k - sig_.num_positional()) + "]");
                }
                continue;
            }
            const auto pos = sig_.find(key.name());
            if (pos && *pos < sig_.num_positional() && *pos < args.size()) {
                if (args[*pos].is_none()) {
                    args[*pos] = v;
                    filled.push_back(key.name());
                }
                continue;
            }
            if (!kept.contains(key.name())) {
                kept.append_unique(key.name(), v);
                filled.push_back(key.name());
            }
        }
        InputCandidate<T> c(std::move(args), order_kwargs(std::move(kept)), order_kwargs(std::move(cst)), clone);
        c.set_filled(std::move(filled));
        c.set_other_kwargs(order_kwargs(std::move(other)));
        return c;
    }

    /// The call `index` as it was made, as the tuple (args, kwargs): what value_if_missing supplied
    /// is left out (None in place of a positional argument), the constants and the other scalar or
    /// None keywords the call passed are in.
    V observed_arguments(std::size_t index) const {
        check_index(index);
        const InputCandidate<T>& c = inputs_[index];
        const auto& filled = c.filled();
        const auto was_filled = [&](const std::string& key) { return std::find(filled.begin(), filled.end(), key) != filled.end(); };
        typename V::List args = c.args();
        const auto var = sig_.var_positional();
        for (std::size_t i = 0; i < args.size(); ++i)
            if (was_filled(i < sig_.num_positional() ? sig_[i].name
                                                     : "*" + var->first + "[" + std::to_string(i - sig_.num_positional()) + "]"))
                args[i] = V();
        Kwargs<T> kwargs;
        for (const auto& [k, v] : c.kwargs())
            if (!was_filled(k)) kwargs.append_unique(k, v);
        for (const auto& [k, v] : c.cst_kwargs()) kwargs.append_unique(k, v);
        for (const auto& [k, v] : c.other_kwargs()) kwargs.append_unique(k, v);
        return V::tuple({V::tuple(std::move(args)), V::dict(order_kwargs(std::move(kwargs)))});
    }

    /// The arguments infer_arguments(index) gives that the call `index` did not pass: those
    /// value_if_missing supplied and those with no tensor in the call, in the best candidate's order.
    std::vector<std::string> filled_arguments(std::size_t index) {
        align_inputs_none_values();
        check_index(index);
        const InputCandidate<T>& c = inputs_[index];
        const auto& aligned = c.aligned_flat_list();
        std::vector<std::string> out;
        for (const Slot& s : slots_) {
            const bool none = s.count > 0 && std::none_of(aligned.begin() + static_cast<std::ptrdiff_t>(s.offset),
                                                          aligned.begin() + static_cast<std::ptrdiff_t>(s.offset + s.count),
                                                          [](const auto& t) { return t.has_value(); });
            const auto& filled = c.filled();
            if (none || std::find(filled.begin(), filled.end(), s.key) != filled.end()) out.push_back(s.key);
        }
        return out;
    }

    /// Stores one recorded call with its outputs and latency.
    void add(InputCandidate<T> candidate, TreeSpec output_spec, std::vector<T> flat_output, double latency) {
        inputs_.push_back(std::move(candidate));
        outputs_specs_.push_back(std::move(output_spec));
        flat_outputs_.push_back(std::move(flat_output));
        latencies_.push_back(latency);
        refresh();
    }

    /// Phase 2: aligns every call on the best candidate (see docs/observer.md for the errors).
    void align_inputs_none_values() {
        check_captured();
        if (aligned_) return;
        const InputCandidate<T>& best = inputs_[best_];
        slots_ = make_slots(best);
        flat_slot_.clear();
        for (std::size_t i = 0; i < slots_.size(); ++i) flat_slot_.insert(flat_slot_.end(), slots_[i].count, i);
        const std::vector<std::string> best_names = present_names(best);
        for (std::size_t i = 0; i < inputs_.size(); ++i) {
            const std::vector<std::string> names = present_names(inputs_[i]);
            std::vector<std::string> missing;
            for (const auto& n : names)
                if (std::find(best_names.begin(), best_names.end(), n) == best_names.end()) missing.push_back(n);
            if (!missing.empty())
                throw runtime_error(
                    "At least one call to the observed model must contain all the named arguments. Call " +
                    std::to_string(i) + " has " + detail::repr_names(missing) + " but call " + std::to_string(best_) +
                    ", the one with the most tensors, has " + detail::repr_names(best_names) +
                    ". Make one call with all of them, or give the missing ones with value_if_missing.");
            const std::size_t n_var = present_varargs_end(inputs_[i]);
            if (n_var > best.args().size())
                throw not_implemented_error(
                    "infer_dynamic_shapes is not implemented when the best candidate is not 'aligned'. This happens "
                    "when there is no stored set of inputs where all optional inputs showing in other sets are "
                    "defined: call " + std::to_string(i) + " has " + std::to_string(n_var) +
                    " positional arguments and the best candidate (call " + std::to_string(best_) + ") " +
                    std::to_string(best.args().size()) +
                    ". If an argument is a custom class, register its flattening (specialize yobx::pytree_node, or "
                    "build it as Value::custom) so that its tensors are counted.");
        }
        captured_.clear();
        for (auto& c : inputs_) c.reset_alignment();
        try {
            for (auto& c : inputs_) align_with(c);
            check_aligned_sizes(inputs_);
            record_shapes();
        } catch (...) {
            for (auto& c : inputs_) c.reset_alignment();
            throw;
        }
        aligned_ = true;
    }

    /// Phase 3, flat: the dynamic axes of every tensor of the best candidate.
    std::vector<std::vector<std::int64_t>> infer_dynamic_dimensions(const BatchDimensionFor& batch = {}) {
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

    /// Phase 3: the dynamic shapes, mirroring the best candidate's arguments.
    DynamicShapes infer_dynamic_shapes(const DynamicShapesOptions& options = {}) {
        const auto dims = infer_dynamic_dimensions(options.set_batch_dimension_for);
        const bool automatic = options.derived_dims && options.dim_names.mode() == DimNames::Mode::none;
        const auto labels = label_dims(dims, automatic ? DimNames::automatic() : options.dim_names);
        if (!options.derived_dims) return mirror_best(dims, labels);
        const auto series = dim_series(dims, labels, /*assumed=*/true);
        check_bounds(options.bounds, series);
        return with_definitions(mirror_best(dims, labels), series, find_relations(series, options.relations).relations,
                                options);
    }


    /// Phase 4: the export arguments from the first call with the best candidate's argument counts,
    /// every absent tensor filled (see fill_absent: sized from the call's own dimensions where a label
    /// or a relation ties them, empty along its largest other dynamic axis).
    V infer_arguments(const ArgumentsOptions& options = {}) {
        align_inputs_none_values();
        const InputCandidate<T>& best = inputs_[best_];
        for (const auto& c : inputs_)
            if (c.args().size() == best.args().size() && c.kwargs().size() == best.kwargs().size())
                return build_arguments(c.aligned_flat_list(), options);
        return build_arguments(best.aligned_flat_list(), options);
    }

    /// Arguments torch.export can trace without specializing: the first call with every tensor (or
    /// the best candidate, filled), each dynamic dimension set to at least options.min_size and to a
    /// size no other dynamic dimension has (torch gives equal sizes one symbol), the relations found
    /// between labels kept (total_sequence_length = past_sequence_length + sequence_length). A sum
    /// of two labels also gets a size no observed call had: torch 2.6's exported module, given an
    /// input whose dimension `s1 + s11` equals the size it was exported with, specializes on it and
    /// refuses other sizes afterwards (docs/observer.md). A tensor whose shape changes is zeros of
    /// its new shape (its dtype and device kept), the others copies.
    V infer_export_arguments(const ExportArgumentsOptions& options = {}) {
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
        fill_absent(aligned, ties);
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

    /// Phase 4 from the stored call `index`.
    V infer_arguments(std::size_t index, const ArgumentsOptions& options = {}) {
        align_inputs_none_values();
        check_index(index);
        return build_arguments(inputs_[index].aligned_flat_list(), options);
    }

    /// Phase 4 for arguments given by the caller (a tuple: positional; a dict: keywords; keywords
    /// that have a default become constant kwargs): aligned on the best candidate, absent tensors filled.
    V infer_arguments(const V& args_or_kwargs, const ArgumentsOptions& options = {}) {
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
        return build_arguments(c.aligned_flat_list(), options);
    }

    /// Removes arguments from every recorded call, by name or position (a position stands for its
    /// parameter). `*args` and `**kwargs` cannot be removed; names present in no call are ignored.
    void remove_inputs(const std::vector<ArgRef>& inputs) {
        std::vector<std::string> names;
        for (const auto& ref : inputs) {
            std::string name;
            if (ref.is_position()) {
                if (ref.position() < 0 || static_cast<std::size_t>(ref.position()) >= sig_.size())
                    throw value_error("remove_inputs: position " + std::to_string(ref.position()) +
                                      " is beyond the signature " + sig_.to_string());
                name = sig_[static_cast<std::size_t>(ref.position())].name;
            } else {
                name = ref.name();
            }
            if (const auto i = sig_.find(name); i && !sig_.has_named(name))
                throw value_error("remove_inputs: " + std::string(sig_[*i].kind == ParamKind::var_positional ? "*" : "**") +
                                  name + " is a variadic parameter and cannot be removed; remove its values by name instead");
            names.push_back(std::move(name));
        }
        std::vector<InputCandidate<T>> out;
        out.reserve(inputs_.size());
        for (const auto& c : inputs_) {
            Args<T> args = c.args();
            Kwargs<T> kwargs;
            for (const auto& [k, v] : c.kwargs())
                if (std::find(names.begin(), names.end(), k) == names.end()) kwargs.append_unique(k, v);
            Kwargs<T> cst;
            for (const auto& [k, v] : c.cst_kwargs())
                if (std::find(names.begin(), names.end(), k) == names.end()) cst.append_unique(k, v);
            // A removed positional argument: the following positional ones become keywords when they can.
            std::size_t cut = args.size();
            for (std::size_t i = 0; i < std::min(args.size(), sig_.num_positional()); ++i)
                if (std::find(names.begin(), names.end(), sig_[i].name) != names.end()) {
                    cut = std::min(cut, i);
                    args[i] = V();
                }
            if (cut < args.size() && args.size() <= sig_.num_positional()) {
                Kwargs<T> moved;
                for (std::size_t i = cut; i < args.size(); ++i)
                    if (!args[i].is_none()) moved.append_unique(sig_[i].name, std::move(args[i]));
                args.resize(cut);
                for (auto& [k, v] : kwargs) moved.append_unique(k, std::move(v));
                kwargs = order_kwargs(std::move(moved));
            }
            while (!args.empty() && args.back().is_none()) args.pop_back();
            out.emplace_back(std::move(args), std::move(kwargs), std::move(cst), false);
            std::vector<std::string> filled;
            for (const auto& name : c.filled())
                if (std::find(names.begin(), names.end(), name) == names.end()) filled.push_back(name);
            out.back().set_filled(std::move(filled));
            Kwargs<T> other;
            for (const auto& [k, v] : c.other_kwargs())
                if (std::find(names.begin(), names.end(), k) == names.end()) other.append_unique(k, v);
            out.back().set_other_kwargs(std::move(other));
        }
        inputs_ = std::move(out);
        refresh();
    }

    /// Everything an export needs to know (see ExportSpec): inputs with their shapes and labels,
    /// ranges, relations and hints, constant kwargs, what value_if_missing filled in, warnings.
    /// Labels are automatic unless options.dim_names says otherwise; `bounds` override ranges.
    ExportSpec infer_export_spec(const DynamicShapesOptions& options = {}) {
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

private:
    // User bounds: min <= max, on labels of dynamic dimensions (`series` has one entry per label).
    static void check_bounds(const DimBounds& bounds, const std::vector<DimSeries>& series) {
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
    static DynamicShapes with_definitions(DynamicShapes shapes, const std::vector<DimSeries>& series,
                                          std::vector<DimRelation> relations, const DynamicShapesOptions& options) {
        DimDefinitions d;
        for (const auto& x : series) d.labels.push_back(x.label);
        d.relations = std::move(relations);
        d.bounds = options.bounds;
        d.named = options.named_dims;
        shapes.set_definitions(std::move(d));
        return shapes;
    }

    // The name of each flat tensor of the best candidate: the argument, then `.key` or `.index` per level
    // (`past_key_values.key_cache.0`); an *args item is `<args>_<j>`.
    std::vector<std::string> flat_names() const {
        std::vector<std::string> out;
        const auto walk = [&](const auto& self, const V& v, const std::string& prefix) -> void {
            switch (v.kind()) {
                case V::Kind::tensor: out.push_back(prefix); return;
                case V::Kind::list:
                case V::Kind::tuple:
                    for (std::size_t i = 0; i < v.items().size(); ++i) self(self, v.items()[i], prefix + "." + std::to_string(i));
                    return;
                case V::Kind::dict:
                    for (const auto& [k, x] : v.dict()) self(self, x, prefix + "." + k);
                    return;
                case V::Kind::custom: {
                    const auto& c = v.custom();
                    for (std::size_t i = 0; i < c.children.size(); ++i)
                        self(self, c.children[i], prefix + "." + (c.keys.empty() ? std::to_string(i) : c.keys[i]));
                    return;
                }
                default: return;
            }
        };
        const InputCandidate<T>& best = inputs_[best_];
        for (std::size_t i = 0; i < best.args().size(); ++i) {
            const auto var = sig_.var_positional();
            const std::string name = i < sig_.num_positional() || !var
                                         ? (i < sig_.size() ? sig_[i].name : "arg" + std::to_string(i))
                                         : var->first + "_" + std::to_string(i - sig_.num_positional());
            walk(walk, best.args()[i], name);
        }
        for (const auto& [k, v] : best.kwargs()) walk(walk, v, k);
        return out;
    }

    /// Per label (in order of first appearance), its size in each call, from the tensors that were
    /// passed. With `assumed`, the sizes that were not observed are added as imputed: the size of a
    /// value_if_missing tensor, and 0 along the axis infer_arguments empties (the largest dynamic
    /// one) of an absent tensor, since a cache absent from the prefill call holds 0 tokens.
    std::vector<DimSeries> dim_series(const std::vector<std::vector<std::int64_t>>& dims,
                                      const std::vector<std::vector<std::optional<std::string>>>& labels,
                                      bool assumed) const {
        std::vector<DimSeries> out;
        std::map<std::string, std::size_t> index;
        const std::size_t n = inputs_.size();
        const auto filled = [&](std::size_t f, std::size_t c) {
            const auto& names = inputs_[c].filled();
            return std::find(names.begin(), names.end(), slots_[slot_of(f)].key) != names.end();
        };
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
    DynamicShapes mirror_best(const std::vector<std::vector<std::int64_t>>& dims,
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

    // One argument of the best candidate, and where its tensors sit in the flat list.
    struct Slot {
        bool positional = false;    // passed by position in the best candidate
        std::size_t position = 0;   // its index in the best candidate's args
        bool varargs = false;       // an item of *args
        std::string name;           // parameter or keyword name (for *args items: the *args name)
        std::string key;            // the key of its tensor count: name, or "*args[j]"
        std::size_t count = 0;      // tensors in the best candidate
        std::size_t offset = 0;     // first flat index
    };

    void check_captured() const {
        if (inputs_.empty()) throw runtime_error("No inputs were captured.");
    }
    void check_index(std::size_t index) const {
        check_captured();
        if (index >= inputs_.size())
            throw value_error("No stored input set for index=" + std::to_string(index) + "<" + std::to_string(inputs_.size()) + ".");
    }

    // Is v the default of the named parameter k (None for a None default)?
    bool is_default(const std::string& k, const V& v) const {
        const auto i = sig_.find(k);
        if (!i || !sig_.has_named(k) || !sig_[*i].default_value) return false;
        return detail::python_equal(v, detail::default_as_value<T>(*sig_[*i].default_value));
    }

    void refresh() {
        aligned_ = false;
        for (auto& c : inputs_) c.reset_alignment();
        if (inputs_.empty()) return;
        best_ = 0;
        for (std::size_t i = 1; i < inputs_.size(); ++i) {
            const auto& a = inputs_[i];
            const auto& b = inputs_[best_];
            if (a.size() > b.size() || (a.size() == b.size() && present_names(a).size() > present_names(b).size())) best_ = i;
        }
    }

    Kwargs<T> order_kwargs(Kwargs<T> kwargs) const {
        Kwargs<T> ordered;
        for (const auto& p : sig_.parameters())
            if (sig_.has_named(p.name))
                if (auto it = kwargs.find(p.name); it != kwargs.end()) ordered.append_unique(p.name, std::move(it->second));
        for (auto& [k, v] : kwargs)
            if (!ordered.contains(k)) ordered.append_unique(k, std::move(v));
        return ordered;
    }

    // Python's TypeErrors for a call that does not bind to the signature.
    void check_binding(const Args<T>& args, const Kwargs<T>& kwargs) const {
        if (args.size() > sig_.num_positional() && !sig_.var_positional())
            throw type_error("The observed function takes " + std::to_string(sig_.num_positional()) +
                             " positional arguments but " + std::to_string(args.size()) + " were given (signature " +
                             sig_.to_string() + ")");
        for (const auto& kv : kwargs) {
            const auto& k = kv.first;
            const auto i = sig_.find(k);
            if (i && sig_.has_named(k) && *i < sig_.num_positional() && *i < args.size())
                throw type_error("The observed function got multiple values for argument " + detail::repr_string(k));
            if (!sig_.has_named(k) && !sig_.var_keyword())
                throw type_error("The observed function got an unexpected keyword argument " + detail::repr_string(k) +
                                 " (signature " + sig_.to_string() + ")");
        }
    }

    // The value bound to a named parameter (by position or keyword) or keyword, if any.
    const V* bound(const InputCandidate<T>& c, std::string_view name) const {
        if (const auto i = sig_.find(name); i && *i < sig_.num_positional() && *i < c.args().size()) return &c.args()[*i];
        auto it = c.kwargs().find(name);
        return it == c.kwargs().end() ? nullptr : &it->second;
    }

    // Names of the arguments a call gives (not None), in its order; *args items are not named.
    std::vector<std::string> present_names(const InputCandidate<T>& c) const {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < std::min(c.args().size(), sig_.num_positional()); ++i)
            if (!c.args()[i].is_none()) out.push_back(sig_[i].name);
        for (const auto& kv : c.kwargs()) out.push_back(kv.first);
        return out;
    }

    // The names of the arguments a call passed by keyword, in its (the signature's) order.
    static std::vector<std::string> keyword_names(const InputCandidate<T>& c) {
        std::vector<std::string> out;
        for (const auto& kv : c.kwargs()) out.push_back(kv.first);
        return out;
    }

    // One past the last *args item that is not None (0 when there is none).
    std::size_t present_varargs_end(const InputCandidate<T>& c) const {
        std::size_t end = 0;
        for (std::size_t i = sig_.num_positional(); i < c.args().size(); ++i)
            if (!c.args()[i].is_none()) end = i + 1;
        return end;
    }

    std::vector<Slot> make_slots(const InputCandidate<T>& best) const {
        std::vector<Slot> slots;
        std::size_t offset = 0;
        const auto var = sig_.var_positional();
        for (std::size_t i = 0; i < best.args().size(); ++i) {
            Slot s;
            s.positional = true;
            s.position = i;
            s.varargs = i >= sig_.num_positional();
            s.name = s.varargs ? var->first : sig_[i].name;
            s.key = s.varargs ? "*" + var->first + "[" + std::to_string(i - sig_.num_positional()) + "]" : s.name;
            s.count = num_leaves(best.args()[i]);
            s.offset = offset;
            offset += s.count;
            slots.push_back(std::move(s));
        }
        for (const auto& [k, v] : best.kwargs()) {
            Slot s;
            s.name = k;
            s.key = k;
            s.count = num_leaves(v);
            s.offset = offset;
            offset += s.count;
            slots.push_back(std::move(s));
        }
        return slots;
    }

    const V* lookup(const InputCandidate<T>& c, const Slot& s) const {
        if (s.varargs) return s.position < c.args().size() ? &c.args()[s.position] : nullptr;
        return bound(c, s.name);
    }

    std::size_t slot_of(std::size_t flat) const { return flat_slot_[flat]; }

    // The constants of a call bound to the signature, in its order: the scalars that differ from
    // their parameter's non-None default, passed by keyword (the constant kwargs) or by position.
    // `f(x, False)` and `f(x, add=False)` have the same constants.
    Kwargs<T> bound_constants(const InputCandidate<T>& c) const {
        Kwargs<T> out;
        const auto differs = [&](const std::string& name, const V& v) {
            const auto d = defaults_.find(name);
            return v.is_scalar() && d != defaults_.end() && !detail::python_equal(v, d->second);
        };
        for (std::size_t i = 0; i < std::min(c.args().size(), sig_.num_positional()); ++i)
            if (differs(sig_[i].name, c.args()[i])) out.append_unique(sig_[i].name, c.args()[i]);
        for (const auto& [k, v] : c.cst_kwargs())
            if (!defaults_.contains(k) || differs(k, v)) out.insert_or_assign(k, v);
        return order_kwargs(std::move(out));
    }

    void align_with(InputCandidate<T>& c) {
        const InputCandidate<T>& best = inputs_[best_];
        if (const Kwargs<T> mine = bound_constants(c), theirs = bound_constants(best); !detail::python_equal(mine, theirs))
            throw runtime_error("Two calls were made with different constant values, " + V::dict(mine).repr() +
                                " != " + V::dict(theirs).repr());
        std::vector<std::optional<T>> flat;
        flat.reserve(best.size());
        for (const Slot& s : slots_) {
            const V* v = lookup(c, s);
            // A scalar passed by position to a parameter without a non-None default: compared as passed.
            if (s.positional && !s.varargs && v && v->is_scalar() && !defaults_.contains(s.name)) {
                const V& b = best.args()[s.position];
                if (b.is_scalar() && !detail::python_equal(*v, b))
                    throw runtime_error("Two calls were made with different constant values, " +
                                        V::dict({{s.name, *v}}).repr() + " != " + V::dict({{s.name, b}}).repr());
            }
            // Ints, floats, strings inside a container: torch.export specializes them, never drop them.
            if (v && (v->kind() == V::Kind::list || v->kind() == V::Kind::tuple || v->kind() == V::Kind::dict ||
                      v->kind() == V::Kind::custom)) {
                const V* b = lookup(best, s);
                const std::string path =
                    s.varargs ? s.name + "[" + std::to_string(s.position - sig_.num_positional()) + "]" : s.name;
                if (b && !b->is_none())
                    if (auto d = detail::constant_difference(*v, *b, path))
                        throw runtime_error("Two calls were made with different constant values, " +
                                            V::dict({{std::get<0>(*d), std::get<1>(*d)}}).repr() + " != " +
                                            V::dict({{std::get<0>(*d), std::get<2>(*d)}}).repr() +
                                            " (torch.export specializes the ints, floats and strings inside an input)");
            }
            std::vector<T> tensors = v ? tree_leaves(*v) : std::vector<T>{};
            const std::size_t n = tensors.size();
            if (n == 0) {
                // Absent, None, or a container without tensors: placeholders.
                flat.resize(flat.size() + s.count);  // nullopt each
                continue;
            }
            if (auto it = captured_.find(s.key); it != captured_.end() && it->second != n) {
                if (s.positional)
                    throw runtime_error("Positional argument " + std::to_string(s.position) + " has " + std::to_string(n) +
                                        " tensors but previously got " + std::to_string(it->second) +
                                        " tensors. Inference is impossible in that case.");
                throw runtime_error("Named argument " + detail::repr_string(s.name) + " has " + std::to_string(n) +
                                    " tensors but previously got " + std::to_string(it->second) + " tensors in kwargs=" +
                                    detail::repr_names(keyword_names(c)) + ". Inference is impossible in that case.");
            }
            captured_[s.key] = n;
            for (auto& t : tensors) flat.emplace_back(std::move(t));
        }
        c.set_aligned(std::move(flat));
    }

    // A call whose argument held no tensor in the best candidate (an empty container) but some in
    // another call cannot be laid out on the best candidate.
    void check_aligned_sizes(std::span<const InputCandidate<T>> cands) const {
        const std::size_t n = inputs_[best_].size();
        if (std::all_of(cands.begin(), cands.end(), [&](const auto& c) { return c.n_aligned_tensors() == n; })) return;
        std::string sizes = "[";
        for (std::size_t i = 0; i < cands.size(); ++i) sizes += (i ? ", " : "") + std::to_string(cands[i].n_aligned_tensors());
        throw not_implemented_error("infer_dynamic_shapes is not implemented when the number of input tensors are not "
                                    "the same in every set of inputs " + sizes + "].");
    }

    // The shape of flat tensor f in every call (nullopt where the call had none), computed once per alignment.
    const std::vector<std::optional<std::vector<std::int64_t>>>& shapes_at(std::size_t f) const { return shapes_[f]; }

    void record_shapes() {
        const std::size_t n = inputs_[best_].size();
        shapes_.assign(n, {});
        for (std::size_t f = 0; f < n; ++f) {
            shapes_[f].reserve(inputs_.size());
            for (const auto& c : inputs_) {
                const auto& t = c.aligned_flat_list()[f];
                if (t) shapes_[f].emplace_back(shape_of(*t));
                else shapes_[f].emplace_back(std::nullopt);
            }
        }
    }

    // Per slot: is its first axis forced dynamic.
    std::vector<bool> batch_slots(const BatchDimensionFor& batch) const {
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
    std::string input_label(const Slot& s) const {
        if (s.varargs) return s.name + "_" + std::to_string(s.position - sig_.num_positional());
        return s.name;
    }
    // `<input>_dim_<axis>`, the reference's label, whatever the tensor's place in its argument.
    std::string generated_label(std::size_t flat, std::int64_t axis) const {
        return input_label(slots_[slot_of(flat)]) + "_dim_" + std::to_string(axis);
    }
    // A generated label no other group has: `<input>_dim_<axis>`; when another group has it,
    // `<input>_<index>_dim_<axis>` (the tensor's index in its argument), then `_2`, `_3`, ...
    std::string unique_label(std::size_t flat, std::int64_t axis, const std::set<std::string>& taken) const {
        const Slot& s = slots_[slot_of(flat)];
        std::string label = generated_label(flat, axis);
        if (!taken.contains(label)) return label;
        const std::string base = s.count > 1 ? input_label(s) + "_" + std::to_string(flat - s.offset) + "_dim_" +
                                                   std::to_string(axis)
                                             : label;
        label = base;
        for (int k = 2; taken.contains(label); ++k) label = base + "_" + std::to_string(k);
        return label;
    }
    // The sizes one dynamic axis took in each call; nullopt where the call had no tensor there, or
    // one value_if_missing gave (it was not observed).
    std::vector<std::optional<std::int64_t>> observed_sizes(std::size_t f, std::int64_t axis) const {
        std::vector<std::optional<std::int64_t>> seq;
        const auto& shapes = shapes_at(f);
        for (std::size_t c = 0; c < shapes.size(); ++c) {
            const auto& names = inputs_[c].filled();
            const bool filled = std::find(names.begin(), names.end(), slots_[slot_of(f)].key) != names.end();
            seq.push_back(shapes[c] && !filled ? std::optional((*shapes[c])[static_cast<std::size_t>(axis)]) : std::nullopt);
        }
        return seq;
    }

    std::vector<std::vector<std::optional<std::string>>> label_dims(const std::vector<std::vector<std::int64_t>>& dims,
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
    ordered_dict<DynamicShapes> post_process_for_kwargs(ordered_dict<DynamicShapes> kwargs) const {
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

    // What ties the dimensions of one call together: the dynamic axes, their automatic labels (equal
    // observed sizes share one) and the relations found between the labels; labels in order of
    // first appearance.
    struct Ties {
        std::vector<std::vector<std::int64_t>> dims;
        std::vector<std::vector<std::optional<std::string>>> labels;
        std::vector<DimRelation> relations;
        std::vector<std::string> order;
        std::map<std::string, std::set<std::int64_t>> observed;  // the sizes each label took
    };

    Ties tie_labels(const BatchDimensionFor& batch = {}) {
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
    static std::map<std::string, std::int64_t> label_sizes(const std::vector<std::optional<T>>& aligned, const Ties& ties) {
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
    static void derive_sizes(const std::vector<DimRelation>& relations, std::map<std::string, std::int64_t>& size,
                             bool overwrite) {
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

    // Fills each absent tensor of one call. Its shape is the last recorded one; a dynamic axis whose
    // label (or a relation) has a size in this call takes that size. When every dynamic axis is so
    // tied, it is zeros of that shape; otherwise it is empty along its largest untied dynamic axis
    // (a cache absent from the prefill call holds 0 tokens). With no dynamic axis: zeros of the
    // recorded shape; a recorded tensor with no element is reused.
    void fill_absent(std::vector<std::optional<T>>& aligned, const Ties& ties) const {
        const std::map<std::string, std::int64_t> size = label_sizes(aligned, ties);
        for (std::size_t f = 0; f < aligned.size(); ++f) {
            if (aligned[f]) continue;
            const T* seen = nullptr;
            for (const auto& c : inputs_)
                if (const auto& t = c.aligned_flat_list()[f]) seen = &*t;  // the last one, as the seed does
            if (!seen) throw runtime_error("There is no tensor at position " + std::to_string(f) + " in any flattened inputs.");
            std::vector<std::int64_t> shape = shape_of(*seen);
            if (detail::numel(*seen) == 0) {
                aligned[f] = *seen;
                continue;
            }
            std::optional<std::size_t> untied;
            for (std::size_t i = 0; i < ties.dims[f].size(); ++i) {
                const auto axis = static_cast<std::size_t>(ties.dims[f][i]);
                const auto& label = ties.labels[f][i];
                if (const auto it = label ? size.find(*label) : size.end(); it != size.end()) shape[axis] = it->second;
                else untied = axis;  // the largest so far
            }
            if (untied) shape[*untied] = 0;
            aligned[f] = untied ? tensor_traits<T>::empty(shape, *seen) : tensor_traits<T>::zeros(shape, *seen);
        }
    }

    V build_arguments(std::vector<std::optional<T>> aligned, const ArgumentsOptions& options) {
        // The ties (labels and relations) are computed only when a tensor is absent.
        if (std::any_of(aligned.begin(), aligned.end(), [](const auto& t) { return !t.has_value(); }))
            fill_absent(aligned, tie_labels());
        return pack_arguments(std::move(aligned), options);
    }

    // The filled flat list in the form of the best candidate's arguments.
    V pack_arguments(std::vector<std::optional<T>> aligned, const ArgumentsOptions& options) const {
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

    Signature sig_;
    ValueIfMissing<T> value_if_missing_;
    Kwargs<T> defaults_;  // non-None defaults, by name
    std::vector<InputCandidate<T>> inputs_;
    std::vector<TreeSpec> outputs_specs_;
    std::vector<std::vector<T>> flat_outputs_;
    std::vector<double> latencies_;
    std::size_t best_ = 0;
    bool aligned_ = false;
    std::vector<Slot> slots_;
    std::vector<std::size_t> flat_slot_;  // the slot of each flat tensor
    std::vector<std::vector<std::optional<std::vector<std::int64_t>>>> shapes_;  // [flat][call]
    std::map<std::string, std::size_t> captured_;
};

}  // namespace yobx
