// yobx/observer/candidate.hpp — one recorded call of an observed function.
//
// An InputCandidate keeps the positional and keyword arguments of one call as
// Values (deep copies, so later in-place changes of the caller's tensors do not
// reach them), the constant keyword arguments, and the flat list of its
// tensors. Once aligned on the best candidate it also holds the aligned flat
// list: one entry per tensor of the best candidate, None where this call had
// nothing.
#pragma once

#include <yobx/error.hpp>
#include <yobx/ordered_dict.hpp>
#include <yobx/tensor.hpp>
#include <yobx/treespec.hpp>
#include <yobx/value.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// The positional arguments of a call.
template <class T>
using Args = std::vector<Value<T>>;
/// The keyword arguments of a call, in order.
template <class T>
using Kwargs = ordered_dict<Value<T>>;

namespace detail {

// Copies v, cloning every tensor, and appends the clones to leaves in pytree order.
template <class T>
Value<T> clone_collect(const Value<T>& v, std::vector<T>* leaves) {
    using V = Value<T>;
    switch (v.kind()) {
        case V::Kind::tensor: {
            T c = tensor_traits<T>::clone(v.tensor());
            if (leaves) leaves->push_back(c);
            return V(std::move(c));
        }
        case V::Kind::list:
        case V::Kind::tuple: {
            typename V::List items;
            items.reserve(v.items().size());
            for (const auto& x : v.items()) items.push_back(clone_collect(x, leaves));
            return v.kind() == V::Kind::list ? V::list(std::move(items)) : V::tuple(std::move(items));
        }
        case V::Kind::dict: {
            typename V::Dict d;
            d.reserve(v.dict().size());
            for (const auto& [k, x] : v.dict()) d.append_unique(k, clone_collect(x, leaves));
            return V::dict(std::move(d));
        }
        case V::Kind::custom: {
            const auto& c = v.custom();
            typename V::List children;
            children.reserve(c.children.size());
            for (const auto& x : c.children) children.push_back(clone_collect(x, leaves));
            return V::custom(c.type, c.keys, std::move(children));
        }
        default: return v;
    }
}

// The number of elements of t (0 for an empty tensor).
template <class T>
std::int64_t numel(const T& t) {
    std::int64_t n = 1;
    for (const auto d : tensor_traits<T>::shape(t)) n *= static_cast<std::int64_t>(d);  // no copy of the shape
    return n;
}

}  // namespace detail

/// One recorded call:
///   InputCandidate<T> c(args, kwargs, cst_kwargs, /*clone=*/true);
///   c.size();        // number of tensors
///   c.to_string() == "InputCandidate(2 args, 1 kwargs, 3 tensors, 0 aligned tensors)"
template <class T>
class InputCandidate {
public:
    using V = Value<T>;

    /// Stores the arguments; with clone, every tensor is deep-copied (tensor_traits<T>::clone).
    InputCandidate(Args<T> args, Kwargs<T> kwargs, Kwargs<T> cst_kwargs, bool clone)
        : cst_kwargs_(std::move(cst_kwargs)) {
        if (clone) {
            args_.reserve(args.size());
            for (const auto& a : args) args_.push_back(detail::clone_collect(a, &flat_list_));
            for (const auto& [k, v] : kwargs) kwargs_.append_unique(k, detail::clone_collect(v, &flat_list_));
        } else {
            args_ = std::move(args);
            kwargs_ = std::move(kwargs);
            const auto append = [&](const V& v) {
                auto leaves = tree_leaves(v);
                flat_list_.insert(flat_list_.end(), std::make_move_iterator(leaves.begin()), std::make_move_iterator(leaves.end()));
            };
            for (const auto& a : args_) append(a);
            for (const auto& kv : kwargs_) append(kv.second);
        }
    }

    const Args<T>& args() const noexcept { return args_; }
    const Kwargs<T>& kwargs() const noexcept { return kwargs_; }
    /// The bool/int/float/str keyword arguments that differ from a non-None default.
    const Kwargs<T>& cst_kwargs() const noexcept { return cst_kwargs_; }
    /// The tensors of the call in pytree order (positional arguments first).
    const std::vector<T>& flat_list() const noexcept { return flat_list_; }
    /// The number of tensors (Python's len(candidate)).
    std::size_t size() const noexcept { return flat_list_.size(); }

    /// The structure of (args, kwargs) as a TreeSpec of the tuple (tuple(args), dict(kwargs)).
    TreeSpec spec() const { return tree_structure(as_value()); }
    /// (tuple(args), dict(kwargs)) as one Value.
    V as_value() const { return V::tuple({V::tuple(args_), V::dict(kwargs_)}); }

    bool is_aligned() const noexcept { return aligned_.has_value(); }
    /// One entry per tensor of the best candidate; nullopt where this call had none.
    const std::vector<std::optional<T>>& aligned_flat_list() const {
        if (!aligned_) throw runtime_error("This input was not aligned with the others.");
        return *aligned_;
    }
    std::size_t n_aligned_tensors() const { return aligned_flat_list().size(); }

    /// "InputCandidate(2 args, 1 kwargs, 3 tensors, 3 aligned tensors)".
    std::string to_string() const {
        return "InputCandidate(" + std::to_string(args_.size()) + " args, " + std::to_string(kwargs_.size()) +
               " kwargs, " + std::to_string(flat_list_.size()) + " tensors, " +
               std::to_string(aligned_ ? aligned_->size() : 0) + " aligned tensors)";
    }
    /// "InputCandidate(args=#2(...), kwargs=#1{...}, cst_kwargs={'add': True})".
    std::string str_obs() const {
        return "InputCandidate(args=#" + std::to_string(args_.size()) + "(...), kwargs=#" +
               std::to_string(kwargs_.size()) + "{...}, cst_kwargs=" + V::dict(cst_kwargs_).repr() + ")";
    }

    /// The arguments value_if_missing supplied in this call (names; "*args[j]" for an item of *args).
    const std::vector<std::string>& filled() const noexcept { return filled_; }
    /// Did value_if_missing supply the argument `key` (a name, or "*args[j]") in this call?
    bool is_filled(std::string_view key) const {
        return std::find(filled_.begin(), filled_.end(), key) != filled_.end();
    }
    /// The other keyword arguments the call passed that are neither tensors nor constants (a scalar
    /// or None that differs from its parameter's default): not exported, kept to replay the call.
    const Kwargs<T>& other_kwargs() const noexcept { return other_kwargs_; }

    // Used by InputObserverInfo.
    void set_filled(std::vector<std::string> names) { filled_ = std::move(names); }
    void set_other_kwargs(Kwargs<T> kwargs) { other_kwargs_ = std::move(kwargs); }
    void set_aligned(std::vector<std::optional<T>> flat) { aligned_ = std::move(flat); }
    void reset_alignment() noexcept { aligned_.reset(); }

private:
    Args<T> args_;
    Kwargs<T> kwargs_;
    Kwargs<T> cst_kwargs_;
    std::vector<T> flat_list_;
    std::vector<std::string> filled_;
    Kwargs<T> other_kwargs_;
    std::optional<std::vector<std::optional<T>>> aligned_;
};

}  // namespace yobx
