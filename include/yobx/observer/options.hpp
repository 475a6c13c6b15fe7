// yobx/observer/options.hpp — how a user names inputs and asks for results.
//
// An input is named by its parameter name or by its position (ArgRef); the
// options of infer_dynamic_shapes (set_batch_dimension_for, dim_names) and of
// infer_arguments (flat, as_args_kwargs) keep the seed's names so that the
// calls read like the Python ones:
//   observer.infer_dynamic_shapes({.set_batch_dimension_for = {"input_ids", 1}, .dim_names = true});
#pragma once

#include <yobx/detail/repr.hpp>
#include <yobx/observer/relations.hpp>

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace yobx {

/// An input named by its parameter name ("input_ids") or its position (0).
class ArgRef {
public:
    template <class = void>
    ArgRef(const char* name) : v_(std::string(name)) {}
    template <class = void>
    ArgRef(std::string name) : v_(std::move(name)) {}
    template <class = void>
    ArgRef(std::string_view name) : v_(std::string(name)) {}
    template <std::integral I>
        requires(!std::same_as<I, bool> && !std::same_as<I, char>)
    ArgRef(I position) : v_(static_cast<std::int64_t>(position)) {}

    template <class = void>
    bool is_position() const noexcept { return v_.index() == 0; }
    template <class = void>
    std::int64_t position() const { return std::get<std::int64_t>(v_); }
    template <class = void>
    const std::string& name() const { return std::get<std::string>(v_); }
    /// Python's repr of the key: 'pixel_values' or 3.
    template <class = void>
    std::string repr() const { return is_position() ? std::to_string(position()) : detail::repr_string(name()); }
    friend bool operator==(const ArgRef&, const ArgRef&) = default;
    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const ArgRef& r) { return os << r.repr(); }

private:
    std::variant<std::int64_t, std::string> v_;
};

/// Which inputs get their first axis marked dynamic even when every call had the same size:
/// nothing (default), every input (true), or a set of names and positions.
class BatchDimensionFor {
public:
    BatchDimensionFor() = default;
    BatchDimensionFor(bool all) : all_(all) {}
    template <class = void>
    BatchDimensionFor(std::initializer_list<ArgRef> inputs) : inputs_(inputs) {}
    template <class = void>
    BatchDimensionFor(std::vector<ArgRef> inputs) : inputs_(std::move(inputs)) {}

    bool all() const noexcept { return all_; }
    const std::vector<ArgRef>& inputs() const noexcept { return inputs_; }
    template <class = void>
    bool empty() const noexcept { return !all_ && inputs_.empty(); }

private:
    bool all_ = false;
    std::vector<ArgRef> inputs_;
};

/// How dynamic axes are labelled:
/// - nothing (default): every dynamic axis is torch.export.Dim.DYNAMIC;
/// - true (automatic): axes whose observed sizes are equal in every call share a label; the well-known
///   inputs (input_ids, attention_mask, past_key_values, ...) get semantic labels (batch_size,
///   sequence_length, ...) and others get "<name>_dim_<axis>";
/// - a map input -> {axis -> label}; dynamic axes it does not name get "<name>_dim_<axis>".
///   DimNames names{{"input_ids", {{0, "batch"}, {1, "seq"}}}, {"past_key_values", {{2, "past"}}}};
class DimNames {
public:
    enum class Mode { none, automatic, explicit_map };
    using Map = std::vector<std::pair<ArgRef, std::map<std::int64_t, std::string>>>;

    DimNames() = default;
    DimNames(bool automatic) : mode_(automatic ? Mode::automatic : Mode::none) {}
    template <class = void>
    DimNames(std::initializer_list<std::pair<ArgRef, std::map<std::int64_t, std::string>>> map)
        : mode_(Mode::explicit_map), map_(map) {}
    template <class = void>
    explicit DimNames(Map map) : mode_(Mode::explicit_map), map_(std::move(map)) {}
    template <class = void>
    static DimNames automatic() { return DimNames(true); }

    Mode mode() const noexcept { return mode_; }
    const Map& map() const noexcept { return map_; }

private:
    Mode mode_ = Mode::none;
    Map map_;
};

/// User bounds of dynamic dimensions, by label: {"sequence_length", {1, 4096}}.
using DimBounds = std::map<std::string, std::pair<std::int64_t, std::int64_t>>;

/// Options of infer_dynamic_shapes. derived_dims finds relations between the
/// labelled dimensions (find_relations, with `relations`) and makes to_python()
/// define one name per label (automatic labels when dim_names is not set), each
/// torch.export.Dim.DYNAMIC, with the relations as comments. `bounds` makes a
/// label a torch.export.Dim with that min and max. named_dims makes every label
/// a torch.export.Dim and the relations torch.export can express derived Dims
/// (`total = past + 1`): torch.export refuses those as soon as the model
/// guards on them, so use it only for models known to take any size.
struct DynamicShapesOptions {
    BatchDimensionFor set_batch_dimension_for{};
    DimNames dim_names{};
    bool derived_dims = false;
    RelationOptions relations{};
    DimBounds bounds{};
    bool named_dims = false;
};

/// Options of infer_arguments: flat returns the list of tensors; as_args_kwargs
/// always returns the pair (args, kwargs).
struct ArgumentsOptions {
    bool flat = false;
    bool as_args_kwargs = false;
};

/// Options of infer_export_arguments: which inputs have a dynamic batch axis (as given to
/// infer_dynamic_shapes), the smallest size of a dynamic dimension (torch.export specializes 0
/// and 1), and the form of the result, as in ArgumentsOptions.
struct ExportArgumentsOptions {
    BatchDimensionFor set_batch_dimension_for{};
    std::int64_t min_size = 2;
    bool flat = false;
    bool as_args_kwargs = false;
};

}  // namespace yobx
