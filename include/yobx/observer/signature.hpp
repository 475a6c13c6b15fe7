// yobx/observer/signature.hpp — the parameters of an observed function.
//
// C++ has no inspect.signature: the user states the forward's parameters once
// (names, kinds, defaults), the way Python would report them. The observer uses
// it to name positional arguments, order keyword arguments, recognize constant
// keyword arguments and wrap extra keywords under the `**kwargs` parameter.
#pragma once

#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>
#include <yobx/treespec.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

struct none_t;

/// The kinds of Python parameters an observed function may have.
enum class ParamKind { positional_or_keyword, keyword_only, var_positional, var_keyword };

/// A parameter's default value: None, or a bool, int, float or str constant (what inspect reports for a forward).
class DefaultValue {
public:
    DefaultValue() = default;  // None
    DefaultValue(const none_t&) {}
    template <class = void>
    DefaultValue(bool b) : v_(Constant(b)) {}
    template <class = void>
    DefaultValue(int i) : v_(Constant(std::int64_t{i})) {}
    template <class = void>
    DefaultValue(std::int64_t i) : v_(Constant(i)) {}
    template <class = void>
    DefaultValue(double d) : v_(Constant(d)) {}
    template <class = void>
    DefaultValue(const char* s) : v_(Constant(std::string(s))) {}
    template <class = void>
    DefaultValue(std::string s) : v_(Constant(std::move(s))) {}

    template <class = void>
    bool is_none() const noexcept { return !v_.has_value(); }
    /// The constant, or nullopt for None.
    const std::optional<Constant>& value() const noexcept { return v_; }
    /// Python's repr: None, True, 3, 0.5, 'text'.
    template <class = void>
    std::string repr() const { return v_ ? yobx::repr(*v_) : "None"; }
    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const DefaultValue& d) { return os << d.repr(); }
    friend bool operator==(const DefaultValue&, const DefaultValue&) = default;

private:
    std::optional<Constant> v_;
};

/// One parameter. Build them with param(), kw_only(), var_args() and var_kwargs().
struct Parameter {
    std::string name;
    ParamKind kind = ParamKind::positional_or_keyword;
    std::optional<DefaultValue> default_value;  // nullopt: no default
    friend bool operator==(const Parameter&, const Parameter&) = default;
};

/// `x` (no default) or `x=default`, positional or keyword.
template <class = void>
inline Parameter param(std::string name) { return {std::move(name), ParamKind::positional_or_keyword, std::nullopt}; }
template <class = void>
inline Parameter param(std::string name, DefaultValue d) {
    return {std::move(name), ParamKind::positional_or_keyword, std::move(d)};
}
/// A keyword-only parameter (after `*` or `*args` in Python).
template <class = void>
inline Parameter kw_only(std::string name) { return {std::move(name), ParamKind::keyword_only, std::nullopt}; }
template <class = void>
inline Parameter kw_only(std::string name, DefaultValue d) {
    return {std::move(name), ParamKind::keyword_only, std::move(d)};
}
/// `*args`.
template <class = void>
inline Parameter var_args(std::string name) { return {std::move(name), ParamKind::var_positional, std::nullopt}; }
/// `**kwargs`.
template <class = void>
inline Parameter var_kwargs(std::string name) { return {std::move(name), ParamKind::var_keyword, std::nullopt}; }

/// The parameters of an observed function, in Python's order:
///   yobx::Signature sig{yobx::param("input_ids"), yobx::param("attention_mask", yobx::none),
///                       yobx::param("past_key_values", yobx::none), yobx::kw_only("use_cache", true),
///                       yobx::var_kwargs("kwargs")};
///   sig.to_string() == "(input_ids, attention_mask=None, past_key_values=None, *, use_cache=True, **kwargs)"
/// Throws value_error on a repeated name, on parameters out of Python's order
/// (positional, `*args`, keyword-only, `**kwargs`), or on a default on a variadic parameter.
class Signature {
public:
    Signature() = default;
    template <class = void>
    Signature(std::initializer_list<Parameter> params) : Signature(std::vector<Parameter>(params)) {}
    template <class = void>
    explicit Signature(std::vector<Parameter> params) : params_(std::move(params)) {
        int stage = 0;  // 0 positional, 1 after *args, 2 keyword-only, 3 after **kwargs
        bool seen_default = false;
        for (std::size_t i = 0; i < params_.size(); ++i) {
            const Parameter& p = params_[i];
            if (p.name.empty()) throw value_error("Signature: parameter " + std::to_string(i) + " has an empty name");
            for (std::size_t j = 0; j < i; ++j)
                if (params_[j].name == p.name)
                    throw value_error("Signature: duplicate parameter name " + detail::repr_string(p.name));
            if (stage == 3) throw value_error("Signature: parameter " + detail::repr_string(p.name) + " comes after **" + params_[kwargs_pos_].name);
            switch (p.kind) {
                case ParamKind::positional_or_keyword:
                    if (stage > 0)
                        throw value_error("Signature: positional parameter " + detail::repr_string(p.name) +
                                          " comes after *args or a keyword-only parameter");
                    if (!p.default_value && seen_default)
                        throw value_error("Signature: parameter without a default " + detail::repr_string(p.name) +
                                          " follows a parameter with a default");
                    seen_default = seen_default || p.default_value.has_value();
                    ++n_positional_;
                    break;
                case ParamKind::var_positional:
                    if (stage > 0) throw value_error("Signature: *" + p.name + " comes after *args or a keyword-only parameter");
                    if (p.default_value) throw value_error("Signature: *" + p.name + " cannot have a default");
                    args_pos_ = i;
                    stage = 1;
                    break;
                case ParamKind::keyword_only: stage = 2; break;
                case ParamKind::var_keyword:
                    if (p.default_value) throw value_error("Signature: **" + p.name + " cannot have a default");
                    kwargs_pos_ = i;
                    stage = 3;
                    break;
            }
        }
    }

    const std::vector<Parameter>& parameters() const noexcept { return params_; }
    template <class = void>
    std::size_t size() const noexcept { return params_.size(); }
    template <class = void>
    const Parameter& operator[](std::size_t i) const { return params_.at(i); }

    /// Every parameter name in order, variadic ones included (Python's list(sig.parameters)).
    template <class = void>
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        out.reserve(params_.size());
        for (const auto& p : params_) out.push_back(p.name);
        return out;
    }
    /// The index of a parameter, or nullopt.
    template <class = void>
    std::optional<std::size_t> find(std::string_view name) const {
        for (std::size_t i = 0; i < params_.size(); ++i)
            if (params_[i].name == name) return i;
        return std::nullopt;
    }
    /// Whether name is a parameter that is neither `*args` nor `**kwargs`.
    template <class = void>
    bool has_named(std::string_view name) const {
        const auto i = find(name);
        return i && params_[*i].kind != ParamKind::var_positional && params_[*i].kind != ParamKind::var_keyword;
    }
    /// Parameters that can be passed by position before `*args`.
    std::size_t num_positional() const noexcept { return n_positional_; }
    /// The name and position of `*args`, if any.
    template <class = void>
    std::optional<std::pair<std::string, std::size_t>> var_positional() const {
        if (args_pos_ == npos) return std::nullopt;
        return std::pair{params_[args_pos_].name, args_pos_};
    }
    /// The name of `**kwargs`, if any.
    template <class = void>
    std::optional<std::string> var_keyword() const {
        if (kwargs_pos_ == npos) return std::nullopt;
        return params_[kwargs_pos_].name;
    }

    /// Python's str(inspect.signature(f)): "(x, y=None, *args, flag=True, **kwargs)".
    template <class = void>
    std::string to_string() const {
        std::string s = "(";
        bool star_written = false;
        for (std::size_t i = 0; i < params_.size(); ++i) {
            const Parameter& p = params_[i];
            if (i) s += ", ";
            if (p.kind == ParamKind::keyword_only && !star_written && args_pos_ == npos) {
                s += "*, ";
                star_written = true;
            }
            if (p.kind == ParamKind::var_positional) s += "*";
            if (p.kind == ParamKind::var_keyword) s += "**";
            s += p.name;
            if (p.default_value) s += "=" + p.default_value->repr();
        }
        return s + ")";
    }
    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const Signature& sig) { return os << sig.to_string(); }
    /// The names as Python prints tuple(names): ('x', 'y') or ('x',).
    template <class = void>
    std::string names_repr() const {
        std::string s = "(";
        for (std::size_t i = 0; i < params_.size(); ++i) {
            if (i) s += ", ";
            s += detail::repr_string(params_[i].name);
        }
        if (params_.size() == 1) s += ",";
        return s + ")";
    }

    template <class = void>
    friend bool operator==(const Signature& a, const Signature& b) { return a.params_ == b.params_; }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    std::vector<Parameter> params_;
    std::size_t n_positional_ = 0;
    std::size_t args_pos_ = npos;
    std::size_t kwargs_pos_ = npos;
};

}  // namespace yobx
