// yobx/patch_source.hpp — the source text of a definition, captured at compile
// time, for the diffs and reports of the patch layer.
//
// Wrap a function definition (the patch, or the function it replaces) in
// YOBX_PATCH_SOURCE ... YOBX_PATCH_SOURCE_END: the definition compiles as
// usual, and `<name>_source()` returns its text, file and first and last line.
// The text is what the preprocessor spells (comments removed, each run of
// blanks one space); `SourceText::text()` lays it out again one statement per
// line, which is what the diffs show.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <vector>

namespace yobx {

/// A definition captured by YOBX_PATCH_SOURCE: its name, its tokens as one
/// line (`code`), the file and the lines it spans.
///   patched_broadcast_shapes_source().text()  is the definition, one statement per line
struct SourceText {
    std::string_view name;
    std::string_view code;
    std::string_view file;
    int first_line = 0;
    int last_line = 0;

    /// The definition laid out one statement per line, blocks indented by four
    /// spaces, with a final newline.
    std::string text() const;
};

namespace detail {

/// The first line of a definition, carried in a type so that it can be
/// written before the name it belongs to (see YOBX_PATCH_SOURCE).
template <int Line>
struct PatchSourceFirstLine {
    static constexpr int line = Line;
};

/// Where `<name>_source` accessors are found from the address of the function
/// they describe, so that PatchInfo::make finds the sources by itself.
class SourceRegistry {
public:
    using Accessor = const SourceText& (*)();

    static SourceRegistry& instance() {
        static SourceRegistry registry;
        return registry;
    }

    template <class Pointer>
    bool add(Pointer p, Accessor source) {
        const std::lock_guard lock(mutex_);
        entries_.push_back({typeid(Pointer), key_of(p), source});
        return true;
    }

    /// The source registered for `p`, or nullopt.
    template <class Pointer>
    std::optional<SourceText> find(Pointer p) const {
        const auto key = key_of(p);
        const std::lock_guard lock(mutex_);
        for (const auto& e : entries_)
            if (e.type == typeid(Pointer) && e.key == key) return e.source();
        return std::nullopt;
    }

private:
    // Function pointers do not convert to integers portably: their bytes do.
    using Key = std::array<unsigned char, 2 * sizeof(void*)>;
    struct Entry {
        std::type_index type;
        Key key;
        Accessor source;
    };
    template <class Pointer>
    static Key key_of(Pointer p) {
        static_assert(sizeof(Pointer) <= sizeof(Key), "SourceRegistry: pointer too large for a key");
        Key k{};
        std::memcpy(k.data(), &p, sizeof(Pointer));
        return k;
    }

    mutable std::mutex mutex_;
    std::vector<Entry> entries_;
};

/// Lays out preprocessor-spelled code: a line break after each `;` and `{` of
/// a block and around each `}` of a block; braces of an initializer
/// (`Shape{a, b}`) and the `;` of a `for (...)` stay on their line. A brace
/// opens a block after `)`, `]` (a lambda), a statement, or a keyword such as
/// `else`, `do`, `try`, `const`, `struct`.
inline std::string layout_code(std::string_view code) {
    std::vector<std::string> lines;
    std::string line;
    int indent = 0;
    auto flush = [&] {
        const auto b = line.find_first_not_of(' ');
        if (b != std::string::npos) {
            const auto e = line.find_last_not_of(' ');
            lines.push_back(std::string(4 * static_cast<std::size_t>(std::max(indent, 0)), ' ') + line.substr(b, e - b + 1));
        }
        line.clear();
    };
    // Whether the `{` at `i` opens a block rather than an initializer: it
    // follows `)`, a statement's end, or a keyword that takes a block.
    auto opens_block = [&](std::size_t i) {
        std::size_t j = i;
        while (j > 0 && code[j - 1] == ' ') --j;
        if (j == 0) return true;
        const char prev = code[j - 1];
        if (prev == ')' || prev == ']' || prev == ';' || prev == '{' || prev == '}') return true;
        std::size_t k = j;
        while (k > 0 && (std::isalnum(static_cast<unsigned char>(code[k - 1])) || code[k - 1] == '_')) --k;
        const std::string_view word = code.substr(k, j - k);
        for (std::string_view kw : {"else", "do", "try", "const", "noexcept", "override", "final", "mutable"})
            if (word == kw) return true;
        // `struct S {`, `namespace n {`, `enum class E {`: a keyword earlier on the line.
        for (std::string_view kw : {"struct ", "class ", "namespace ", "enum ", "union "})
            if (line.find(kw) != std::string::npos && line.find('=') == std::string::npos) return true;
        return false;
    };
    // Whether the quote at `i` separates digits (1'000'000) rather than opens
    // a character literal: the token it is in starts with a digit.
    auto digit_separator = [&](std::size_t i) {
        std::size_t k = i;
        while (k > 0 && (std::isalnum(static_cast<unsigned char>(code[k - 1])) || code[k - 1] == '_' || code[k - 1] == '\'')) --k;
        return k < i && std::isdigit(static_cast<unsigned char>(code[k]));
    };
    std::vector<bool> blocks;  // for each open brace: does it open a block?
    int parens = 0;
    for (std::size_t i = 0; i < code.size(); ++i) {
        const char c = code[i];
        if (c == '\'' && digit_separator(i)) {
            line += c;
            continue;
        }
        if (c == '"' || c == '\'') {  // a literal is copied whole
            std::size_t j = i + 1;
            const bool raw = c == '"' && i > 0 && code[i - 1] == 'R';
            if (raw) {
                const auto open = code.find('(', j);
                const std::string close = ")" + std::string(code.substr(j, open - j)) + "\"";
                const auto end = code.find(close, open);
                j = end == std::string_view::npos ? code.size() : end + close.size();
            } else {
                while (j < code.size() && code[j] != c) j += code[j] == '\\' ? 2 : 1;
                j = std::min(j + 1, code.size());
            }
            line.append(code.substr(i, j - i));
            i = j - 1;
            continue;
        }
        const bool in_block = blocks.empty() || blocks.back();
        if (c == '(') ++parens;
        if (c == ')') --parens;
        if (c == '{') {
            const bool block = parens == 0 && in_block && opens_block(i);
            blocks.push_back(block);
            line += c;
            if (block) {
                flush();
                ++indent;
            }
            continue;
        }
        if (c == '}') {
            const bool block = !blocks.empty() && blocks.back();
            if (!blocks.empty()) blocks.pop_back();
            if (!block) {
                line += c;
                continue;
            }
            flush();
            --indent;
            line += c;
            // `} else {`, `};`, `}, `, `})` stay on the closing line.
            std::size_t j = i + 1;
            while (j < code.size() && code[j] == ' ') ++j;
            const std::string_view rest = code.substr(j);
            const bool joined = rest.starts_with("else") || rest.starts_with("while") || rest.starts_with(";") ||
                                rest.starts_with(",") || rest.starts_with(")");
            if (!joined) flush();
            continue;
        }
        line += c;
        if (c == ';' && parens == 0 && in_block) flush();
    }
    flush();
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

}  // namespace detail

inline std::string SourceText::text() const { return detail::layout_code(code); }

/// The source registered for a function (or an object) by YOBX_PATCH_SOURCE,
/// found from its address; nullopt when it was not defined inside the macro.
///   find_source(&patched_broadcast_shapes)->name  is "patched_broadcast_shapes"
namespace detail {
/// What find_source calls first, found by argument-dependent lookup on the
/// pointer's type: a header that wraps its definitions in
/// YOBX_DETAIL_PATCH_SOURCE_DEFERRED registers them there, on the first look-up
/// of a pointer of their type (this one, for every other type, registers
/// nothing). A header's registration variable would emit the wrapped function
/// and everything it calls in every file that includes the header.
inline void register_deferred_sources(...) {}
}  // namespace detail

template <class Pointer>
std::optional<SourceText> find_source(Pointer p) {
    using detail::register_deferred_sources;
    register_deferred_sources(p);
    return detail::SourceRegistry::instance().find(p);
}

}  // namespace yobx

/// Wraps one definition at namespace scope and captures its source:
///
///   YOBX_PATCH_SOURCE(patched_relu,
///   double patched_relu(double x) {
///       return x > 0 ? x : 0.01 * x;
///   }) YOBX_PATCH_SOURCE_END
///
/// defines `patched_relu` as written, and `const yobx::SourceText&
/// patched_relu_source()` with its text, file, and first and last lines (the
/// lines of `YOBX_PATCH_SOURCE(` and of `YOBX_PATCH_SOURCE_END`). It also
/// registers the source under `&patched_relu`, which is how PatchInfo::make
/// finds it. The first argument is the name of what the definition defines;
/// YOBX_PATCH_SOURCE_END goes on the line of the closing parenthesis, with no
/// semicolon after it.
///
/// Why two macros: a multi-line macro call has no portable line (GCC gives
/// the line of its name, clang the line of its closing parenthesis), so each
/// end of the span is read where a one-token macro stands.
#define YOBX_PATCH_SOURCE YOBX_DETAIL_PATCH_SOURCE_FIRST(__LINE__) YOBX_DETAIL_PATCH_SOURCE
#define YOBX_DETAIL_PATCH_SOURCE_FIRST(line) inline constexpr ::yobx::detail::PatchSourceFirstLine<line>
#define YOBX_DETAIL_PATCH_SOURCE(name, ...)                                                                      \
    name##_first_line_{};                                                                                        \
    inline const ::yobx::SourceText& name##_source();                                                           \
    __VA_ARGS__                                                                                                  \
    inline const bool name##_source_registered_ = ::yobx::detail::SourceRegistry::instance().add(&name, &name##_source); \
    inline const ::yobx::SourceText& name##_source() {                                                          \
        static const ::yobx::SourceText source{#name, #__VA_ARGS__, __FILE__, decltype(name##_first_line_)::line,
// YOBX_PATCH_SOURCE without the registration, for yobx's own headers: the
// header registers the definition from a register_deferred_sources overload
// (see find_source), so a file that includes it and uses nothing emits nothing.
#define YOBX_DETAIL_PATCH_SOURCE_DEFERRED YOBX_DETAIL_PATCH_SOURCE_FIRST(__LINE__) YOBX_DETAIL_PATCH_SOURCE_UNREGISTERED
#define YOBX_DETAIL_PATCH_SOURCE_UNREGISTERED(name, ...)                                                         \
    name##_first_line_{};                                                                                        \
    inline const ::yobx::SourceText& name##_source();                                                           \
    __VA_ARGS__                                                                                                  \
    inline const ::yobx::SourceText& name##_source() {                                                          \
        static const ::yobx::SourceText source{#name, #__VA_ARGS__, __FILE__, decltype(name##_first_line_)::line,
#define YOBX_PATCH_SOURCE_END \
    __LINE__};                \
    return source;            \
    }
