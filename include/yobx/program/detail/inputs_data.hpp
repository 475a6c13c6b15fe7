// yobx/program/detail/inputs_data.hpp — what a program says of its tensor inputs, as data.
//
// ProgramInputs (yobx/program/inputs.hpp) holds one InputsData: read by parse_inputs
// (inputs_json.hpp), a call bound to it by bind_symbols.hpp and checked by inputs_check.hpp.
// Dimensions and conditions are written as torch prints them (`s1 + s11`, `Eq(Mod(s1, 8), 0)`):
// scan walks such a text, is_symbol says whether a word is one symbol.
#pragma once

#include <yobx/sym/symint.hpp>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace yobx::detail::program {

/// One tensor input: its dtype (Python's name without `torch.`), its dims (nullopt: dynamic),
/// each dim as written ("s0", "5", "s1 + s11") and the strides it was compiled for (empty: contiguous).
struct Input {
    std::string dtype;
    std::vector<std::optional<std::int64_t>> dims;
    std::vector<std::string> text;
    std::vector<SymInt> strides;
};
/// A range constraint of the exported program: min and max (nullopt: unbounded above).
struct Range {
    std::int64_t min = 0;
    std::optional<std::int64_t> max;
};
/// A condition the program asserts over its input symbols, as torch prints it
/// (`Eq(Mod(s1, 8), 0)`, `Ne(s0, s2)`, `s1 <= s3`); `rule` empty when yobx cannot evaluate it,
/// `reason` saying why.
struct Constraint {
    std::string text;
    std::optional<SymBool> rule;
    std::string reason;
};
/// What the observed calls said of one of yobx's labels: its smallest and largest size and
/// whether its dimensions were equal in every call.
struct Observed {
    std::int64_t min = 0, max = 0;
    bool tied = false;
};

/// Walks an expression as written: on_word(identifier) for each identifier, on_other(c) for each
/// other character, in order (`Eq(s5, s3)`: Eq, '(', s5, ',', ' ', s3, ')').
template <class OnWord, class OnOther>
void scan(std::string_view text, OnWord on_word, OnOther on_other) {
    for (std::size_t i = 0; i < text.size();) {
        if (!(std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
            on_other(text[i++]);
            continue;
        }
        std::size_t j = i;
        while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
        on_word(text.substr(i, j - i));
        i = j;
    }
}

/// Whether `s` is one identifier (a symbol), not an expression.
inline bool is_symbol(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

/// Everything a program's yobx.inputs metadata says.
struct InputsData {
    std::vector<Input> inputs;
    std::vector<std::pair<std::string, Range>> ranges;
    std::map<std::string, SymInt, std::less<>> expressions;  ///< each dimension written as an expression, parsed
    std::map<std::string, std::string, std::less<>> labels;  ///< yobx's label of a symbol
    std::vector<Constraint> constraints;
    std::map<std::string, Observed, std::less<>> observed;  ///< by label

    /// A dimension as the messages write it: each symbol replaced by its label
    /// (`s1 + s11` is `sequence_length + past_sequence_length`).
    std::string named(std::string_view text) const {
        std::string out;
        scan(
            text,
            [&](std::string_view id) {
                const auto it = labels.find(id);
                out += it == labels.end() ? std::string(id) : it->second;
            },
            [&](char c) { out += c; });
        return out;
    }
};

}  // namespace yobx::detail::program
