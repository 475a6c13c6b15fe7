// yobx/program/detail/inputs_check.hpp — a bound call checked against what the program requires.
//
// Once bind_symbols.hpp has each symbol's size: the program's ranges (check_ranges, as torch
// checks them: a minimum above 2, a finite maximum), the conditions it asserts
// (check_constraints), and, when asked, what yobx observed (check_observed: one size per tied
// label, each label within its observed range).
#pragma once

#include <yobx/error.hpp>
#include <yobx/program/detail/bind_symbols.hpp>
#include <yobx/program/detail/inputs_data.hpp>
#include <yobx/tensor.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace yobx::detail::program {

/// Each range of the program, by symbol or by a dimension written as that expression.
template <class T>
void check_ranges(const std::vector<T>& flat, const CallNames& names, const Symbols& symbols) {
    const InputsData& d = names.data;
    for (const auto& [key, range] : d.ranges) {
        std::optional<std::pair<std::int64_t, std::string>> found;  // the size and where
        if (const auto s = symbols.find(key); s != symbols.end())
            found.emplace(s->second.size, names.name(s->second.input) + " axis " + std::to_string(s->second.axis));
        for (std::size_t i = 0; !found && i < flat.size(); ++i)
            for (std::size_t a = 0; !found && a < d.inputs[i].text.size(); ++a)
                if (d.inputs[i].text[a] == key) found.emplace(shape_of(flat[i])[a], names.name(i) + " axis " + std::to_string(a));
        if (!found) continue;
        const auto [size, where] = *found;
        if ((range.min > 2 && size < range.min) || (range.max && size > *range.max))
            throw value_error(where + " is " + names.named(key) + " = " + std::to_string(size) + ", " + names.program +
                              " was exported for " + names.named(key) + " in [" + std::to_string(range.min) + ", " +
                              (range.max ? std::to_string(*range.max) : "inf") + "]" + CallNames::refused);
    }
}

/// The conditions the program asserts, once every symbol of each is known; each symbol named where it was read.
inline void check_constraints(const CallNames& names, const Symbols& symbols) {
    for (const Constraint& c : names.data.constraints) {
        if (!c.rule) continue;
        const std::vector<std::string> free = c.rule->free_symbols();
        if (!std::all_of(free.begin(), free.end(), [&](const std::string& f) { return symbols.count(f) > 0; })) continue;
        std::string broken;  // why the rule cannot be evaluated at these sizes (a zero divisor), if it cannot
        try {
            if (c.rule->evaluate_with(values_of(symbols))) continue;
        } catch (const error& e) {
            broken = e.what();
        }
        std::string where;  // the symbols in the order the rule names them: Eq(s5, s3) reads s5 first
        std::set<std::string, std::less<>> named_already;
        scan(
            c.text,
            [&](std::string_view id) {
                if (std::find(free.begin(), free.end(), id) != free.end() && named_already.emplace(id).second)
                    where += (where.empty() ? "" : ", ") + names.read_at(symbols, std::string(id));
            },
            [](char) {});
        std::string rule = names.named(c.text);  // as the program wrote it
        if (free.size() == 2 && c.rule->to_string() == "Eq(" + free[0] + ", " + free[1] + ")")
            rule = "them equal (" + (names.named(free[0]) == names.named(free[1]) ? names.named(free[0]) : rule) + ")";
        throw value_error(where + ": " + names.program + " requires " + rule +
                          (broken.empty() ? "" : ", which cannot be evaluated at these sizes (" + broken + ")") + CallNames::refused);
    }
}

/// What yobx observed: one size per tied label, each label's size within its observed range
/// (`range_slack` units beyond it allowed on each side), the symbols taken in the order of the inputs.
inline void check_observed(const CallNames& names, const Symbols& symbols, std::int64_t range_slack) {
    const InputsData& d = names.data;
    std::vector<const std::pair<const std::string, Seen>*> in_order;
    for (const auto& entry : symbols) in_order.push_back(&entry);
    std::sort(in_order.begin(), in_order.end(), [](const auto* x, const auto* y) {
        return std::tie(x->second.input, x->second.axis) < std::tie(y->second.input, y->second.axis);
    });
    const std::string as_observed = std::string(CallNames::refused) + " (as_observed)";
    std::map<std::string, const Seen*, std::less<>> by_label;
    for (const auto* entry : in_order) {
        const auto& [symbol, seen] = *entry;
        const auto label = d.labels.find(symbol);
        const auto o = label == d.labels.end() ? d.observed.end() : d.observed.find(label->second);
        if (o == d.observed.end()) continue;
        const Observed& ob = o->second;
        if ((seen.size < ob.min && ob.min - seen.size > range_slack) || (seen.size > ob.max && seen.size - ob.max > range_slack))
            throw value_error(names.read_at(symbols, symbol) + ", yobx observed " + label->second + " in [" + std::to_string(ob.min) +
                              ", " + std::to_string(ob.max) + "]" +
                              (range_slack ? " (range_slack " + std::to_string(range_slack) + ")" : "") + as_observed);
        const auto [first, fresh] = by_label.try_emplace(label->second, &seen);
        if (!fresh && ob.tied && first->second->size != seen.size)
            throw value_error(names.read_at(symbols, symbol) + ", " + names.name(first->second->input) + " axis " +
                              std::to_string(first->second->axis) + " is " + std::to_string(first->second->size) +
                              ": yobx observed them equal (" + label->second + ") in every call" + as_observed);
    }
}

}  // namespace yobx::detail::program
