// yobx/observer/dynamic_shapes.hpp — the dynamic shapes an observer infers.
//
// DynamicShapes mirrors the arguments of the observed function: a tensor
// becomes the map of its dynamic axes (axis -> a label, or Dim.DYNAMIC), a
// constant becomes None, and tuples, lists and dicts keep their form. It prints
// as the exact Python literal torch.export.export(..., dynamic_shapes=...)
// takes, and as JSON for tools.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>
#include <yobx/ordered_dict.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace yobx {

/// One dynamic axis: its label (torch.export uses equal labels for equal sizes),
/// or no label for torch.export.Dim.DYNAMIC.
struct DynamicDim {
    std::int64_t axis = 0;
    std::optional<std::string> label;
    friend bool operator==(const DynamicDim&, const DynamicDim&) = default;
};

/// A tree of dynamic shapes:
///   auto ds = observer.infer_dynamic_shapes();
///   ds.to_python() == "{'input_ids': {0: 'batch_size', 1: 'sequence_length'}, 'use_cache': None}"
///   ds["input_ids"].dims()[1].label == "sequence_length"
class DynamicShapes {
public:
    enum class Kind { none, tensor, tuple, list, dict };

    DynamicShapes() = default;  // None
    /// A tensor with these dynamic axes (in increasing axis order).
    static DynamicShapes tensor(std::vector<DynamicDim> dims) {
        for (std::size_t i = 1; i < dims.size(); ++i)
            if (dims[i].axis <= dims[i - 1].axis)
                throw value_error("DynamicShapes::tensor: axes must be increasing, got " + std::to_string(dims[i - 1].axis) +
                                  " then " + std::to_string(dims[i].axis));
        DynamicShapes d(Kind::tensor);
        d.dims_ = std::move(dims);
        return d;
    }
    static DynamicShapes tuple(std::vector<DynamicShapes> items = {}) { return DynamicShapes(Kind::tuple, std::move(items)); }
    static DynamicShapes list(std::vector<DynamicShapes> items = {}) { return DynamicShapes(Kind::list, std::move(items)); }
    static DynamicShapes dict(ordered_dict<DynamicShapes> d) {
        DynamicShapes out(Kind::dict);
        out.dict_ = std::move(d);
        return out;
    }

    Kind kind() const noexcept { return kind_; }
    bool is_none() const noexcept { return kind_ == Kind::none; }
    /// The dynamic axes of a tensor entry.
    const std::vector<DynamicDim>& dims() const {
        expect(Kind::tensor, "a tensor entry");
        return dims_;
    }
    std::vector<DynamicDim>& dims() {
        expect(Kind::tensor, "a tensor entry");
        return dims_;
    }
    /// The items of a tuple or list.
    const std::vector<DynamicShapes>& items() const {
        if (kind_ != Kind::tuple && kind_ != Kind::list) wrong("a tuple or a list");
        return items_;
    }
    std::vector<DynamicShapes>& items() {
        if (kind_ != Kind::tuple && kind_ != Kind::list) wrong("a tuple or a list");
        return items_;
    }
    const ordered_dict<DynamicShapes>& dict() const {
        expect(Kind::dict, "a dict");
        return dict_;
    }
    ordered_dict<DynamicShapes>& dict() {
        expect(Kind::dict, "a dict");
        return dict_;
    }
    /// ds[1] on a tuple or list (a template, so that ds[0] does not also match the const char* overload).
    template <std::integral I>
        requires(!std::same_as<I, bool>)
    const DynamicShapes& operator[](I index) const {
        const auto& it = items();
        if constexpr (std::is_signed_v<I>)
            if (index < 0) throw value_error("DynamicShapes: negative index " + std::to_string(index));
        const auto i = static_cast<std::size_t>(index);
        if (i >= it.size()) throw value_error("DynamicShapes: index " + std::to_string(i) + " out of range (size " + std::to_string(it.size()) + ")");
        return it[i];
    }
    const DynamicShapes& operator[](std::string_view key) const {
        const auto& d = dict();
        auto it = d.find(key);
        if (it == d.end()) throw value_error("DynamicShapes: no key " + detail::repr_string(key));
        return it->second;
    }
    const DynamicShapes& operator[](const char* key) const { return (*this)[std::string_view(key)]; }

    /// The Python literal, as repr() prints it:
    /// `{'x': {0: 'batch', 1: torch.export.Dim.DYNAMIC}, 'flag': None}`, `({},)`, `[{2: 'past'}]`.
    std::string to_python() const {
        std::string s;
        print_python(s);
        return s;
    }

    /// JSON with no ambiguity between the kinds: null (None),
    /// {"dims": {"0": "batch", "1": null}} (a tensor; null is Dim.DYNAMIC),
    /// {"tuple": [...]}, [...] (a list), {"dict": {"x": ...}}.
    std::string to_json() const {
        std::string s;
        print_json(s);
        return s;
    }

    friend bool operator==(const DynamicShapes&, const DynamicShapes&) = default;

private:
    explicit DynamicShapes(Kind k) : kind_(k) {}
    DynamicShapes(Kind k, std::vector<DynamicShapes> items) : kind_(k), items_(std::move(items)) {}

    [[noreturn]] void wrong(std::string_view expected) const {
        throw type_error("DynamicShapes: expected " + std::string(expected) + ", got " + to_python());
    }
    void expect(Kind k, std::string_view what) const {
        if (kind_ != k) wrong(what);
    }

    void print_python(std::string& s) const {
        switch (kind_) {
            case Kind::none: s += "None"; return;
            case Kind::tensor: {
                s += '{';
                for (std::size_t i = 0; i < dims_.size(); ++i) {
                    if (i) s += ", ";
                    s += std::to_string(dims_[i].axis) + ": ";
                    s += dims_[i].label ? detail::repr_string(*dims_[i].label) : "torch.export.Dim.DYNAMIC";
                }
                s += '}';
                return;
            }
            case Kind::tuple:
            case Kind::list: {
                s += kind_ == Kind::tuple ? '(' : '[';
                for (std::size_t i = 0; i < items_.size(); ++i) {
                    if (i) s += ", ";
                    items_[i].print_python(s);
                }
                if (kind_ == Kind::tuple && items_.size() == 1) s += ',';
                s += kind_ == Kind::tuple ? ')' : ']';
                return;
            }
            case Kind::dict: {
                s += '{';
                bool first = true;
                for (const auto& [k, v] : dict_) {
                    if (!first) s += ", ";
                    first = false;
                    s += detail::repr_string(k) + ": ";
                    v.print_python(s);
                }
                s += '}';
                return;
            }
        }
    }

    void print_json(std::string& s) const {
        switch (kind_) {
            case Kind::none: s += "null"; return;
            case Kind::tensor: {
                s += "{\"dims\": {";
                for (std::size_t i = 0; i < dims_.size(); ++i) {
                    if (i) s += ", ";
                    s += "\"" + std::to_string(dims_[i].axis) + "\": ";
                    if (dims_[i].label) detail::json::write_string(s, *dims_[i].label);
                    else s += "null";
                }
                s += "}}";
                return;
            }
            case Kind::tuple:
            case Kind::list: {
                if (kind_ == Kind::tuple) s += "{\"tuple\": ";
                s += '[';
                for (std::size_t i = 0; i < items_.size(); ++i) {
                    if (i) s += ", ";
                    items_[i].print_json(s);
                }
                s += ']';
                if (kind_ == Kind::tuple) s += '}';
                return;
            }
            case Kind::dict: {
                s += "{\"dict\": {";
                bool first = true;
                for (const auto& [k, v] : dict_) {
                    if (!first) s += ", ";
                    first = false;
                    detail::json::write_string(s, k);
                    s += ": ";
                    v.print_json(s);
                }
                s += "}}";
                return;
            }
        }
    }

    Kind kind_ = Kind::none;
    std::vector<DynamicDim> dims_;
    std::vector<DynamicShapes> items_;
    ordered_dict<DynamicShapes> dict_;
};

}  // namespace yobx
