// yobx/adapters/libtorch/ivalue.hpp — c10::IValue to and from Value<at::Tensor>.
//
// from_ivalue and to_ivalue convert a TorchScript value and yobx's dynamic tree of tensors
// (TValue); c10::IValue is a pytree node read through that form, so an observed forward may
// return one.
#pragma once

#include <yobx/adapters/libtorch/tensor_traits.hpp>
#include <yobx/error.hpp>
#include <yobx/pytree.hpp>
#include <yobx/value.hpp>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace yobx {

namespace libtorch {

using TValue = Value<at::Tensor>;

/// How to_ivalue converts a registered node (a KVCache seen as a DynamicCache):
/// refuse it, or write it as the list of its children, the form torch.export's
/// dynamic shapes give such a node.
enum class CustomNodes { error, as_lists };

namespace detail {

inline std::string tag_of(const c10::IValue& v) { return v.tagKind(); }

// The type TorchScript declares for such a value: Tensor rather than the
// shaped Float(2, 3) an IValue reports (lists are invariant, so
// List[Float(2, 3)] would not be accepted as a List[Tensor]).
inline c10::TypePtr general_type(const c10::IValue& v) {
    if (v.isTensor()) return c10::TensorType::get();
    if (v.isTuple()) {
        std::vector<c10::TypePtr> types;
        for (const auto& e : v.toTupleRef().elements()) types.push_back(general_type(e));
        return c10::TupleType::create(std::move(types));
    }
    return v.type();
}

// The element type a TorchScript list or dict of these values needs: the
// unified type when there is one (List[Tensor], Dict[str, int]), Any otherwise.
inline c10::TypePtr element_type(const std::vector<c10::IValue>& items) {
    if (items.empty()) return c10::AnyType::get();
    std::vector<c10::TypePtr> types;
    types.reserve(items.size());
    for (const auto& i : items) types.push_back(general_type(i));
    std::ostringstream why_not;
    if (auto t = c10::unifyTypeList(types, why_not)) return *t;
    return c10::AnyType::get();
}

}  // namespace detail

/// c10::IValue -> Value<at::Tensor>: None, bool, int, float, str, Tensor (an
/// undefined tensor is None, as TorchScript passes an absent Optional[Tensor]),
/// List, Tuple and Dict with str keys, recursively. Anything else throws
/// type_error naming the IValue's tag:
///   from_ivalue(c10::IValue(c10::Device("cpu")))  // type_error: ... an IValue with tag Device ...
inline TValue from_ivalue(const c10::IValue& v) {
    if (v.isNone()) return TValue();
    if (v.isBool()) return TValue(v.toBool());
    if (v.isInt()) return TValue(v.toInt());
    if (v.isDouble()) return TValue(v.toDouble());
    if (v.isString()) return TValue(v.toStringRef());
    if (v.isTensor()) {
        const at::Tensor& t = v.toTensor();
        return t.defined() ? TValue(t) : TValue();
    }
    if (v.isList()) {
        TValue::List items;
        const auto list = v.toListRef();
        items.reserve(list.size());
        for (const auto& i : list) items.push_back(from_ivalue(i));
        return TValue::list(std::move(items));
    }
    if (v.isTuple()) {
        TValue::List items;
        const auto& elements = v.toTupleRef().elements();
        items.reserve(elements.size());
        for (const auto& i : elements) items.push_back(from_ivalue(i));
        return TValue::tuple(std::move(items));
    }
    if (v.isGenericDict()) {
        TValue::Dict d;
        for (const auto& entry : v.toGenericDict()) {
            if (!entry.key().isString())
                throw type_error("from_ivalue: a dict key is an IValue with tag " + detail::tag_of(entry.key()) +
                                 "; yobx::Value dicts have str keys");
            d.insert_or_assign(entry.key().toStringRef(), from_ivalue(entry.value()));
        }
        return TValue::dict(std::move(d));
    }
    throw type_error("from_ivalue: cannot convert an IValue with tag " + detail::tag_of(v) +
                     " to a yobx::Value (supported: None, Bool, Int, Double, String, Tensor, List, Tuple, "
                     "GenericDict with str keys)");
}

namespace detail {

// to_ivalue, with the element types of lists and dicts unified (`typed`: List[Tensor], as TorchScript
// declares them) or Any (what save_value pickles: a typed list or dict pickles with
// torch.jit._pickle globals, which torch.load's weights_only unpickler refuses).
inline c10::IValue to_ivalue(const TValue& v, CustomNodes custom, bool typed) {
    using K = TValue::Kind;
    const auto items_of = [&](const TValue::List& list) {
        std::vector<c10::IValue> out;
        out.reserve(list.size());
        for (const auto& i : list) out.push_back(to_ivalue(i, custom, typed));
        return out;
    };
    const auto type_of = [&](const std::vector<c10::IValue>& items) {
        return typed ? detail::element_type(items) : c10::AnyType::get();
    };
    const auto list_of = [&](const TValue::List& list) {
        std::vector<c10::IValue> items = items_of(list);
        c10::impl::GenericList out(type_of(items));
        out.reserve(items.size());
        for (auto& i : items) out.push_back(std::move(i));
        return c10::IValue(std::move(out));
    };
    switch (v.kind()) {
        case K::none: return c10::IValue();
        case K::boolean: return c10::IValue(v.as_bool());
        case K::integer: return c10::IValue(v.as_int());
        case K::floating: return c10::IValue(v.as_double());
        case K::string: return c10::IValue(v.as_string());
        case K::tensor: return c10::IValue(v.tensor());
        case K::list: return list_of(v.items());
        case K::tuple: return c10::IValue(c10::ivalue::Tuple::create(items_of(v.items())));
        case K::dict: {
            std::vector<std::string> keys;
            std::vector<c10::IValue> values;
            for (const auto& [k, x] : v.dict()) {
                keys.push_back(k);
                values.push_back(to_ivalue(x, custom, typed));
            }
            c10::impl::GenericDict d(c10::StringType::get(), type_of(values));
            for (std::size_t i = 0; i < keys.size(); ++i) d.insert(keys[i], std::move(values[i]));
            return c10::IValue(std::move(d));
        }
        case K::custom: {
            if (custom == CustomNodes::error)
                throw type_error("to_ivalue: " + v.type_name() +
                                 " is a registered node, which has no IValue form; pass CustomNodes::as_lists "
                                 "to write it as the list of its children");
            return list_of(v.custom().children);
        }
    }
    throw type_error("to_ivalue: unknown Value kind");
}

}  // namespace detail

/// Value<at::Tensor> -> c10::IValue, the inverse of from_ivalue. A list's or
/// dict's element type is the unified type of its items (List[Tensor] for a
/// list of tensors), so TorchScript accepts it where it declares one. A
/// registered node (Kind::custom) throws type_error unless `custom` is
/// CustomNodes::as_lists.
inline c10::IValue to_ivalue(const TValue& v, CustomNodes custom = CustomNodes::error) {
    return detail::to_ivalue(v, custom, /*typed=*/true);
}

}  // namespace libtorch

namespace detail {

/// c10::IValue as a run-time-structured pytree node, read through its Value
/// form: tree_flatten<at::Tensor>(ivalue) works on what from_ivalue converts,
/// so an observed forward may return an IValue.
template <>
struct dynamic_node<c10::IValue> {
    using leaf_type = at::Tensor;
    static constexpr long fixed = -1;
    template <class Ctx>
    static void flatten(const c10::IValue& v, Ctx& c) {
        dynamic_node<libtorch::TValue>::flatten(libtorch::from_ivalue(v), c);
    }
    template <class R>
    static c10::IValue unflatten(R& r) {
        return libtorch::to_ivalue(dynamic_node<libtorch::TValue>::unflatten(r));
    }
};

}  // namespace detail

}  // namespace yobx
