// yobx/observer/recording.hpp — phase 1 of InputObserverInfo: recording.
//
// Each call is checked against the signature (Python's TypeErrors), its
// constants kept (the scalars that differ from a non-None default), the
// arguments value_if_missing supplies filled in, its keywords put in the
// signature's order, and it is stored with its outputs and latency.
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
InputObserverInfo<T>::InputObserverInfo(Signature signature, ValueIfMissing<T> value_if_missing,
                                        FillIfMissing<T> fill_if_missing)
    : sig_(std::move(signature)), value_if_missing_(std::move(value_if_missing)) {
    for (const auto& p : sig_.parameters())
        if (p.default_value && !p.default_value->is_none()) defaults_.append_unique(p.name, detail::default_as_value<T>(*p.default_value));
    const auto check_key = [&](const ArgRef& key, const std::string& option) {
        if (key.is_position()) {
            if (key.position() < 0 || static_cast<std::size_t>(key.position()) >= sig_.size())
                throw value_error("Unexpected keyword argument k=" + std::to_string(key.position()) + " provided as a " +
                                  option + " input for a function that does not accept it. All " + option +
                                  " indices must be in the observed signature: " + sig_.names_repr() + ".");
        } else if (!sig_.has_named(key.name()) && !sig_.var_keyword()) {
            throw value_error("Unexpected keyword argument " + detail::repr_string(key.name()) + " provided as a " +
                              option + " input for a function that does not accept it. All " + option +
                              " keys must be in the observed signature: " + sig_.names_repr() + ".");
        }
    };
    for (const auto& [key, v] : value_if_missing_) check_key(key, "value_if_missing");
    for (auto& [key, fill] : fill_if_missing) {
        check_key(key, "fill_if_missing");
        const std::string k = key.is_position() ? sig_[static_cast<std::size_t>(key.position())].name : key.name();
        if constexpr (!detail::has_full<T>) {
            if (fill.kind() == Fill<T>::Kind::ones || fill.kind() == Fill<T>::Kind::constant)
                throw type_error("fill_if_missing: " + fill.to_string() + " for " + detail::repr_string(k) +
                                 " needs tensor_traits<T>::full(const std::vector<int64_t>& shape, double value, "
                                 "const T& like); this tensor type does not define it");
        }
        if (!fills_.try_emplace(k, FillState{.fill = std::move(fill), .user = true}).second)
            throw value_error("fill_if_missing names " + detail::repr_string(k) + " twice");
    }
}

template <class T>
InputCandidate<T> InputObserverInfo<T>::make_candidate(Args<T> args, Kwargs<T> kwargs, bool clone) const {
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
                filled.push_back(positional_key(k));
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

template <class T>
auto InputObserverInfo<T>::observed_arguments(std::size_t index) const -> V {
    check_index(index);
    const InputCandidate<T>& c = inputs_[index];
    typename V::List args = c.args();
    for (std::size_t i = 0; i < args.size(); ++i)
        if (c.is_filled(positional_key(i))) args[i] = V();
    Kwargs<T> kwargs;
    for (const auto& [k, v] : c.kwargs())
        if (!c.is_filled(k)) kwargs.append_unique(k, v);
    for (const auto& [k, v] : c.cst_kwargs()) kwargs.append_unique(k, v);
    for (const auto& [k, v] : c.other_kwargs()) kwargs.append_unique(k, v);
    return V::tuple({V::tuple(std::move(args)), V::dict(order_kwargs(std::move(kwargs)))});
}

template <class T>
void InputObserverInfo<T>::add(InputCandidate<T> candidate, TreeSpec output_spec, std::vector<T> flat_output,
                               double latency) {
    inputs_.push_back(std::move(candidate));
    outputs_specs_.push_back(std::move(output_spec));
    flat_outputs_.push_back(std::move(flat_output));
    latencies_.push_back(latency);
    refresh();
    // Constants that differ from the first call's: said now, refused at inference (as the seed does).
    const std::size_t n = inputs_.size() - 1;
    if (const Kwargs<T> mine = bound_constants(inputs_[n]), first = bound_constants(inputs_[0]);
        n > 0 && !detail::python_equal(mine, first))
        warn(constants_difference(n, mine, 0, first) +
             ": infer_dynamic_shapes and infer_arguments will refuse them (torch.export takes one value of a "
             "constant; make the calls with the same constants, or observe each setting with its own observer)");
}

template <class T>
void InputObserverInfo<T>::warn(std::string message) {
    if (std::find(warnings_.begin(), warnings_.end(), message) != warnings_.end()) return;
    if (log_) *log_ << "yobx::InputObserver warning: " << message << '\n';
    warnings_.push_back(std::move(message));
}

template <class T>
void InputObserverInfo<T>::remove_inputs(const std::vector<ArgRef>& inputs) {
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
    bool removed = false;  // some call had one of them
    const auto named = [&](const std::string& k) { return std::find(names.begin(), names.end(), k) != names.end(); };
    for (const auto& c : inputs_) {
        for (const auto& kv : c.kwargs()) removed = removed || named(kv.first);
        for (const auto& kv : c.cst_kwargs()) removed = removed || named(kv.first);
        for (const auto& kv : c.other_kwargs()) removed = removed || named(kv.first);
        for (std::size_t i = 0; i < std::min(c.args().size(), sig_.num_positional()); ++i)
            removed = removed || (named(sig_[i].name) && !c.args()[i].is_none());
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
    if (!removed) {
        std::string list = "[";
        for (std::size_t i = 0; i < inputs.size(); ++i)
            list += (i ? ", " : "") + (inputs[i].is_position() ? std::to_string(inputs[i].position())
                                                                 : detail::repr_string(inputs[i].name()));
        throw value_error("No input in all candidates was removed from input_names=" + list + "].");
    }
    inputs_ = std::move(out);
    refresh();
}

// The key of positional argument i: its parameter's name, or "*<args>[j]" for an item of *args
// (a position beyond the named ones exists only with *args: check_binding refuses it otherwise).
template <class T>
std::string InputObserverInfo<T>::positional_key(std::size_t i) const {
    if (i < sig_.num_positional()) return sig_[i].name;
    return "*" + sig_.var_positional()->first + "[" + std::to_string(i - sig_.num_positional()) + "]";
}

template <class T>
void InputObserverInfo<T>::check_captured() const {
    if (inputs_.empty()) throw runtime_error("No inputs were captured.");
}

template <class T>
void InputObserverInfo<T>::check_index(std::size_t index) const {
    check_captured();
    if (index >= inputs_.size())
        throw value_error("No stored input set for index=" + std::to_string(index) + "<" + std::to_string(inputs_.size()) + ".");
}

// Is v the default of the named parameter k (None for a None default)?
template <class T>
bool InputObserverInfo<T>::is_default(const std::string& k, const V& v) const {
    const auto i = sig_.find(k);
    if (!i || !sig_.has_named(k) || !sig_[*i].default_value) return false;
    return detail::python_equal(v, detail::default_as_value<T>(*sig_[*i].default_value));
}

template <class T>
Kwargs<T> InputObserverInfo<T>::order_kwargs(Kwargs<T> kwargs) const {
    Kwargs<T> ordered;
    for (const auto& p : sig_.parameters())
        if (sig_.has_named(p.name))
            if (auto it = kwargs.find(p.name); it != kwargs.end()) ordered.append_unique(p.name, std::move(it->second));
    for (auto& [k, v] : kwargs)
        if (!ordered.contains(k)) ordered.append_unique(k, std::move(v));
    return ordered;
}

// Python's TypeErrors for a call that does not bind to the signature.
template <class T>
void InputObserverInfo<T>::check_binding(const Args<T>& args, const Kwargs<T>& kwargs) const {
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

}  // namespace yobx
