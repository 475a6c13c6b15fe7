// yobx/observer/info.hpp — the recorded calls and what is inferred from them.
//
// InputObserverInfo holds the signature, the recorded calls (InputCandidate),
// their outputs and latencies, and runs the seed's four phases, one header each:
//   1. observer/recording.hpp: bind each call to the signature, keep its
//      constants, apply value_if_missing, store it;
//   2. observer/alignment.hpp: pick the best candidate (most tensors) and align
//      every call on it with None placeholders;
//   3. observer/dynamic_dims.hpp: the dynamic axes, their labels, the
//      dynamic_shapes literal;
//   4. observer/arguments.hpp: the export arguments, absent tensors filled.
// observer/spec_inference.hpp builds the ExportSpec (ranges, relations, report).
// This header declares the class and includes the five. It is not
// synchronized: InputObserver locks around it.
#pragma once

#include <yobx/error.hpp>
#include <yobx/observer/candidate.hpp>
#include <yobx/observer/dynamic_shapes.hpp>
#include <yobx/observer/export_spec.hpp>
#include <yobx/observer/fill.hpp>
#include <yobx/observer/options.hpp>
#include <yobx/observer/signature.hpp>
#include <yobx/ordered_dict.hpp>
#include <yobx/tensor.hpp>
#include <yobx/value.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace yobx {

/// Values used for an argument absent from a call, by name or position
/// (only to infer shapes and arguments; they are never passed to the function).
template <class T>
using ValueIfMissing = std::vector<std::pair<ArgRef, Value<T>>>;

namespace detail {

// Python's == between two scalars (True == 1 == 1.0); other kinds compare by kind only.
template <class T>
bool python_equal(const Value<T>& a, const Value<T>& b) {
    using K = typename Value<T>::Kind;
    const auto numeric = [](const Value<T>& v) { return v.kind() == K::boolean || v.kind() == K::integer || v.kind() == K::floating; };
    const auto as_number = [](const Value<T>& v) {
        if (v.kind() == K::boolean) return v.as_bool() ? 1.0 : 0.0;
        return v.as_double();
    };
    if (numeric(a) && numeric(b)) {
        if (a.kind() != K::floating && b.kind() != K::floating)
            return (a.kind() == K::boolean ? std::int64_t{a.as_bool()} : a.as_int()) ==
                   (b.kind() == K::boolean ? std::int64_t{b.as_bool()} : b.as_int());
        return as_number(a) == as_number(b);
    }
    if (a.kind() == K::string && b.kind() == K::string) return a.as_string() == b.as_string();
    return a.kind() == K::none && b.kind() == K::none;
}

template <class T>
bool python_equal(const Kwargs<T>& a, const Kwargs<T>& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a) {
        auto it = b.find(k);
        if (it == b.end() || !python_equal(v, it->second)) return false;
    }
    return true;
}

template <class T>
Value<T> default_as_value(const DefaultValue& d) {
    if (!d.value()) return Value<T>();
    return std::visit([](const auto& x) { return Value<T>(x); }, *d.value());
}

template <class = void>
inline std::string repr_names(const std::vector<std::string>& names) {
    std::string s = "[";
    for (std::size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + repr_string(names[i]);
    return s + "]";
}

template <class = void>
inline std::string repr_shape(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape.size() == 1) s += ",";
    return s + ")";
}

}  // namespace detail

/// Everything the observer recorded, and phases 2-4 of the inference:
///   const auto& info = observer.info();
///   info.inputs()[0].to_string();  info.latencies()[0];  info.flat_outputs()[0].size();
/// The class only declares; each phase is defined in its own header (included below).
template <class T>
class InputObserverInfo {
    static_assert(std::is_same_v<dim_t<T>, std::int64_t>,
                  "yobx::InputObserverInfo<T>: the observer records concrete tensors, whose "
                  "tensor_traits<T>::shape returns int64_t sizes");

public:
    using V = Value<T>;

    // ------------------------------------------------ phase 1: recording (observer/recording.hpp)

    /// Validates value_if_missing and fill_if_missing against the signature (the seed's ValueError for
    /// an unknown name of a function without **kwargs, or a position beyond the signature).
    InputObserverInfo(Signature signature, ValueIfMissing<T> value_if_missing, FillIfMissing<T> fill_if_missing = {});

    /// Phase 1 without storing: Python's add_inputs. Keeps constant kwargs (bool/int/float/str differing
    /// from a non-None default), drops other scalars and None keywords, applies value_if_missing, orders
    /// the keywords as the signature does, and checks the call binds to the signature.
    InputCandidate<T> make_candidate(Args<T> args, Kwargs<T> kwargs, bool clone = true) const;

    /// The call `index` as it was made, as the tuple (args, kwargs): what value_if_missing supplied
    /// is left out (None in place of a positional argument), the constants and the other scalar or
    /// None keywords the call passed are in.
    V observed_arguments(std::size_t index) const;

    /// Stores one recorded call with its outputs and latency.
    void add(InputCandidate<T> candidate, TreeSpec output_spec, std::vector<T> flat_output, double latency);

    /// Removes arguments from every recorded call, by name or position (a position stands for its
    /// parameter). `*args` and `**kwargs` cannot be removed; a name present in no call is
    /// ignored, unless no name given is present in any call (value_error, as the reference).
    void remove_inputs(const std::vector<ArgRef>& inputs);

    /// What a user should know about the recorded calls, as it happened (constants that differ
    /// between calls) and as the results stand (see InputObserver::warnings).
    const std::vector<std::string>& recorded_warnings() const noexcept { return warnings_; }
    /// Adds a warning (once) and writes it to the log stream, if any.
    void warn(std::string message);
    /// Where warnings are written as they happen (nullptr: nowhere).
    void set_log(std::ostream* log) noexcept { log_ = log; }
    /// The warnings about the results: one call only (every dimension static without
    /// set_batch_dimension_for), a dynamic dimension only ever 0 or 1. Logged once each.
    std::vector<std::string> result_warnings();

    const Signature& signature() const noexcept { return sig_; }
    const ValueIfMissing<T>& value_if_missing() const noexcept { return value_if_missing_; }
    /// The fill of an absent input, by its key (its name, or `*args[j]`): the user's, the one
    /// check_fills chose, or automatic.
    Fill<T> fill_of(const std::string& key) const {
        const auto it = fills_.find(key);
        return it == fills_.end() || it->second.by_value ? Fill<T>::automatic() : it->second.fill;
    }
    /// The number of recorded calls.
    std::size_t size() const noexcept { return inputs_.size(); }
    const std::vector<InputCandidate<T>>& inputs() const noexcept { return inputs_; }
    /// Per call: the structure of the output and its tensors (deep copies).
    const std::vector<TreeSpec>& outputs_specs() const noexcept { return outputs_specs_; }
    const std::vector<std::vector<T>>& flat_outputs() const noexcept { return flat_outputs_; }
    /// Per call: the time the function took, in seconds.
    const std::vector<double>& latencies() const noexcept { return latencies_; }

    // ------------------------------------ phase 2: best candidate and alignment (observer/alignment.hpp)

    /// The call with the most tensors (ties: the one with more arguments, then the first).
    const InputCandidate<T>& best_candidate() const {
        check_captured();
        return inputs_[best_];
    }
    std::size_t best_candidate_index() const {
        check_captured();
        return best_;
    }

    /// Phase 2: aligns every call on the best candidate (see docs/observer.md for the errors).
    void align_inputs_none_values();

    // ------------------------------------------ phase 3: dynamic shapes (observer/dynamic_dims.hpp)

    /// Phase 3, flat: the dynamic axes of every tensor of the best candidate.
    std::vector<std::vector<std::int64_t>> infer_dynamic_dimensions(const BatchDimensionFor& batch = {});

    /// Phase 3: the dynamic shapes, mirroring the best candidate's arguments.
    DynamicShapes infer_dynamic_shapes(const DynamicShapesOptions& options = {});

    // ------------------------------------------------- phase 4: arguments (observer/arguments.hpp)

    /// The arguments infer_arguments(index) gives that the call `index` did not pass: those
    /// value_if_missing supplied and those with no tensor in the call, in the best candidate's order.
    std::vector<std::string> filled_arguments(std::size_t index);

    /// Phase 4: the export arguments from the first call with the best candidate's argument counts,
    /// every absent tensor filled (see fill_absent: sized from the call's own dimensions where a label
    /// or a relation ties them, empty along its largest other dynamic axis).
    V infer_arguments(const ArgumentsOptions& options = {});

    /// Arguments torch.export can trace without specializing: the first call with every tensor (or
    /// the best candidate, filled), each dynamic dimension set to at least options.min_size and to a
    /// size no other dynamic dimension has (torch gives equal sizes one symbol), the relations found
    /// between labels kept (total_sequence_length = past_sequence_length + sequence_length). A sum
    /// of two labels also gets a size no observed call had: torch 2.6's exported module, given an
    /// input whose dimension `s1 + s11` equals the size it was exported with, specializes on it and
    /// refuses other sizes afterwards (docs/observer.md). A tensor whose shape changes is zeros of
    /// its new shape (its dtype and device kept), the others copies.
    V infer_export_arguments(const ExportArgumentsOptions& options = {});

    /// Phase 4 from the stored call `index`.
    V infer_arguments(std::size_t index, const ArgumentsOptions& options = {});

    /// Phase 4 for arguments given by the caller (a tuple: positional; a dict: keywords; keywords
    /// that have a default become constant kwargs): aligned on the best candidate, absent tensors filled.
    V infer_arguments(const V& args_or_kwargs, const ArgumentsOptions& options = {});

    /// Runs the model (runner, as check_discrepancies gives it a call) on each call with an absent
    /// input twice, as made and with its fill, on clones of the arguments, and compares the outputs
    /// within atol/rtol. A fill that changes them is replaced by the first candidate that reproduces
    /// every such call: the current fill, then zeros, then ones (false, true for bool); the user's
    /// fill (fill_if_missing or value_if_missing) is checked, not replaced. The chosen fills are
    /// what infer_arguments(i) and the replay use from then on. See observer/fill_check.hpp.
    template <class Runner>
    std::vector<AbsentInput> check_fills(Runner&& runner, double atol = 1e-4, double rtol = 0.1);

    /// Per input absent from some call: the calls, its fill, and what check_fills found.
    std::vector<AbsentInput> absent_inputs();

    // ----------------------------------- the export specification (observer/spec_inference.hpp)

    /// Everything an export needs to know (see ExportSpec): inputs with their shapes and labels,
    /// ranges, relations and hints, constant kwargs, what value_if_missing filled in, warnings.
    /// Labels are automatic unless options.dim_names says otherwise; `bounds` override ranges.
    ExportSpec infer_export_spec(const DynamicShapesOptions& options = {});

private:
    // phase 1
    void check_captured() const;
    void check_index(std::size_t index) const;
    bool is_default(const std::string& k, const V& v) const;
    Kwargs<T> order_kwargs(Kwargs<T> kwargs) const;
    void check_binding(const Args<T>& args, const Kwargs<T>& kwargs) const;
    std::string positional_key(std::size_t i) const;

    // phase 2
    // One argument of the best candidate, and where its tensors sit in the flat list.
    struct Slot {
        bool positional = false;    // passed by position in the best candidate
        std::size_t position = 0;   // its index in the best candidate's args
        bool varargs = false;       // an item of *args
        std::string name;           // parameter or keyword name (for *args items: the *args name)
        std::string key;            // the key of its tensor count: name, or "*args[j]"
        std::size_t count = 0;      // tensors in the best candidate
        std::size_t offset = 0;     // first flat index
    };
    void refresh();
    const V* bound(const InputCandidate<T>& c, std::string_view name) const;
    std::vector<std::string> present_names(const InputCandidate<T>& c) const;
    static std::vector<std::string> keyword_names(const InputCandidate<T>& c);
    std::size_t present_varargs_end(const InputCandidate<T>& c) const;
    std::vector<Slot> make_slots(const InputCandidate<T>& best) const;
    const V* lookup(const InputCandidate<T>& c, const Slot& s) const;
    Kwargs<T> bound_constants(const InputCandidate<T>& c) const;
    void align_with(InputCandidate<T>& c, std::optional<std::size_t> index = std::nullopt);
    std::string constants_difference(std::optional<std::size_t> a, const Kwargs<T>& in_a, std::size_t b,
                                     const Kwargs<T>& in_b) const;
    void check_aligned_sizes(std::span<const InputCandidate<T>> cands) const;
    void record_shapes();
    std::size_t slot_of(std::size_t flat) const { return flat_slot_[flat]; }
    // The shape of flat tensor f in every call (nullopt where the call had none), computed once per alignment.
    const std::vector<std::optional<std::vector<std::int64_t>>>& shapes_at(std::size_t f) const { return shapes_[f]; }

    // phase 3
    static void check_bounds(const DimBounds& bounds, const std::vector<DimSeries>& series);
    static DynamicShapes with_definitions(DynamicShapes shapes, const std::vector<DimSeries>& series,
                                          std::vector<DimRelation> relations, const DynamicShapesOptions& options);
    std::vector<DimSeries> dim_series(const std::vector<std::vector<std::int64_t>>& dims,
                                      const std::vector<std::vector<std::optional<std::string>>>& labels,
                                      bool assumed) const;
    DynamicShapes mirror_best(const std::vector<std::vector<std::int64_t>>& dims,
                              const std::vector<std::vector<std::optional<std::string>>>& labels) const;
    std::vector<bool> batch_slots(const BatchDimensionFor& batch) const;
    std::string input_label(const Slot& s) const;
    std::string generated_label(std::size_t flat, std::int64_t axis) const;
    std::string unique_label(std::size_t flat, std::int64_t axis, const std::set<std::string>& taken) const;
    std::vector<std::optional<std::int64_t>> observed_sizes(std::size_t f, std::int64_t axis) const;
    std::vector<std::vector<std::optional<std::string>>> label_dims(const std::vector<std::vector<std::int64_t>>& dims,
                                                                    const DimNames& names) const;
    ordered_dict<DynamicShapes> post_process_for_kwargs(ordered_dict<DynamicShapes> kwargs) const;

    // phase 4
    // What ties the dimensions of one call together: the dynamic axes, their automatic labels (equal
    // observed sizes share one) and the relations found between the labels; labels in order of
    // first appearance.
    struct Ties {
        std::vector<std::vector<std::int64_t>> dims;
        std::vector<std::vector<std::optional<std::string>>> labels;
        std::vector<DimRelation> relations;
        std::vector<std::string> order;
        std::map<std::string, std::set<std::int64_t>> observed;  // the sizes each label took
    };
    Ties tie_labels(const BatchDimensionFor& batch = {});
    static std::map<std::string, std::int64_t> label_sizes(const std::vector<std::optional<T>>& aligned, const Ties& ties);
    static void derive_sizes(const std::vector<DimRelation>& relations, std::map<std::string, std::int64_t>& size,
                             bool overwrite);
    void fill_absent(std::vector<std::optional<T>>& aligned, const Ties& ties, const std::vector<std::string>& filled) const;
    V build_arguments(std::vector<std::optional<T>> aligned, const std::vector<std::string>& filled,
                      const ArgumentsOptions& options);
    // Whether the input has a fill_if_missing fill, which replaces what value_if_missing supplied.
    bool replaces_value(const std::string& key) const {
        const auto it = fills_.find(key);
        return it != fills_.end() && !it->second.by_value;
    }
    // The fill of one input and what check_fills found about it.
    struct FillState {
        Fill<T> fill{};
        bool user = false;                 // given in fill_if_missing (or value_if_missing: by_value)
        bool by_value = false;             // the value_if_missing tensor is the fill
        bool checked = false;
        std::vector<std::size_t> failing{};  // calls the fill does not reproduce
        std::vector<std::string> reasons{};  // why, per failing call
        std::vector<std::string> tried{};    // the candidates tried, in order
    };
    V pack_arguments(std::vector<std::optional<T>> aligned, const ArgumentsOptions& options) const;

    // the export specification
    std::vector<std::string> flat_names() const;

    // phase 1: the recorded calls
    Signature sig_;
    ValueIfMissing<T> value_if_missing_;
    std::map<std::string, FillState> fills_;  // by slot key
    std::vector<std::string> warnings_;
    std::set<std::string> logged_;  // the result warnings already written to log_
    std::ostream* log_ = nullptr;
    Kwargs<T> defaults_;  // non-None defaults, by name
    std::vector<InputCandidate<T>> inputs_;
    std::vector<TreeSpec> outputs_specs_;
    std::vector<std::vector<T>> flat_outputs_;
    std::vector<double> latencies_;
    // phase 2: the best candidate and the alignment on it
    std::size_t best_ = 0;
    bool aligned_ = false;
    std::vector<Slot> slots_;
    std::vector<std::size_t> flat_slot_;  // the slot of each flat tensor
    std::vector<std::vector<std::optional<std::vector<std::int64_t>>>> shapes_;  // [flat][call]
    std::map<std::string, std::size_t> captured_;
    // While check_fills runs: the ties of the recorded calls, which no fill changes, computed once
    // for all the filled calls it builds (build_arguments).
    const Ties* ties_cache_ = nullptr;
};

}  // namespace yobx

#include <yobx/observer/recording.hpp>
#include <yobx/observer/alignment.hpp>
#include <yobx/observer/dynamic_dims.hpp>
#include <yobx/observer/arguments.hpp>
#include <yobx/observer/fill_check.hpp>
#include <yobx/observer/spec_inference.hpp>
