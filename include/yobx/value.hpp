// yobx/value.hpp — Value<T>, a dynamic tree for arguments known only at run time.
//
// A Value is what a Python object is to a model's forward: None, bool, int,
// float, str, a tensor, a list, a tuple, an insertion-ordered dict, or a
// registered custom node (type name, child names, children). It feels like
// Python (v["input_ids"], v[0], printing as a literal) and is a plain C++
// value type (copyable, comparable). Every pytree function accepts it, and any
// static pytree converts to a Value and back. The pytree node that flattens and
// rebuilds a Value, whose kind is read at run time, is detail/pytree/value_node.hpp.
#pragma once

#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>
#include <yobx/ordered_dict.hpp>
#include <yobx/pytree.hpp>
#include <yobx/tensor.hpp>
#include <yobx/treespec.hpp>
#include <yobx/detail/pytree/value_node.hpp>

#include <atomic>
#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace yobx {

/// Python's None, for building Values: yobx::Value<T> v = yobx::none;
struct none_t {
    template <class = void>
    friend bool operator==(none_t, none_t) noexcept { return true; }
};
inline constexpr none_t none{};

/// A dynamic pytree over tensors of type T.
///   using V = yobx::Value<yobx::DenseTensor>;
///   V kwargs = V::dict({{"input_ids", ids}, {"use_cache", true}, {"mask", yobx::none}});
///   kwargs["input_ids"].tensor();   kwargs.repr() == "{'input_ids': Tensor(...), 'use_cache': True, 'mask': None}"
template <class T>
class Value {
    static_assert(check_tensor<T>(), "yobx::Value<T>: T must be a tensor type (see yobx/tensor.hpp)");

public:
    enum class Kind { none, boolean, integer, floating, string, tensor, list, tuple, dict, custom };

    using List = std::vector<Value>;
    using Dict = ordered_dict<Value>;
    /// A registered node seen at run time: type name, child names (empty: positional), children.
    struct Custom {
        std::string type;
        std::vector<std::string> keys;
        std::vector<Value> children;
        friend bool operator==(const Custom&, const Custom&) = default;
    };

    Value() noexcept = default;
    Value(const Value&) = default;
    /// A moved-from Value is None when it was kept flat (see is_flat), else
    /// what its storage leaves behind (an empty list for a list).
    Value(Value&& o) noexcept(std::is_nothrow_move_constructible_v<T>) : kind_(o.kind_), v_(std::move(o.v_)) {
        o.forget_flat();
    }
    // Both assignments take the new value out first: it may live inside this
    // one (v = v["x"], v = std::move(v[0])), and storing it destroys the old.
    Value& operator=(const Value& o) {
        if (this != &o) *this = Value(o);
        return *this;
    }
    Value& operator=(Value&& o) noexcept(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>) {
        if (this != &o) {
            Value moved(std::move(o));
            kind_ = moved.kind_;
            v_ = std::move(moved.v_);
        }
        return *this;
    }
    ~Value() = default;
    Value(none_t) noexcept {}
    Value(bool b) : kind_(Kind::boolean), v_(b) {}
    template <std::integral I>
        requires(!std::same_as<I, bool> && !detail::char_like<I>)
    Value(I i) : kind_(Kind::integer), v_(to_int64(i)) {}
    Value(double d) : kind_(Kind::floating), v_(d) {}
    Value(float d) : kind_(Kind::floating), v_(static_cast<double>(d)) {}
    Value(const char* s) : kind_(Kind::string), v_(std::string(s)) {}
    Value(std::string s) : kind_(Kind::string), v_(std::move(s)) {}
    Value(std::string_view s) : kind_(Kind::string), v_(std::string(s)) {}
    Value(T t) : kind_(Kind::tensor), v_(std::move(t)) {}

    static Value list(List items = {}) { return Value(Kind::list, std::move(items)); }
    static Value tuple(List items = {}) { return Value(Kind::tuple, std::move(items)); }
    /// Throws value_error on a repeated key (a Python dict literal would keep the last; a repeat here is a bug).
    static Value dict(std::initializer_list<std::pair<std::string, Value>> items) {
        Dict d;
        for (const auto& [k, v] : items) {
            if (d.contains(k)) throw value_error("Value::dict: duplicate key " + detail::repr_string(k));
            d.insert_or_assign(k, v);
        }
        return Value(Kind::dict, std::move(d));
    }
    static Value dict(Dict d) { return Value(Kind::dict, std::move(d)); }
    /// keys empty: positional children; otherwise one name per child.
    static Value custom(std::string type, std::vector<std::string> keys, List children) {
        if (type.empty()) throw value_error("Value::custom: the type name is empty");
        if (!keys.empty() && keys.size() != children.size())
            throw value_error("Value::custom: " + std::to_string(keys.size()) + " keys for " +
                              std::to_string(children.size()) + " children");
        return Value(Kind::custom, Custom{std::move(type), std::move(keys), std::move(children)});
    }

    Kind kind() const noexcept { return kind_; }
    bool is_none() const noexcept { return kind_ == Kind::none; }
    bool is_tensor() const noexcept { return kind_ == Kind::tensor; }
    bool is_scalar() const noexcept {
        return kind_ == Kind::boolean || kind_ == Kind::integer || kind_ == Kind::floating || kind_ == Kind::string;
    }
    bool is_sequence() const noexcept { return kind_ == Kind::list || kind_ == Kind::tuple; }

    /// The Python type name of this value: "NoneType", "bool", "int", "float", "str", "Tensor", "list", "tuple",
    /// "dict", or the custom type.
    std::string type_name() const {
        switch (kind_) {
            case Kind::none: return "NoneType";
            case Kind::boolean: return "bool";
            case Kind::integer: return "int";
            case Kind::floating: return "float";
            case Kind::string: return "str";
            case Kind::tensor: return "Tensor";
            case Kind::list: return "list";
            case Kind::tuple: return "tuple";
            case Kind::dict: return "dict";
            case Kind::custom:
                if (const auto* f = flat()) return std::string(f->spec().type_name());
                return std::get<Custom>(look().v_).type;
        }
        return "?";
    }

    bool as_bool() const { return get<bool>(Kind::boolean, "bool"); }
    std::int64_t as_int() const { return get<std::int64_t>(Kind::integer, "int"); }
    /// A float, or an int converted (as Python accepts an int where a float is expected).
    double as_double() const {
        if (kind_ == Kind::integer) return static_cast<double>(std::get<std::int64_t>(v_));
        return get<double>(Kind::floating, "float");
    }
    const std::string& as_string() const { return get<std::string>(Kind::string, "str"); }
    const T& tensor() const { return get<T>(Kind::tensor, "Tensor"); }
    T& tensor() { return const_cast<T&>(std::as_const(*this).tensor()); }

    // The accessors below read a Value kept flat (see is_flat) through its
    // unpacked tree; the non-const ones first make that tree the value.

    /// The items of a list or tuple.
    const List& items() const {
        if (!is_sequence()) wrong("a list or tuple");
        return std::get<List>(look().v_);
    }
    List& items() { return const_cast<List&>(std::as_const(change()).items()); }
    const Dict& dict() const { return get<Dict>(Kind::dict, "dict"); }
    Dict& dict() { return const_cast<Dict&>(std::as_const(change()).dict()); }
    const Custom& custom() const { return get<Custom>(Kind::custom, "custom node"); }
    Custom& custom() { return const_cast<Custom&>(std::as_const(change()).custom()); }

    /// len(): items of a list/tuple, keys of a dict, children of a custom node.
    std::size_t size() const {
        if (const auto* f = flat()) return f->spec().num_children();
        const Value& x = look();
        switch (kind_) {
            case Kind::list:
            case Kind::tuple: return std::get<List>(x.v_).size();
            case Kind::dict: return std::get<Dict>(x.v_).size();
            case Kind::custom: return std::get<Custom>(x.v_).children.size();
            default: throw type_error("object of type '" + type_name() + "' has no len()");
        }
    }

    /// Whether this value is kept flat: as the spec and the leaves that
    /// tree_unflatten was given (to_value and tree_map make Values that
    /// way). Making one costs a copy of the leaves (or nothing, leaves moved
    /// in), and flattening it again gives them back with the spec, walking
    /// no tree. The tree is built the first time something looks inside (an
    /// accessor, printing, comparing); it stays flat until a non-const
    /// accessor (items(), dict(), operator[] on a non-const Value...) could
    /// change it. Copies of a flat Value share the spec and the leaves,
    /// which nobody changes.
    bool is_flat() const noexcept { return flat() != nullptr; }

    /// v[i] on a list, tuple or custom node; negative i counts from the end as in Python.
    /// (A template, so that v[0] does not also match the const char* overload.)
    template <std::integral I>
        requires(!std::same_as<I, bool>)
    const Value& operator[](I index) const {
        const auto i = static_cast<std::int64_t>(index);
        const List* items = nullptr;
        if (is_sequence()) items = &std::get<List>(look().v_);
        else if (kind_ == Kind::custom) items = &std::get<Custom>(look().v_).children;
        else throw type_error("'" + type_name() + "' object is not subscriptable by an integer");
        const auto n = static_cast<std::int64_t>(items->size());
        const std::int64_t j = i < 0 ? i + n : i;
        if (j < 0 || j >= n)
            throw value_error(type_name() + " index " + std::to_string(i) + " out of range (size " + std::to_string(n) + ")");
        return (*items)[static_cast<std::size_t>(j)];
    }
    template <std::integral I>
        requires(!std::same_as<I, bool>)
    Value& operator[](I i) {
        return const_cast<Value&>(std::as_const(change())[i]);
    }

    /// v["key"] on a dict, or a named child of a custom node; throws value_error naming a missing key.
    const Value& operator[](std::string_view key) const {
        if (kind_ == Kind::dict) {
            const Dict& d = std::get<Dict>(look().v_);
            auto it = d.find(key);
            if (it == d.end()) throw value_error("KeyError: " + detail::repr_string(key));
            return it->second;
        }
        if (kind_ == Kind::custom) {
            const Custom& c = std::get<Custom>(look().v_);
            for (std::size_t i = 0; i < c.keys.size(); ++i)
                if (c.keys[i] == key) return c.children[i];
            throw value_error("'" + c.type + "' node has no child " + detail::repr_string(key));
        }
        throw type_error("'" + type_name() + "' object is not subscriptable by a string");
    }
    Value& operator[](std::string_view key) { return const_cast<Value&>(std::as_const(change())[key]); }
    const Value& operator[](const char* key) const { return (*this)[std::string_view(key)]; }
    Value& operator[](const char* key) { return (*this)[std::string_view(key)]; }

    /// Whether a dict has the key.
    bool contains(std::string_view key) const { return dict().contains(key); }
    /// Appends to a list.
    void push_back(Value v) {
        if (kind_ != Kind::list) wrong("a list");
        std::get<List>(change().v_).push_back(std::move(v));
    }

    /// The Python literal this value would print as:
    ///   {'x': Tensor(shape=[2, 3], dtype=float32), 'n': 3, 'past': DynamicCache(key_cache=[...], value_cache=[...])}
    std::string repr() const {
        std::string s;
        print(s);
        return s;
    }
    friend std::ostream& operator<<(std::ostream& os, const Value& v) { return os << v.repr(); }

    /// Structural equality; tensors compare with T's operator== when it has one.
    friend bool operator==(const Value& a, const Value& b)
        requires std::equality_comparable<T>
    {
        const Value& x = a.look();
        const Value& y = b.look();
        return x.kind_ == y.kind_ && x.v_ == y.v_;
    }

private:
    using Flat = detail::FlatTree<T>;

    // A list, tuple, dict or custom node kept flat (is_flat): the spec and
    // leaves tree_unflatten was given, shared by copies. The tree is built
    // on first look and kept; building it is thread-safe, as const access
    // must be (the first of two racing threads installs its tree, the other
    // drops its own). Once a non-const accessor hands out the tree, the
    // flat form is dropped: the tree is the value. Invariant: flat or tree.
    class Packed {
    public:
        explicit Packed(typename Flat::Ref f) noexcept : flat_(std::move(f)) {}
        Packed(const Packed& o) : flat_(o.flat_), tree_(o.flat_ ? nullptr : new Value(o.look())) {}
        Packed(Packed&& o) noexcept : flat_(std::move(o.flat_)), tree_(o.tree_.exchange(nullptr, std::memory_order_relaxed)) {}
        Packed& operator=(const Packed& o) {
            Packed copy(o);
            swap(copy);
            return *this;
        }
        Packed& operator=(Packed&& o) noexcept {
            Packed moved(std::move(o));
            swap(moved);
            return *this;
        }
        ~Packed() { delete tree_.load(std::memory_order_relaxed); }

        const Flat* flat() const noexcept { return flat_.get(); }
        const Value& look() const {
            if (Value* t = tree_.load(std::memory_order_acquire)) return *t;
            SpecReader r(flat_->spec(), nullptr, flat_->leaves().data());
            auto built = std::make_unique<Value>(detail::dynamic_node<Value>::unflatten(r));
            Value* seen = nullptr;
            if (tree_.compare_exchange_strong(seen, built.get(), std::memory_order_acq_rel, std::memory_order_acquire))
                return *built.release();
            return *seen;
        }
        Value& change() {
            Value& t = const_cast<Value&>(look());
            flat_.reset();
            return t;
        }
        friend bool operator==(const Packed& a, const Packed& b) { return a.look() == b.look(); }

    private:
        using SpecReader = detail::SpecReader<T>;
        void swap(Packed& o) noexcept {
            flat_.swap(o.flat_);
            Value* t = tree_.load(std::memory_order_relaxed);
            tree_.store(o.tree_.load(std::memory_order_relaxed), std::memory_order_relaxed);
            o.tree_.store(t, std::memory_order_relaxed);
        }

        typename Flat::Ref flat_;
        mutable std::atomic<Value*> tree_{nullptr};
    };

    using Storage = std::variant<std::monostate, bool, std::int64_t, double, std::string, T, List, Dict, Custom, Packed>;

    // The value to read: the unpacked tree of a Value kept flat, else itself.
    const Value& look() const {
        if (const auto* p = std::get_if<Packed>(&v_)) return p->look();
        return *this;
    }
    // The value to change: the tree of a Value kept flat, which stops being flat.
    Value& change() {
        if (auto* p = std::get_if<Packed>(&v_)) return p->change();
        return *this;
    }
    const Flat* flat() const noexcept {
        const auto* p = std::get_if<Packed>(&v_);
        return p ? p->flat() : nullptr;
    }
    // After a move: a Value that was kept flat becomes None (its Packed is empty).
    void forget_flat() noexcept {
        if (std::holds_alternative<Packed>(v_)) {
            v_.template emplace<std::monostate>();
            kind_ = Kind::none;
        }
    }

    template <class S>
    Value(Kind k, S&& s) : kind_(k), v_(std::forward<S>(s)) {}
    template <class S, class... A>
    Value(Kind k, std::in_place_type_t<S> in_place, A&&... a) : kind_(k), v_(in_place, std::forward<A>(a)...) {}

    template <std::integral I>
    static std::int64_t to_int64(I i) {
        if (!std::in_range<std::int64_t>(i))
            throw value_error("Value: the integer " + std::to_string(i) + " does not fit in int64");
        return static_cast<std::int64_t>(i);
    }

    [[noreturn]] void wrong(std::string_view expected) const {
        throw type_error("Value: expected " + std::string(expected) + ", got " + type_name() + " (" + repr() + ")");
    }

    template <class S>
    const S& get(Kind k, std::string_view name) const {
        if (kind_ != k) wrong(std::string(k == Kind::integer ? "an " : "a ") + std::string(name));
        return std::get<S>(look().v_);
    }

    void print(std::string& s) const {
        if (std::holds_alternative<Packed>(v_)) return look().print(s);
        switch (kind_) {
            case Kind::none: s += "None"; return;
            case Kind::boolean: s += std::get<bool>(v_) ? "True" : "False"; return;
            case Kind::integer: s += std::to_string(std::get<std::int64_t>(v_)); return;
            case Kind::floating: s += detail::repr_double(std::get<double>(v_)); return;
            case Kind::string: s += detail::repr_string(std::get<std::string>(v_)); return;
            case Kind::tensor: {
                const T& t = std::get<T>(v_);
                s += "Tensor(shape=[";
                bool first = true;
                for (const auto& d : tensor_traits<T>::shape(t)) {
                    if (!first) s += ", ";
                    first = false;
                    std::ostringstream os;
                    os << d;
                    s += os.str();
                }
                std::ostringstream os;
                os << tensor_traits<T>::dtype(t);
                s += "], dtype=" + os.str() + ")";
                return;
            }
            case Kind::list:
            case Kind::tuple: {
                const List& l = std::get<List>(v_);
                s += kind_ == Kind::list ? '[' : '(';
                for (std::size_t i = 0; i < l.size(); ++i) {
                    if (i) s += ", ";
                    l[i].print(s);
                }
                if (kind_ == Kind::tuple && l.size() == 1) s += ',';
                s += kind_ == Kind::list ? ']' : ')';
                return;
            }
            case Kind::dict: {
                s += '{';
                bool first = true;
                for (const auto& [k, v] : std::get<Dict>(v_)) {
                    if (!first) s += ", ";
                    first = false;
                    s += detail::repr_string(k) + ": ";
                    v.print(s);
                }
                s += '}';
                return;
            }
            case Kind::custom: {
                const Custom& c = std::get<Custom>(v_);
                s += c.type + "(";
                for (std::size_t i = 0; i < c.children.size(); ++i) {
                    if (i) s += ", ";
                    if (!c.keys.empty()) s += c.keys[i] + "=";
                    c.children[i].print(s);
                }
                s += ')';
                return;
            }
        }
    }

    Kind kind_ = Kind::none;
    Storage v_;

    friend struct detail::dynamic_node<Value>;
};

/// Any static pytree as a Value: std::vector -> list; std::tuple, std::pair,
/// std::array and aggregates -> tuple; maps and Hana structs -> dict;
/// registered classes -> custom nodes; absent optionals -> None.
///   auto v = yobx::to_value(std::pair{t, std::vector{t, t}});  // (Tensor(...), [Tensor(...), Tensor(...)])
/// Name the tensor type when x holds none: to_value<MyTensor>(std::tuple{1, 2}).
template <class T = void, class X>
auto to_value(const X& x) {
    auto [leaves, spec] = tree_flatten<T>(x);
    using L = typename decltype(leaves)::value_type;
    return tree_unflatten<Value<L>>(std::move(leaves), spec);
}

/// A Value back as a static type X. Throws value_error, naming the place and
/// both structures, when the value does not have X's structure.
///   auto args = yobx::from_value<std::pair<T, std::vector<T>>>(v);
template <class X, class T>
X from_value(const Value<T>& v) {
    auto [leaves, spec] = tree_flatten(v);
    return tree_unflatten<X>(std::move(leaves), spec);
}

/// tree_map on a Value: f may return another tensor type (Value<T> -> Value<U>).
template <class F, class T>
auto tree_map(F&& f, const Value<T>& v) {
    using U = std::remove_cvref_t<std::invoke_result_t<F&, const T&>>;
    auto [leaves, spec] = tree_flatten(v);
    std::vector<U> mapped;
    mapped.reserve(leaves.size());
    for (const auto& l : leaves) mapped.push_back(f(l));
    return tree_unflatten<Value<U>>(std::move(mapped), spec);
}

}  // namespace yobx
