// yobx/observer/export_spec.hpp — everything an export needs to know about
// the observed inputs, in the forms its consumers read.
//
// InputObserver::infer_export_spec() gathers, for each input tensor, its
// shapes across the calls and its labelled dynamic axes; for each label, the
// observed range (or the user's bounds); the relations between labels; the
// constant keyword arguments; what value_if_missing filled in; and warnings.
// ExportSpec prints it as a report a person reads before exporting (text or
// JSON), as a TensorRT optimization profile, as ONNX dim_params with ONNX
// Runtime free-dimension overrides, and as JSON that from_json loads back.
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>
#include <yobx/observer/dynamic_shapes.hpp>
#include <yobx/observer/options.hpp>
#include <yobx/observer/relations.hpp>
#include <yobx/ordered_dict.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// One input tensor: its flat name (`input_ids`, `past_key_values.key_cache.0`),
/// its shape in each call (nullopt where the call had none) and its dynamic axes.
struct InputSpec {
    std::string name;
    std::vector<std::optional<std::vector<std::int64_t>>> shapes;
    std::vector<DynamicDim> dims;
    friend bool operator==(const InputSpec&, const InputSpec&) = default;
};

/// The sizes a labelled dimension may take: the observed ones, or the user's
/// bounds when given. zero_or_one: a call saw it as 0 or 1, sizes torch.export
/// specializes.
struct DimRange {
    std::string label;
    std::int64_t min = 0;
    std::int64_t max = 0;
    std::int64_t observed_min = 0;
    std::int64_t observed_max = 0;
    bool user_bounds = false;
    bool zero_or_one = false;
    friend bool operator==(const DimRange&, const DimRange&) = default;
};

/// An input absent from some observed calls: which calls, the fill its replay uses, and what
/// check_fills found when it ran the model (as made and filled) on those calls.
struct AbsentInput {
    std::string name{};                  // the argument (`attention_mask`, `*args[1]`)
    std::vector<std::size_t> calls{};    // the calls that did not pass it
    std::string fill{};                  // "automatic", "ones", "value_if_missing", ...
    bool user = false;                   // the user's fill (fill_if_missing or value_if_missing)
    bool checked = false;                // check_fills ran the model with it
    std::vector<std::size_t> failing{};  // calls the fill does not reproduce (when checked)
    std::vector<std::string> reasons{};  // why, one per failing call
    std::vector<std::string> tried{};    // the fills check_fills tried, in order
    friend bool operator==(const AbsentInput&, const AbsentInput&) = default;

    /// One line: "attention_mask: absent from call(s) 0, 2; fill ones, checked: reproduces every call (tried automatic, zeros, ones)".
    template <class = void>
    std::string to_string() const {
        std::string s = name + ": absent from call(s) " + join(calls) + "; fill " + fill + (user ? " (given)" : "");
        if (!checked) return s + ", not checked (give check_fills or infer_export_spec a runner of the model)";
        if (failing.empty()) s += ", checked: reproduces every call";
        else {
            s += ", checked: does NOT reproduce call(s) " + join(failing) + " (";
            for (std::size_t i = 0; i < reasons.size(); ++i) s += (i ? "; " : "") + reasons[i];
            s += "). The exported program cannot run these calls as they were made: pass " + name +
                 " in every call, or give fill_if_missing a fill that means what its absence means";
        }
        if (tried.size() > 1) {
            s += " (tried ";
            for (std::size_t i = 0; i < tried.size(); ++i) s += (i ? ", " : "") + tried[i];
            s += ")";
        }
        return s;
    }

    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const AbsentInput& a) { return os << a.to_string(); }

    template <class = void>
    static std::string join(const std::vector<std::size_t>& v) {
        std::string s;
        for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
        return s;
    }
};

/// What infer_export_spec found (see the file comment).
///   auto spec = observer.infer_export_spec({.dim_names = true, .bounds = {{"sequence_length", {1, 4096}}}});
///   std::cout << spec.report();
///   std::ofstream("profile.json") << spec.tensorrt_profile();
class ExportSpec {
public:
    std::size_t num_calls = 0;
    DynamicShapes dynamic_shapes;          // as infer_dynamic_shapes gives it (with Dims when derived_dims)
    std::vector<InputSpec> inputs;
    std::vector<DimRange> ranges;          // one per label, in order of first appearance
    std::vector<DimRelation> relations;
    std::vector<DimRelation> hints;
    ordered_dict<std::string> constants;   // constant keyword arguments, as Python literals
    ordered_dict<std::vector<std::size_t>> filled;  // argument -> the calls value_if_missing filled it in
    std::vector<AbsentInput> absent;       // inputs absent from some calls, their fills, checked or not
    std::vector<std::string> warnings;

    friend bool operator==(const ExportSpec&, const ExportSpec&) = default;

    /// The dynamic shapes as Python (see DynamicShapes::to_python).
    template <class = void>
    std::string to_python() const { return dynamic_shapes.to_python(); }

    /// The report a person reads before exporting.
    template <class = void>
    std::string report() const {
        std::string s = "Export readiness: " + std::to_string(num_calls) + " observed call(s), " +
                        std::to_string(inputs.size()) + " input tensor(s).\n\nInputs:\n";
        for (const auto& in : inputs) {
            s += "  " + in.name + "\n    shapes: ";
            for (std::size_t c = 0; c < in.shapes.size(); ++c) s += (c ? ", " : "") + shape_text(in.shapes[c]);
            s += "\n    dynamic: ";
            if (in.dims.empty()) s += "none";
            for (std::size_t i = 0; i < in.dims.size(); ++i)
                s += (i ? ", " : "") + std::to_string(in.dims[i].axis) + " -> " + (in.dims[i].label ? *in.dims[i].label : "DYNAMIC");
            s += "\n";
        }
        s += "\nDimensions:\n";
        if (ranges.empty()) s += "  none\n";
        for (const auto& r : ranges) {
            s += "  " + r.label + ": " + std::to_string(r.min) + ".." + std::to_string(r.max);
            if (r.user_bounds)
                s += " (user bounds; observed " + std::to_string(r.observed_min) + ".." + std::to_string(r.observed_max) + ")";
            else s += " (observed)";
            if (r.zero_or_one) s += ", seen as 0 or 1";
            s += "\n";
        }
        const auto relation_lines = [&](const std::vector<DimRelation>& rs) {
            if (rs.empty()) s += "  none\n";
            for (const auto& r : rs)
                s += "  " + r.to_string() + " (" + std::to_string(r.support) + " distinct observation(s)" +
                     (r.fits > 1 ? "; other constants fit these calls as well" : "") +
                     (r.torch_expressible() ? "" : "; torch.export cannot express it") + ")\n";
        };
        s += "\nRelations:\n";
        relation_lines(relations);
        s += "\nHints (hold in every call, too few observations or other constants fit as well):\n";
        relation_lines(hints);
        s += "\nConstant keyword arguments:\n";
        if (constants.empty()) s += "  none\n";
        for (const auto& [k, v] : constants) s += "  " + k + " = " + v + "\n";
        s += "\nFilled by value_if_missing:\n";
        if (filled.empty()) s += "  none\n";
        for (const auto& [k, calls] : filled) s += "  " + k + " in call(s) " + join(calls) + "\n";
        s += "\nAbsent inputs (the fill each call's replay and the exported program get):\n";
        if (absent.empty()) s += "  none\n";
        for (const auto& a : absent) s += "  " + a.to_string() + "\n";
        s += "\nWarnings:\n";
        if (warnings.empty()) s += "  none\n";
        for (const auto& w : warnings) s += "  - " + w + "\n";
        return s;
    }

    /// The whole spec as JSON (the report's JSON form); from_json reads it back.
    template <class = void>
    std::string to_json() const {
        std::string s;
        detail::json::Writer w(s);
        w.begin_object().member("yobx_export_spec", 1).member("num_calls", num_calls).key("dynamic_shapes").raw(dynamic_shapes.to_json());
        w.member("derived_dims", dynamic_shapes.definitions().has_value());
        w.member("named_dims", dynamic_shapes.definitions() && dynamic_shapes.definitions()->named);
        w.key("inputs").begin_array();
        for (const InputSpec& in : inputs) {
            w.begin_object().member("name", in.name).key("shapes").begin_array();
            for (const auto& shape : in.shapes) {
                if (shape) w.array(*shape);
                else w.null();
            }
            w.end().key("dynamic").begin_object();
            for (const DynamicDim& d : in.dims) w.member(std::to_string(d.axis), d.label);
            w.end().end();
        }
        w.end().key("ranges").begin_array();
        for (const DimRange& r : ranges) {
            w.begin_object().member("label", r.label).member("min", r.min).member("max", r.max).member("observed_min", r.observed_min);
            w.member("observed_max", r.observed_max).member("user_bounds", r.user_bounds).member("zero_or_one", r.zero_or_one).end();
        }
        w.end().key("relations");
        write_relations(w, relations);
        w.key("hints");
        write_relations(w, hints);
        w.key("constants").begin_object();
        for (const auto& [k, v] : constants) w.member(k, v);
        w.end().key("filled").begin_object();
        for (const auto& [k, calls] : filled) w.key(k).array(calls);
        w.end().key("absent").begin_array();
        for (const AbsentInput& a : absent) {
            w.begin_object().member("name", a.name).key("calls").array(a.calls).member("fill", a.fill).member("user", a.user);
            w.member("checked", a.checked).key("failing").array(a.failing).key("reasons").array(a.reasons).key("tried").array(a.tried).end();
        }
        w.end().key("warnings").array(warnings).end();
        return s;
    }

    /// Loads what to_json wrote. Throws value_error naming the JSON path and what was expected.
    template <class = void>
    static ExportSpec from_json(std::string_view text) {
        using detail::json::Node;
        const Node doc = detail::json::Parser(text, "ExportSpec.from_json").parse();
        Reader rd;
        const std::string top = "$";  // a named path: g++ 14 takes a reference bound to a temporary path for dangling
        rd.object(doc, top);
        const Node& version = rd.need(doc, top, "yobx_export_spec", Node::Kind::integer);
        if (version.integer != 1)
            rd.fail("$.yobx_export_spec", "unsupported version " + std::to_string(version.integer) + ", expected 1");
        ExportSpec spec;
        spec.num_calls = static_cast<std::size_t>(rd.non_negative(rd.need(doc, "$", "num_calls", Node::Kind::integer), "$.num_calls"));
        spec.dynamic_shapes = rd.shapes(rd.need_any(doc, "$", "dynamic_shapes"), "$.dynamic_shapes");
        const bool derived = rd.need(doc, "$", "derived_dims", Node::Kind::boolean).boolean;
        // named_dims came later: a spec written without it has none.
        const bool named = doc.find("named_dims") && rd.need(doc, "$", "named_dims", Node::Kind::boolean).boolean;
        rd.each_object(rd.need(doc, "$", "inputs", Node::Kind::array), "$.inputs", [&](const Node& n, const std::string& at) {
            InputSpec in;
            in.name = rd.need(n, at, "name", Node::Kind::string).string;
            const Node& shapes = rd.need(n, at, "shapes", Node::Kind::array);
            for (std::size_t c = 0; c < shapes.array.size(); ++c) {
                const std::string sat = at + ".shapes[" + std::to_string(c) + "]";
                if (shapes.array[c].kind == Node::Kind::null) in.shapes.emplace_back(std::nullopt);
                else in.shapes.emplace_back(rd.ints(shapes.array[c], sat));
            }
            in.dims = rd.dims(rd.need(n, at, "dynamic", Node::Kind::object), at + ".dynamic");
            std::optional<std::size_t> rank;
            for (std::size_t c = 0; c < in.shapes.size(); ++c) {
                if (!in.shapes[c]) continue;
                if (rank && in.shapes[c]->size() != *rank)
                    rd.fail(at + ".shapes[" + std::to_string(c) + "]", "rank " + std::to_string(in.shapes[c]->size()) +
                                                                           ", the earlier shapes have rank " + std::to_string(*rank));
                rank = in.shapes[c]->size();
            }
            for (const auto& d : in.dims)
                if (static_cast<std::size_t>(d.axis) >= rank.value_or(0))
                    rd.fail(at + ".dynamic", "axis " + std::to_string(d.axis) + " is beyond the rank " +
                                                 std::to_string(rank.value_or(0)) + " of the input's shapes");
            spec.inputs.push_back(std::move(in));
        });
        rd.each_object(rd.need(doc, "$", "ranges", Node::Kind::array), "$.ranges", [&](const Node& n, const std::string& at) {
            DimRange r;
            r.label = rd.need(n, at, "label", Node::Kind::string).string;
            r.min = rd.need(n, at, "min", Node::Kind::integer).integer;
            r.max = rd.need(n, at, "max", Node::Kind::integer).integer;
            r.observed_min = rd.need(n, at, "observed_min", Node::Kind::integer).integer;
            r.observed_max = rd.need(n, at, "observed_max", Node::Kind::integer).integer;
            r.user_bounds = rd.need(n, at, "user_bounds", Node::Kind::boolean).boolean;
            r.zero_or_one = rd.need(n, at, "zero_or_one", Node::Kind::boolean).boolean;
            if (r.min > r.max) rd.fail(at, "min " + std::to_string(r.min) + " is greater than max " + std::to_string(r.max));
            spec.ranges.push_back(std::move(r));
        });
        spec.relations = rd.relations(rd.need(doc, "$", "relations", Node::Kind::array), "$.relations");
        spec.hints = rd.relations(rd.need(doc, "$", "hints", Node::Kind::array), "$.hints");
        const Node& constants = rd.need(doc, top, "constants", Node::Kind::object);
        for (std::size_t i = 0; i < constants.keys.size(); ++i) {
            const std::string at = "$.constants." + constants.keys[i];
            if (constants.array[i].kind != Node::Kind::string) rd.wrong(at, "a string", constants.array[i]);
            spec.constants.insert_or_assign(constants.keys[i], constants.array[i].string);
        }
        const Node& filled = rd.need(doc, top, "filled", Node::Kind::object);
        for (std::size_t i = 0; i < filled.keys.size(); ++i)
            spec.filled.insert_or_assign(filled.keys[i], rd.indices(filled.array[i], "$.filled." + filled.keys[i]));
        // absent came later: a spec written without it has none.
        if (doc.find("absent"))
            rd.each_object(rd.need(doc, "$", "absent", Node::Kind::array), "$.absent", [&](const Node& n, const std::string& at) {
                AbsentInput a;
                a.name = rd.need(n, at, "name", Node::Kind::string).string;
                const auto calls = [&](const char* key) { return rd.indices(rd.need(n, at, key, Node::Kind::array), at + "." + key); };
                const auto strings = [&](const char* key) { return rd.strings(rd.need(n, at, key, Node::Kind::array), at + "." + key); };
                a.calls = calls("calls");
                a.fill = rd.need(n, at, "fill", Node::Kind::string).string;
                a.user = rd.need(n, at, "user", Node::Kind::boolean).boolean;
                a.checked = rd.need(n, at, "checked", Node::Kind::boolean).boolean;
                a.failing = calls("failing");
                a.reasons = strings("reasons");
                a.tried = strings("tried");
                if (a.reasons.size() != a.failing.size())
                    rd.fail(at + ".reasons", std::to_string(a.reasons.size()) + " reason(s) for " +
                                                 std::to_string(a.failing.size()) + " failing call(s)");
                spec.absent.push_back(std::move(a));
            });
        spec.warnings = rd.strings(rd.need(doc, top, "warnings", Node::Kind::array), "$.warnings");
        if (derived) {
            DimDefinitions d;
            for (const auto& r : spec.ranges) {
                d.labels.push_back(r.label);
                if (r.user_bounds) d.bounds[r.label] = {r.min, r.max};
            }
            d.relations = spec.relations;
            d.named = named;
            spec.dynamic_shapes.set_definitions(std::move(d));
        }
        return spec;
    }

    /// A TensorRT optimization profile as JSON, {input: {"min": [...], "opt": [...], "max": [...]}}.
    /// min and max are per axis over the calls (a label's user bounds win); opt is the most
    /// frequent observed shape (the earliest on a tie), or opt[input] when given.
    template <class = void>
    std::string tensorrt_profile(const std::map<std::string, std::vector<std::int64_t>>& opt = {}) const {
        for (const auto& entry : opt)  // (not a structured binding: clang 14 cannot capture one)
            if (std::none_of(inputs.begin(), inputs.end(), [&](const InputSpec& in) { return in.name == entry.first; }))
                throw value_error("tensorrt_profile: opt names " + detail::repr_string(entry.first) + ", which is not an input");
        std::string s;
        detail::json::Writer w(s);
        w.begin_object();
        for (const auto& in : inputs) {
            std::vector<std::vector<std::int64_t>> seen;
            for (const auto& sh : in.shapes)
                if (sh) seen.push_back(*sh);
            if (seen.empty()) continue;
            check_input(in);
            std::vector<std::int64_t> lo = seen[0], hi = seen[0];
            for (const auto& sh : seen)
                for (std::size_t a = 0; a < sh.size() && a < lo.size(); ++a) {
                    lo[a] = std::min(lo[a], sh[a]);
                    hi[a] = std::max(hi[a], sh[a]);
                }
            for (const auto& d : in.dims)
                if (d.label)
                    for (const auto& r : ranges)
                        if (r.label == *d.label && r.user_bounds) {
                            lo[static_cast<std::size_t>(d.axis)] = r.min;
                            hi[static_cast<std::size_t>(d.axis)] = r.max;
                        }
            std::vector<std::int64_t> best = seen[0];
            std::size_t best_count = 0;
            for (const auto& sh : seen) {
                const auto n = static_cast<std::size_t>(std::count(seen.begin(), seen.end(), sh));
                if (n > best_count) {
                    best = sh;
                    best_count = n;
                }
            }
            if (auto it = opt.find(in.name); it != opt.end()) {
                if (it->second.size() != lo.size())
                    throw value_error("tensorrt_profile: opt shape of " + detail::repr_string(in.name) + " has rank " +
                                      std::to_string(it->second.size()) + ", the input has rank " + std::to_string(lo.size()));
                best = it->second;
            }
            w.key(in.name).begin_object().key("min").array(lo).key("opt").array(best).key("max").array(hi).end();
        }
        w.end();
        return s;
    }

    /// For ONNX: the dim_param of every dynamic axis per input, and free-dimension overrides for
    /// ONNX Runtime (each label's most frequent observed size, the smallest on a tie):
    /// {"dim_params": {input: {"0": "batch_size"}}, "free_dimension_overrides": {"batch_size": 2}}.
    /// An axis with no label is named `<input>_dim_<axis>` (dots made underscores).
    template <class = void>
    std::string onnx_dims() const {
        std::string s;
        detail::json::Writer w(s);
        w.begin_object().key("dim_params").begin_object();
        std::map<std::string, std::map<std::int64_t, std::size_t>> counts;  // label -> size -> calls
        std::vector<std::string> order;
        for (const auto& in : inputs) {
            if (in.dims.empty()) continue;
            w.key(in.name).begin_object();
            for (const DynamicDim& d : in.dims) {
                std::string label = d.label ? *d.label : in.name + "_dim_" + std::to_string(d.axis);
                std::replace(label.begin(), label.end(), '.', '_');
                w.member(std::to_string(d.axis), label);
                check_input(in);
                if (!counts.contains(label)) {
                    order.push_back(label);
                    counts[label];
                    for (const auto& sh : in.shapes)
                        if (sh) ++counts[label][(*sh)[static_cast<std::size_t>(d.axis)]];
                }
            }
            w.end();
        }
        w.end().key("free_dimension_overrides").begin_object();
        for (const std::string& label : order) {
            const auto& sizes = counts[label];
            std::int64_t value = 0;
            std::size_t best = 0;
            for (const auto& [size, n] : sizes)
                if (n > best) {
                    value = size;
                    best = n;
                }
            w.member(label, value);
        }
        w.end().end();
        return s;
    }

private:
    // Every shape of one rank, every dynamic axis within it (what from_json checks, for specs built by hand).
    template <class = void>
    static void check_input(const InputSpec& in) {
        std::optional<std::size_t> rank;
        for (const auto& sh : in.shapes) {
            if (!sh) continue;
            if (rank && sh->size() != *rank)
                throw value_error("ExportSpec: the shapes of " + detail::repr_string(in.name) + " have different ranks");
            rank = sh->size();
        }
        for (const auto& d : in.dims)
            if (d.axis < 0 || static_cast<std::size_t>(d.axis) >= rank.value_or(0))
                throw value_error("ExportSpec: axis " + std::to_string(d.axis) + " of " + detail::repr_string(in.name) +
                                  " is beyond the rank of its shapes");
    }

    template <class = void>
    static std::string shape_text(const std::optional<std::vector<std::int64_t>>& sh) {
        if (!sh) return "absent";
        std::string s = "[";
        for (std::size_t i = 0; i < sh->size(); ++i) s += (i ? ", " : "") + std::to_string((*sh)[i]);
        return s + "]";
    }
    template <class = void>
    static std::string join(const std::vector<std::size_t>& v) { return AbsentInput::join(v); }
    template <class = void>
    static std::string_view kind_name(RelationKind k) {
        switch (k) {
            case RelationKind::offset: return "offset";
            case RelationKind::scale: return "scale";
            case RelationKind::floordiv: return "floordiv";
            case RelationKind::sum: return "sum";
        }
        return "?";
    }
    template <class = void>
    static void write_relations(detail::json::Writer& w, const std::vector<DimRelation>& rs) {
        w.begin_array();
        for (const DimRelation& r : rs) {
            w.begin_object().member("dim", r.dim).member("kind", kind_name(r.kind)).member("base", r.base).member("other", r.other);
            w.member("constant", r.constant).member("support", r.support).member("evidence", r.evidence).member("fits", r.fits);
            w.member("text", r.to_string()).end();
        }
        w.end();
    }

    // from_json's checks, each error naming the JSON path.
    struct Reader : detail::json::Reader {
        using Node = detail::json::Node;
        Reader() : detail::json::Reader("ExportSpec.from_json") {}
        template <class = void>
        std::vector<DynamicDim> dims(const Node& n, const std::string& at) const {
            std::vector<DynamicDim> out;
            for (std::size_t i = 0; i < n.keys.size(); ++i) {
                const std::string& k = n.keys[i];
                std::int64_t axis = 0;
                if (k.empty() || k.size() > 9 || !std::all_of(k.begin(), k.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
                    fail(at, "axis \"" + k + "\" is not a non-negative integer");
                axis = std::stoll(k);
                if (!out.empty() && axis <= out.back().axis) fail(at, "axes must be increasing, got " + k + " after " + std::to_string(out.back().axis));
                const Node& v = n.array[i];
                if (v.kind == Node::Kind::null) out.push_back({axis, std::nullopt});
                else if (v.kind == Node::Kind::string) out.push_back({axis, v.string});
                else wrong(at + "." + k, "a label (a string) or null", v);
            }
            return out;
        }
        template <class = void>
        DynamicShapes shapes(const Node& n, const std::string& at) const {
            switch (n.kind) {
                case Node::Kind::null: return DynamicShapes();
                case Node::Kind::array: {
                    std::vector<DynamicShapes> items;
                    for (std::size_t i = 0; i < n.array.size(); ++i) items.push_back(shapes(n.array[i], at + "[" + std::to_string(i) + "]"));
                    return DynamicShapes::list(std::move(items));
                }
                case Node::Kind::object: {
                    if (n.keys.size() != 1) fail(at, "expected one of {\"dims\": ...}, {\"tuple\": [...]}, {\"dict\": {...}}");
                    const Node& v = n.array[0];
                    if (n.keys[0] == "dims") {
                        object(v, at + ".dims");
                        return DynamicShapes::tensor(dims(v, at + ".dims"));
                    }
                    if (n.keys[0] == "tuple") {
                        if (v.kind != Node::Kind::array) wrong(at + ".tuple", "an array", v);
                        std::vector<DynamicShapes> items;
                        for (std::size_t i = 0; i < v.array.size(); ++i)
                            items.push_back(shapes(v.array[i], at + ".tuple[" + std::to_string(i) + "]"));
                        return DynamicShapes::tuple(std::move(items));
                    }
                    if (n.keys[0] == "dict") {
                        object(v, at + ".dict");
                        ordered_dict<DynamicShapes> d;
                        for (std::size_t i = 0; i < v.keys.size(); ++i) {
                            if (d.contains(v.keys[i])) fail(at + ".dict", "duplicate key \"" + v.keys[i] + "\"");
                            d.append_unique(v.keys[i], shapes(v.array[i], at + ".dict." + v.keys[i]));
                        }
                        return DynamicShapes::dict(std::move(d));
                    }
                    fail(at, "unknown member \"" + n.keys[0] + "\", expected \"dims\", \"tuple\" or \"dict\"");
                }
                default: wrong(at, "null, an array or an object", n);
            }
        }
        template <class = void>
        std::vector<DimRelation> relations(const Node& n, const std::string& at) const {
            std::vector<DimRelation> out;
            each_object(n, at, [&](const Node& m, const std::string& rat) {
                DimRelation r;
                r.dim = need(m, rat, "dim", Node::Kind::string).string;
                const std::string& kind = need(m, rat, "kind", Node::Kind::string).string;
                if (kind == "offset") r.kind = RelationKind::offset;
                else if (kind == "scale") r.kind = RelationKind::scale;
                else if (kind == "floordiv") r.kind = RelationKind::floordiv;
                else if (kind == "sum") r.kind = RelationKind::sum;
                else fail(rat + ".kind", "unknown relation kind \"" + kind + "\", expected offset, scale, floordiv or sum");
                r.base = need(m, rat, "base", Node::Kind::string).string;
                r.other = need(m, rat, "other", Node::Kind::string).string;
                if ((r.kind == RelationKind::sum) == r.other.empty())
                    fail(rat, r.kind == RelationKind::sum ? "a sum needs \"other\"" : "only a sum has \"other\"");
                r.constant = need(m, rat, "constant", Node::Kind::integer).integer;
                r.support = static_cast<std::size_t>(non_negative(need(m, rat, "support", Node::Kind::integer), rat + ".support"));
                r.evidence = static_cast<std::size_t>(non_negative(need(m, rat, "evidence", Node::Kind::integer), rat + ".evidence"));
                // fits came later: a spec written without it has unique constants.
                if (m.find("fits"))
                    r.fits = static_cast<std::size_t>(non_negative(need(m, rat, "fits", Node::Kind::integer), rat + ".fits"));
                out.push_back(std::move(r));
            });
            return out;
        }
    };
};

}  // namespace yobx
