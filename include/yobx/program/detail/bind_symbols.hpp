// yobx/program/detail/bind_symbols.hpp — a call's tensors bound to a program's input symbols.
//
// bind_shapes reads each tensor against its input (rank, dtype, static sizes) and each
// symbol's size where it first appears, requiring one size per symbol; solve_expressions
// then checks each dimension written as an expression (`s1 + s11`), solving a linear one
// with a single unknown symbol for it (torch's try_solve). Every message names the tensor
// (flatten_call's paths), the program and the symbols by their labels.
#pragma once

#include <yobx/error.hpp>
#include <yobx/program/detail/inputs_data.hpp>
#include <yobx/sym/symint.hpp>
#include <yobx/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace yobx::detail::program {

/// A symbol's size and where it was read.
struct Seen {
    std::int64_t size;
    std::size_t input, axis;
};
/// Every symbol bound so far.
using Symbols = std::map<std::string, Seen, std::less<>>;
/// The dimensions written as expressions, left for solve_expressions: (text, size, input, axis).
using Pending = std::vector<std::tuple<std::string, std::int64_t, std::size_t, std::size_t>>;

/// How a check's messages name things.
struct CallNames {
    const InputsData& data;
    const std::vector<std::string>& paths;  ///< each tensor's place in the call
    const std::string& program;
    static constexpr const char* refused = ": refused before running";

    std::string name(std::size_t i) const { return i < paths.size() ? paths[i] : "input " + std::to_string(i); }
    std::string named(std::string_view text) const { return data.named(text); }
    /// `[batch_size, 3]`: dims as written, each symbol by its label.
    std::string shape_text(const std::vector<std::string>& dims) const {
        std::string s = "[";
        for (std::size_t i = 0; i < dims.size(); ++i) {
            if (i) s += ", ";
            s += named(dims[i]);
        }
        return s + "]";
    }
    /// `args[0] axis 1 is 6`: where a symbol was read, and its size.
    std::string read_at(const Symbols& symbols, const std::string& symbol) const {
        const Seen& seen = symbols.at(symbol);
        return name(seen.input) + " axis " + std::to_string(seen.axis) + " is " + std::to_string(seen.size);
    }
};

/// The size of each bound symbol.
inline SymbolValues values_of(const Symbols& symbols) {
    SymbolValues v;
    for (const auto& [s, seen] : symbols) v[s] = seen.size;
    return v;
}

/// Each tensor against its input: rank, dtype and static sizes; each symbol's size, one per
/// symbol across the inputs; the dims written as expressions appended to `pending`.
template <class T>
void bind_shapes(const std::vector<T>& flat, const CallNames& names, Symbols& symbols, Pending& pending) {
    for (std::size_t i = 0; i < flat.size(); ++i) {
        const Input& want = names.data.inputs[i];
        const std::vector<std::int64_t> got = shape_of(flat[i]);
        std::vector<std::string> got_text;
        for (const auto d : got) got_text.push_back(std::to_string(d));
        std::ostringstream dtype;
        dtype << tensor_traits<T>::dtype(flat[i]);
        bool ok = got.size() == want.dims.size() && dtype.str() == want.dtype;
        for (std::size_t a = 0; ok && a < got.size(); ++a) {
            if (want.dims[a]) {
                ok = *want.dims[a] == got[a];
                continue;
            }
            if (!is_symbol(want.text[a])) {
                pending.emplace_back(want.text[a], got[a], i, a);
                continue;
            }
            const auto [it, fresh] = symbols.try_emplace(want.text[a], Seen{got[a], i, a});
            if (!fresh && it->second.size != got[a])
                throw value_error(names.name(i) + " axis " + std::to_string(a) + " is " + std::to_string(got[a]) + ", " +
                                  names.name(it->second.input) + " axis " + std::to_string(it->second.axis) + " is " +
                                  std::to_string(it->second.size) + ": " + names.program + " requires them equal (" +
                                  names.named(want.text[a]) + ")" + CallNames::refused);
        }
        if (!ok)
            throw value_error(names.name(i) + " is " + names.shape_text(got_text) + " " + dtype.str() + ", " + names.program +
                              " takes " + names.shape_text(want.text) + " " + want.dtype + CallNames::refused);
    }
}

/// The dims written as expressions, each checked once its symbols are known; one unknown symbol
/// of a linear expression is solved for, then the others are tried again.
inline void solve_expressions(const CallNames& names, Symbols& symbols, Pending& pending) {
    for (bool progress = true; progress && !pending.empty();) {
        progress = false;
        for (auto it = pending.begin(); it != pending.end();) {
            const auto& [text, size, i, a] = *it;
            const SymInt& e = names.data.expressions.at(text);
            std::vector<std::string> unknown;
            for (const auto& s : e.free_symbols())
                if (!symbols.count(s)) unknown.push_back(s);
            if (unknown.size() > 1) {
                ++it;
                continue;
            }
            SymbolValues v = values_of(symbols);
            if (unknown.size() == 1) {
                v[unknown[0]] = 0;
                const std::int64_t at0 = e.evaluate_with(v);
                v[unknown[0]] = 1;
                const std::int64_t slope = e.evaluate_with(v) - at0;
                v[unknown[0]] = 2;
                const bool linear = e.evaluate_with(v) - at0 == 2 * slope;
                if (!linear || slope == 0 || (size - at0) % slope != 0)
                    throw value_error(names.name(i) + " axis " + std::to_string(a) + " is " + std::to_string(size) + ", " + names.program +
                                      " takes " + names.named(text) + " for an integer " + names.named(unknown[0]) + CallNames::refused);
                symbols.try_emplace(unknown[0], Seen{(size - at0) / slope, i, a});
                v[unknown[0]] = (size - at0) / slope;
            }
            if (const std::int64_t want = e.evaluate_with(v); want != size) {
                std::string known;
                for (const auto& s : e.free_symbols())
                    known += (known.empty() ? "" : ", ") + names.named(s) + " = " + std::to_string(v.at(s));
                throw value_error(names.name(i) + " axis " + std::to_string(a) + " is " + std::to_string(size) + ", " + names.program +
                                  " takes " + names.named(text) + " = " + std::to_string(want) + " (" + known + ")" + CallNames::refused);
            }
            it = pending.erase(it);
            progress = true;
        }
    }
}

}  // namespace yobx::detail::program
