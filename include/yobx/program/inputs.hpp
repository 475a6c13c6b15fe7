// yobx/program/inputs.hpp — ProgramInputs: what an exported program says its tensor inputs are.
//
// Read from a package's yobx.inputs metadata (detail/inputs_json.hpp), it checks a call's
// tensors before the program runs: bound to the program's symbols (detail/bind_symbols.hpp),
// then checked against its ranges, the conditions it asserts and, when asked, what yobx
// observed (detail/inputs_check.hpp).
#pragma once

#include <yobx/error.hpp>
#include <yobx/program/detail/bind_symbols.hpp>
#include <yobx/program/detail/inputs_check.hpp>
#include <yobx/program/detail/inputs_data.hpp>
#include <yobx/program/detail/inputs_json.hpp>
#include <yobx/sym/symint.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx {

/// What a runner checks beyond the program's own constraints (PackageRunner's options):
/// with `as_observed`, also what yobx saw in every observed call: the dimensions that carried one
/// label equal, and each label's size within its observed range, `range_slack` units beyond it
/// allowed on each side. Off by default: the exported program's constraints are the contract.
struct RunnerOptions {
    bool as_observed = false;
    std::int64_t range_slack = 0;
};

/// What a program says its tensor inputs are, in the order of the flat call: each one's dtype
/// (Python's name without `torch.`) and shape, a dynamic dimension by its symbol:
///   [{"dtype": "int64", "shape": ["s0", "s1"]}, {"dtype": "float32", "shape": ["s0", 3, 224, 224]}]
/// (what yobx-export writes in a package's yobx.inputs metadata). check() refuses
/// a call that breaks it before it runs: AOTInductor itself runs an input of another rank.
class ProgramInputs {
public:
    using Input = detail::program::Input;
    using Range = detail::program::Range;
    using Constraint = detail::program::Constraint;
    using Observed = detail::program::Observed;

    /// Reads the JSON: a list of inputs, or {"inputs": [...], "ranges": {"s0": [2, null], ...},
    /// "labels": {"s0": "batch_size", ...}} (the range constraints of the exported program, by
    /// symbol or expression, and yobx's labels of its symbols, which the messages use); a
    /// value_error names the entry and what is wrong. A dimension is an integer, a symbol or an expression
    /// of symbols as torch prints it (`s1 + s11`).
    static ProgramInputs from_json(std::string_view json) {
        ProgramInputs out;
        out.d_ = detail::program::parse_inputs(json);
        return out;
    }

    bool empty() const noexcept { return d_.inputs.empty(); }
    const std::vector<Input>& inputs() const noexcept { return d_.inputs; }
    const std::vector<std::pair<std::string, Range>>& ranges() const noexcept { return d_.ranges; }
    const std::map<std::string, std::string, std::less<>>& labels() const noexcept { return d_.labels; }
    const std::vector<Constraint>& constraints() const noexcept { return d_.constraints; }
    const std::map<std::string, Observed, std::less<>>& observed() const noexcept { return d_.observed; }
    /// The constraints check() cannot evaluate, each with the reason: torch printed a function
    /// yobx's parse_sym_bool does not read, or a symbol no input gives. PackageRunner says each
    /// once, when it loads the package.
    std::vector<const Constraint*> unchecked() const {
        std::vector<const Constraint*> out;
        for (const Constraint& c : d_.constraints)
            if (!c.rule) out.push_back(&c);
        return out;
    }

    /// A dimension as the messages write it: each symbol replaced by its label
    /// (`s1 + s11` is `sequence_length + past_sequence_length`).
    std::string named(std::string_view text) const { return d_.named(text); }

    /// Checks a call's tensors before the program runs, as torch.export's own input check
    /// does: rank, dtype and static sizes; one size per symbol across the inputs; each
    /// expression (`s1 + s11`) equal to its symbols' sizes, a linear one with a single
    /// unknown symbol solved for it; each range (a minimum above 2 and a finite maximum:
    /// torch lets a dimension exported as dynamic be 0 or 1); each condition the program
    /// asserts (constraints()). With `options.as_observed`, what yobx observed too (RunnerOptions).
    /// `paths` name the tensors (flatten_call's), `program` the program in the messages. Returns
    /// the size of each symbol, read from the call (strides_of).
    template <class T>
    SymbolValues check(const std::vector<T>& flat, const std::vector<std::string>& paths, const std::string& program,
                       const RunnerOptions& options = {}) const {
        using namespace detail::program;
        if (options.as_observed && d_.observed.empty())  // asked for, and nothing to check it against: said
            throw value_error("as_observed: " + program + " holds no observed sizes (its metadata has no \"observed\": "
                              "compiled by an older yobx-export, or from calls that do not flatten to its inputs)");
        if (d_.inputs.empty()) return {};
        const CallNames names{d_, paths, program};
        if (flat.size() != d_.inputs.size())
            throw value_error("the call has " + std::to_string(flat.size()) + " tensor(s), " + program + " takes " +
                              std::to_string(d_.inputs.size()) + CallNames::refused);
        Symbols symbols;
        Pending pending;
        bind_shapes(flat, names, symbols, pending);
        solve_expressions(names, symbols, pending);
        check_ranges(flat, names, symbols);
        check_constraints(names, symbols);
        if (options.as_observed) {
            if (options.range_slack < 0)
                throw value_error("RunnerOptions: range_slack is " + std::to_string(options.range_slack) + ", expected 0 or more");
            check_observed(names, symbols, options.range_slack);
        }
        return values_of(symbols);
    }

    /// The strides input `i` must have for the program, at the sizes `values` (what check() returns):
    /// those of the tensor it was exported from (channels last, for one), evaluated; nothing when
    /// the metadata gives none (contiguous) or a symbol has no value.
    std::optional<std::vector<std::int64_t>> strides_of(std::size_t i, const SymbolValues& values) const {
        if (i >= d_.inputs.size() || d_.inputs[i].strides.empty()) return std::nullopt;
        std::vector<std::int64_t> out;
        try {
            for (const SymInt& s : d_.inputs[i].strides) out.push_back(s.evaluate_with(values));
        } catch (const error&) {
            return std::nullopt;
        }
        return out;
    }

private:
    detail::program::InputsData d_;
};

}  // namespace yobx
