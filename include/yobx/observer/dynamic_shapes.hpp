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
#include <yobx/observer/relations.hpp>
#include <yobx/ordered_dict.hpp>

#include <cctype>
#include <concepts>
#include <cstdint>
#include <map>
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

/// What torch.export.Dim objects the Python form defines: every label, the
/// relations found between them, and user bounds (label -> [min, max]).
struct DimDefinitions {
    std::vector<std::string> labels;  // in order of first appearance
    std::vector<DimRelation> relations;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> bounds;  // DimBounds
    friend bool operator==(const DimDefinitions&, const DimDefinitions&) = default;
};

namespace detail {

// A label as a Python identifier: other characters become '_', a leading digit gets a '_' before it.
inline std::string python_identifier(std::string_view label) {
    std::string out;
    for (char ch : label) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
    return out;
}

}  // namespace detail

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
    /// With Dim definitions (infer_dynamic_shapes with derived_dims), Python code instead: one
    /// torch.export.Dim per label, derived ones as `d = base + 1` or `d = 2*base`, a comment for
    /// each relation torch.export cannot express, then `dynamic_shapes = {...}` using the Dims.
    std::string to_python() const {
        std::string s;
        if (definitions_) {
            print_definitions(s);
            s += "dynamic_shapes = ";
        }
        print_python(s);
        return s;
    }

    /// The Dim definitions, when infer_dynamic_shapes made them (derived_dims).
    const std::optional<DimDefinitions>& definitions() const noexcept { return definitions_; }
    void set_definitions(std::optional<DimDefinitions> d) { definitions_ = std::move(d); }

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

    void print_python(std::string& s, bool as_dims = false) const {
        as_dims = as_dims || definitions_.has_value();
        switch (kind_) {
            case Kind::none: s += "None"; return;
            case Kind::tensor: {
                s += '{';
                for (std::size_t i = 0; i < dims_.size(); ++i) {
                    if (i) s += ", ";
                    s += std::to_string(dims_[i].axis) + ": ";
                    if (!dims_[i].label) s += "torch.export.Dim.DYNAMIC";
                    else s += as_dims ? detail::python_identifier(*dims_[i].label) : detail::repr_string(*dims_[i].label);
                }
                s += '}';
                return;
            }
            case Kind::tuple:
            case Kind::list: {
                s += kind_ == Kind::tuple ? '(' : '[';
                for (std::size_t i = 0; i < items_.size(); ++i) {
                    if (i) s += ", ";
                    items_[i].print_python(s, as_dims);
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
                    v.print_python(s, as_dims);
                }
                s += '}';
                return;
            }
        }
    }

    void print_definitions(std::string& s) const {
        const DimDefinitions& d = *definitions_;
        std::map<std::string, const DimRelation*> derived;  // by torch.export expressions
        for (const auto& r : d.relations)
            if (r.torch_expressible()) derived[r.dim] = &r;
        for (const auto& label : d.labels) {
            if (derived.contains(label)) continue;
            s += detail::python_identifier(label) + " = torch.export.Dim(" + detail::repr_string(label);
            if (auto b = d.bounds.find(label); b != d.bounds.end())
                s += ", min=" + std::to_string(b->second.first) + ", max=" + std::to_string(b->second.second);
            s += ")\n";
        }
        for (const auto& r : d.relations) {
            DimRelation named = r;  // the relation over the Python names
            named.dim = detail::python_identifier(r.dim);
            named.base = detail::python_identifier(r.base);
            switch (r.kind) {
                case RelationKind::offset: s += named.to_string() + "\n"; break;
                case RelationKind::scale: s += named.dim + " = " + std::to_string(r.constant) + " * " + named.base + "\n"; break;
                case RelationKind::sum:
                    s += "# " + r.to_string() + " (torch.export cannot express a sum of two dimensions)\n";
                    break;
                case RelationKind::floordiv:
                    s += "# " + r.to_string() + " (torch.export cannot express a floor division)\n";
                    break;
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
    std::optional<DimDefinitions> definitions_;  // on the root only
};

}  // namespace yobx
