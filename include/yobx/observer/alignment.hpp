// yobx/observer/alignment.hpp — phase 2 of InputObserverInfo: best candidate and alignment.
//
// The best candidate is the call with the most tensors; every call is laid out
// on its arguments (Slots), None where it had no tensor. Calls must agree on
// their constants, bound to the signature, and on the non-tensor values inside
// their containers (torch.export specializes them).
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

namespace detail {

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

// The error of two calls whose constants differ, `why` after them.
template <class T>
runtime_error different_constants(const Kwargs<T>& mine, const Kwargs<T>& theirs, const std::string& why = "") {
    return runtime_error("Two calls were made with different constant values, " + Value<T>::dict(mine).repr() +
                         " != " + Value<T>::dict(theirs).repr() + why);
}

}  // namespace detail

template <class T>
void InputObserverInfo<T>::align_inputs_none_values() {
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
        for (std::size_t i = 0; i < inputs_.size(); ++i) align_with(inputs_[i], i);
        check_aligned_sizes(inputs_);
        record_shapes();
    } catch (...) {
        for (auto& c : inputs_) c.reset_alignment();
        throw;
    }
    aligned_ = true;
}

template <class T>
void InputObserverInfo<T>::refresh() {
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

// The value bound to a named parameter (by position or keyword) or keyword, if any.
template <class T>
auto InputObserverInfo<T>::bound(const InputCandidate<T>& c, std::string_view name) const -> const V* {
    if (const auto i = sig_.find(name); i && *i < sig_.num_positional() && *i < c.args().size()) return &c.args()[*i];
    auto it = c.kwargs().find(name);
    return it == c.kwargs().end() ? nullptr : &it->second;
}

// Names of the arguments a call gives (not None), in its order; *args items are not named.
template <class T>
std::vector<std::string> InputObserverInfo<T>::present_names(const InputCandidate<T>& c) const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < std::min(c.args().size(), sig_.num_positional()); ++i)
        if (!c.args()[i].is_none()) out.push_back(sig_[i].name);
    for (const auto& kv : c.kwargs()) out.push_back(kv.first);
    return out;
}

// The names of the arguments a call passed by keyword, in its (the signature's) order.
template <class T>
std::vector<std::string> InputObserverInfo<T>::keyword_names(const InputCandidate<T>& c) {
    std::vector<std::string> out;
    for (const auto& kv : c.kwargs()) out.push_back(kv.first);
    return out;
}

// One past the last *args item that is not None (0 when there is none).
template <class T>
std::size_t InputObserverInfo<T>::present_varargs_end(const InputCandidate<T>& c) const {
    std::size_t end = 0;
    for (std::size_t i = sig_.num_positional(); i < c.args().size(); ++i)
        if (!c.args()[i].is_none()) end = i + 1;
    return end;
}

template <class T>
auto InputObserverInfo<T>::make_slots(const InputCandidate<T>& best) const -> std::vector<Slot> {
    std::vector<Slot> slots;
    std::size_t offset = 0;
    const auto var = sig_.var_positional();
    for (std::size_t i = 0; i < best.args().size(); ++i) {
        Slot s;
        s.positional = true;
        s.position = i;
        s.varargs = i >= sig_.num_positional();
        s.name = s.varargs ? var->first : sig_[i].name;
        s.key = positional_key(i);
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

template <class T>
auto InputObserverInfo<T>::lookup(const InputCandidate<T>& c, const Slot& s) const -> const V* {
    if (s.varargs) return s.position < c.args().size() ? &c.args()[s.position] : nullptr;
    return bound(c, s.name);
}

// The constants of a call bound to the signature, in its order: the scalars that differ from
// their parameter's non-None default, passed by keyword (the constant kwargs) or by position.
// `f(x, False)` and `f(x, add=False)` have the same constants.
template <class T>
Kwargs<T> InputObserverInfo<T>::bound_constants(const InputCandidate<T>& c) const {
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

// "calls 0 and 2 differ in 'scale': absent (default 1.0) vs 0.5", the calls in increasing order
// (`a` nullopt: the arguments given to infer_arguments).
template <class T>
std::string InputObserverInfo<T>::constants_difference(std::optional<std::size_t> a, const Kwargs<T>& in_a,
                                                       std::size_t b, const Kwargs<T>& in_b) const {
    const bool swap = a && *a > b;
    const Kwargs<T>& first = swap ? in_b : in_a;
    const Kwargs<T>& second = swap ? in_a : in_b;
    const auto value = [&](const Kwargs<T>& kw, const std::string& k) {
        if (const auto it = kw.find(k); it != kw.end()) return it->second.repr();
        const auto d = defaults_.find(k);
        return d == defaults_.end() ? std::string("absent") : "absent (default " + d->second.repr() + ")";
    };
    std::vector<std::string> keys;
    for (const Kwargs<T>* kw : {&first, &second})
        for (const auto& entry : *kw)
            if (std::find(keys.begin(), keys.end(), entry.first) == keys.end()) keys.push_back(entry.first);
    std::string out = !a ? "the arguments given and call " + std::to_string(b)
                         : "calls " + std::to_string(swap ? b : *a) + " and " + std::to_string(swap ? *a : b);
    out += " differ in ";
    bool any = false;
    for (const auto& k : keys) {
        const std::string x = value(first, k), y = value(second, k);
        const auto fx = first.find(k), sy = second.find(k);
        if (fx != first.end() && sy != second.end() && detail::python_equal(fx->second, sy->second)) continue;
        if (any) out += ", ";
        out += detail::repr_string(k);
        out += ": " + x + " vs " + y;
        any = true;
    }
    return out;
}

template <class T>
void InputObserverInfo<T>::align_with(InputCandidate<T>& c, std::optional<std::size_t> index) {
    const InputCandidate<T>& best = inputs_[best_];
    if (const Kwargs<T> mine = bound_constants(c), theirs = bound_constants(best); !detail::python_equal(mine, theirs))
        throw detail::different_constants(mine, theirs,
                                          " (" + constants_difference(index, mine, best_, theirs) + ")");
    std::vector<std::optional<T>> flat;
    flat.reserve(best.size());
    for (const Slot& s : slots_) {
        const V* v = lookup(c, s);
        // A scalar passed by position to a parameter without a non-None default: compared as passed.
        if (s.positional && !s.varargs && v && v->is_scalar() && !defaults_.contains(s.name)) {
            const V& b = best.args()[s.position];
            if (b.is_scalar() && !detail::python_equal(*v, b)) {
                const Kwargs<T> mine{{s.name, *v}}, theirs{{s.name, b}};
                throw detail::different_constants<T>(mine, theirs, " (" + constants_difference(index, mine, best_, theirs) + ")");
            }
        }
        // Ints, floats, strings inside a container: torch.export specializes them, never drop them.
        if (v && (v->kind() == V::Kind::list || v->kind() == V::Kind::tuple || v->kind() == V::Kind::dict ||
                  v->kind() == V::Kind::custom)) {
            const V* b = lookup(best, s);
            const std::string path =
                s.varargs ? s.name + "[" + std::to_string(s.position - sig_.num_positional()) + "]" : s.name;
            if (b && !b->is_none())
                if (auto d = detail::constant_difference(*v, *b, path)) {
                    const Kwargs<T> mine{{std::get<0>(*d), std::get<1>(*d)}}, theirs{{std::get<0>(*d), std::get<2>(*d)}};
                    throw detail::different_constants<T>(
                        mine, theirs,
                        " (" + constants_difference(index, mine, best_, theirs) +
                            "; torch.export specializes the ints, floats and strings inside an input)");
                }
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
template <class T>
void InputObserverInfo<T>::check_aligned_sizes(std::span<const InputCandidate<T>> cands) const {
    const std::size_t n = inputs_[best_].size();
    if (std::all_of(cands.begin(), cands.end(), [&](const auto& c) { return c.n_aligned_tensors() == n; })) return;
    std::string sizes = "[";
    for (std::size_t i = 0; i < cands.size(); ++i) sizes += (i ? ", " : "") + std::to_string(cands[i].n_aligned_tensors());
    throw not_implemented_error("infer_dynamic_shapes is not implemented when the number of input tensors are not "
                                "the same in every set of inputs " + sizes + "].");
}

template <class T>
void InputObserverInfo<T>::record_shapes() {
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

}  // namespace yobx
