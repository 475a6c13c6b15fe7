// yobx/observer/dynamic_shapes.hpp — the dynamic shapes an observer infers.
//
// DynamicShapes mirrors the arguments of the observed function: a tensor
// becomes the map of its dynamic axes (axis -> a label, or Dim.DYNAMIC), a
// constant becomes None, and tuples, lists and dicts keep their form. It prints
// as a Python literal the real torch.export.export(..., dynamic_shapes=...)
// accepts (every dynamic axis torch.export.Dim.DYNAMIC, the labels as
// comments), as the seed's literal with the labels as strings (for tools that
// take strings; torch.export refuses it), and as JSON for tools.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>
#include <yobx/observer/relations.hpp>
#include <yobx/ordered_dict.hpp>

#include <algorithm>
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

/// What the Python form defines before the literal: one name per label, the
/// relations found between them, and user bounds (label -> [min, max]).
/// `named`: torch.export.Dim objects and derived Dims (`d = base + 1`), which
/// torch.export refuses as soon as the model guards on them; otherwise each
/// label is torch.export.Dim.DYNAMIC (a label with bounds a Dim with min and
/// max) and every relation a comment.
struct DimDefinitions {
    std::vector<std::string> labels;  // in order of first appearance
    std::vector<DimRelation> relations;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> bounds;  // DimBounds
    bool named = false;
    friend bool operator==(const DimDefinitions&, const DimDefinitions&) = default;
};

namespace detail {

// A label as a Python identifier: other characters become '_', a leading digit gets a '_' before it.
template <class = void>
inline std::string python_identifier(std::string_view label) {
    std::string out;
    for (char ch : label) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
    return out;
}

}  // namespace detail

/// A tree of dynamic shapes:
///   auto ds = observer.infer_dynamic_shapes({.dim_names = true});
///   ds.to_python_strings() == "{'input_ids': {0: 'batch_size', 1: 'sequence_length'}, 'use_cache': None}"
///   ds.to_python()  // what torch.export takes: {0: torch.export.Dim.DYNAMIC, ...}, labels as comments
///   ds["input_ids"].dims()[1].label == "sequence_length"
class DynamicShapes {
public:
    enum class Kind { none, tensor, tuple, list, dict };

    DynamicShapes() = default;  // None
    /// A tensor with these dynamic axes (in increasing axis order).
    template <class = void>
    static DynamicShapes tensor(std::vector<DynamicDim> dims) {
        for (std::size_t i = 1; i < dims.size(); ++i)
            if (dims[i].axis <= dims[i - 1].axis)
                throw value_error("DynamicShapes::tensor: axes must be increasing, got " + std::to_string(dims[i - 1].axis) +
                                  " then " + std::to_string(dims[i].axis));
        DynamicShapes d(Kind::tensor);
        d.dims_ = std::move(dims);
        return d;
    }
    template <class = void>
    static DynamicShapes tuple(std::vector<DynamicShapes> items = {}) { return DynamicShapes(Kind::tuple, std::move(items)); }
    template <class = void>
    static DynamicShapes list(std::vector<DynamicShapes> items = {}) { return DynamicShapes(Kind::list, std::move(items)); }
    template <class = void>
    static DynamicShapes dict(ordered_dict<DynamicShapes> d) {
        DynamicShapes out(Kind::dict);
        out.dict_ = std::move(d);
        return out;
    }

    Kind kind() const noexcept { return kind_; }
    template <class = void>
    bool is_none() const noexcept { return kind_ == Kind::none; }
    /// The dynamic axes of a tensor entry.
    template <class = void>
    const std::vector<DynamicDim>& dims() const {
        expect(Kind::tensor, "a tensor entry");
        return dims_;
    }
    template <class = void>
    std::vector<DynamicDim>& dims() {
        expect(Kind::tensor, "a tensor entry");
        return dims_;
    }
    /// The items of a tuple or list.
    template <class = void>
    const std::vector<DynamicShapes>& items() const {
        if (kind_ != Kind::tuple && kind_ != Kind::list) wrong("a tuple or a list");
        return items_;
    }
    template <class = void>
    std::vector<DynamicShapes>& items() {
        if (kind_ != Kind::tuple && kind_ != Kind::list) wrong("a tuple or a list");
        return items_;
    }
    template <class = void>
    const ordered_dict<DynamicShapes>& dict() const {
        expect(Kind::dict, "a dict");
        return dict_;
    }
    template <class = void>
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
    template <class = void>
    const DynamicShapes& operator[](std::string_view key) const {
        const auto& d = dict();
        auto it = d.find(key);
        if (it == d.end()) throw value_error("DynamicShapes: no key " + detail::repr_string(key));
        return it->second;
    }
    template <class = void>
    const DynamicShapes& operator[](const char* key) const { return (*this)[std::string_view(key)]; }

    /// The Python literal the real torch.export.export (torch 2.x) accepts as printed. Every
    /// dynamic axis is torch.export.Dim.DYNAMIC: torch.export refuses label strings, and a named
    /// torch.export.Dim as soon as the model guards on it (a convolution's `(H - 1)//2 % 2`).
    /// Without labels it is one line, as repr() prints it: `({0: torch.export.Dim.DYNAMIC}, {})`.
    /// With labels, one line per argument, each after a comment with its labels:
    ///   {
    ///       # input_ids: {0: batch_size, 1: sequence_length}
    ///       'input_ids': {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC},
    ///   }
    /// With Dim definitions (infer_dynamic_shapes with derived_dims), Python code instead: one name
    /// per label (torch.export.Dim.DYNAMIC, or torch.export.Dim objects with named_dims or bounds),
    /// the relations (derived Dims with named_dims, comments otherwise), then `dynamic_shapes = {...}`
    /// using the names.
    template <class = void>
    std::string to_python() const {
        std::string s;
        if (definitions_) {
            print_definitions(s);
            s += "dynamic_shapes = ";
            print_python(s, Form::names);
        } else if (has_label()) {
            print_commented(s);
        } else {
            print_python(s, Form::strings);
        }
        return s;
    }

    /// The seed's literal, as Python's repr() prints it, labels as strings:
    /// `{'x': {0: 'batch', 1: torch.export.Dim.DYNAMIC}, 'flag': None}`, `({},)`, `[{2: 'past'}]`.
    /// For tools that name dimensions with strings (ONNX dim_params); torch.export (2.6) refuses
    /// it ("expected None, an int, a Dim, Dim.AUTO, Dim.STATIC, or Dim.DYNAMIC").
    template <class = void>
    std::string to_python_strings() const {
        std::string s;
        print_python(s, Form::strings);
        return s;
    }

    /// The Dim definitions, when infer_dynamic_shapes made them (derived_dims).
    const std::optional<DimDefinitions>& definitions() const noexcept { return definitions_; }
    template <class = void>
    void set_definitions(std::optional<DimDefinitions> d) { definitions_ = std::move(d); }

    /// JSON with no ambiguity between the kinds: null (None),
    /// {"dims": {"0": "batch", "1": null}} (a tensor; null is Dim.DYNAMIC),
    /// {"tuple": [...]}, [...] (a list), {"dict": {"x": ...}}.
    template <class = void>
    std::string to_json() const {
        std::string s;
        detail::json::Writer w(s);
        print_json(w);
        return s;
    }

    friend bool operator==(const DynamicShapes&, const DynamicShapes&) = default;

private:
    explicit DynamicShapes(Kind k) : kind_(k) {}
    template <class = void>
    DynamicShapes(Kind k, std::vector<DynamicShapes> items) : kind_(k), items_(std::move(items)) {}

    template <class = void>
    [[noreturn]] void wrong(std::string_view expected) const {
        throw type_error("DynamicShapes: expected " + std::string(expected) + ", got " + to_python_strings());
    }
    template <class = void>
    void expect(Kind k, std::string_view what) const {
        if (kind_ != k) wrong(what);
    }

    // strings: labels as quoted strings (the seed); names: labels as Python names (with definitions);
    // dynamic: every axis torch.export.Dim.DYNAMIC.
    enum class Form { strings, names, dynamic };

    template <class = void>
    bool has_label() const {
        if (kind_ == Kind::tensor)
            return std::any_of(dims_.begin(), dims_.end(), [](const DynamicDim& d) { return d.label.has_value(); });
        if (kind_ == Kind::dict)
            return std::any_of(dict_.begin(), dict_.end(), [](const auto& kv) { return kv.second.has_label(); });
        return std::any_of(items_.begin(), items_.end(), [](const DynamicShapes& d) { return d.has_label(); });
    }

    template <class = void>
    void print_python(std::string& s, Form form) const {
        switch (kind_) {
            case Kind::none: s += "None"; return;
            case Kind::tensor: {
                s += '{';
                for (std::size_t i = 0; i < dims_.size(); ++i) {
                    if (i) s += ", ";
                    s += std::to_string(dims_[i].axis) + ": ";
                    if (!dims_[i].label || form == Form::dynamic) s += "torch.export.Dim.DYNAMIC";
                    else s += form == Form::names ? detail::python_identifier(*dims_[i].label) : detail::repr_string(*dims_[i].label);
                }
                s += '}';
                return;
            }
            case Kind::tuple:
            case Kind::list: {
                s += kind_ == Kind::tuple ? '(' : '[';
                for (std::size_t i = 0; i < items_.size(); ++i) {
                    if (i) s += ", ";
                    items_[i].print_python(s, form);
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
                    v.print_python(s, form);
                }
                s += '}';
                return;
            }
        }
    }

    // The labels of one entry for its comment: `{0: batch_size, 1: sequence_length}` for a tensor,
    // `each tensor {...}` for a container whose tensors all have the same, the seed's form otherwise.
    template <class = void>
    std::string label_comment() const {
        const auto tensor_text = [](const std::vector<DynamicDim>& dims) {
            std::string t = "{";
            for (std::size_t i = 0; i < dims.size(); ++i)
                t += (i ? ", " : "") + std::to_string(dims[i].axis) + ": " + (dims[i].label ? *dims[i].label : "DYNAMIC");
            return t + "}";
        };
        if (kind_ == Kind::tensor) return tensor_text(dims_);
        std::vector<const DynamicShapes*> tensors;
        bool plain = true;  // only tensors below
        const auto walk = [&](const auto& self, const DynamicShapes& d) -> void {
            switch (d.kind_) {
                case Kind::tensor: tensors.push_back(&d); return;
                case Kind::none: plain = false; return;
                case Kind::dict:
                    for (const auto& kv : d.dict_) self(self, kv.second);
                    return;
                default:
                    for (const auto& x : d.items_) self(self, x);
                    return;
            }
        };
        walk(walk, *this);
        if (plain && !tensors.empty() &&
            std::all_of(tensors.begin(), tensors.end(), [&](const DynamicShapes* t) { return t->dims_ == tensors[0]->dims_; }))
            return "each tensor " + tensor_text(tensors[0]->dims_);
        std::string t;
        print_python(t, Form::strings);
        return t;
    }

    // One entry per line, each after a comment with its labels; the closing bracket on a line of its
    // own, so that the literal can be followed by `)` in a call. A root that is not a container (never
    // the observer's, which mirrors arguments) is one line.
    template <class = void>
    void print_commented(std::string& s) const {
        const auto entry = [&](std::string comment_name, const DynamicShapes& v, std::string key) {
            if (v.has_label()) s += "    # " + comment_name + ": " + v.label_comment() + "\n";
            s += "    " + key;
            v.print_python(s, Form::dynamic);
            s += ",\n";
        };
        if (kind_ == Kind::dict) {
            s += "{\n";
            for (const auto& [k, v] : dict_) entry(k, v, detail::repr_string(k) + ": ");
            s += "}";
        } else if (kind_ == Kind::tuple || kind_ == Kind::list) {
            s += kind_ == Kind::tuple ? "(\n" : "[\n";
            for (std::size_t i = 0; i < items_.size(); ++i) entry("argument " + std::to_string(i), items_[i], "");
            s += kind_ == Kind::tuple ? ")" : "]";
        } else {
            print_python(s, Form::dynamic);  // a bare tensor: one line, no comment that could swallow what follows
        }
    }

    template <class = void>
    void print_definitions(std::string& s) const {
        const DimDefinitions& d = *definitions_;
        std::map<std::string, const DimRelation*> derived;  // written as derived Dims
        if (d.named)
            for (const auto& r : d.relations)
                if (r.torch_expressible()) derived[r.dim] = &r;
        for (const auto& label : d.labels) {
            if (derived.contains(label)) continue;
            s += detail::python_identifier(label) + " = ";
            const auto b = d.bounds.find(label);
            if (!d.named && b == d.bounds.end()) {
                s += "torch.export.Dim.DYNAMIC\n";
                continue;
            }
            s += "torch.export.Dim(" + detail::repr_string(label);
            if (b != d.bounds.end())
                s += ", min=" + std::to_string(b->second.first) + ", max=" + std::to_string(b->second.second);
            s += ")\n";
        }
        for (const auto& r : d.relations) {
            DimRelation named = r;  // the relation over the Python names
            named.dim = detail::python_identifier(r.dim);
            named.base = detail::python_identifier(r.base);
            switch (r.kind) {
                case RelationKind::offset:
                case RelationKind::scale:
                    if (d.named) {
                        s += r.kind == RelationKind::offset
                                 ? named.to_string() + "\n"
                                 : named.dim + " = " + std::to_string(r.constant) + " * " + named.base + "\n";
                    } else {
                        s += "# " + r.to_string() + " (holds in every observed call; torch.export finds it from the model)\n";
                    }
                    break;
                case RelationKind::sum:
                    s += "# " + r.to_string() + " (torch.export cannot express a sum of two dimensions)\n";
                    break;
                case RelationKind::floordiv:
                    s += "# " + r.to_string() + " (torch.export cannot express a floor division)\n";
                    break;
            }
        }
    }

    template <class = void>
    void print_json(detail::json::Writer& w) const {
        switch (kind_) {
            case Kind::none: w.null(); return;
            case Kind::tensor:
                w.begin_object().key("dims").begin_object();
                for (const DynamicDim& d : dims_) w.member(std::to_string(d.axis), d.label);
                w.end().end();
                return;
            case Kind::tuple:
            case Kind::list:
                if (kind_ == Kind::tuple) w.begin_object().key("tuple");
                w.begin_array();
                for (const DynamicShapes& item : items_) item.print_json(w);
                w.end();
                if (kind_ == Kind::tuple) w.end();
                return;
            case Kind::dict:
                w.begin_object().key("dict").begin_object();
                for (const auto& [k, v] : dict_) {
                    w.key(k);
                    v.print_json(w);
                }
                w.end().end();
                return;
        }
    }

    Kind kind_ = Kind::none;
    std::vector<DynamicDim> dims_;
    std::vector<DynamicShapes> items_;
    ordered_dict<DynamicShapes> dict_;
    std::optional<DimDefinitions> definitions_;  // on the root only
};

}  // namespace yobx
