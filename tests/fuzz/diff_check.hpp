// Text pairs for the unified diff, and a strict applier of unified diffs: a
// hunk applies only at its stated line, with every context and removed line
// equal byte for byte, newline status included (what `patch -F0` requires).
#pragma once

#include "generators.hpp"

#include <yobx/detail/unified_diff.hpp>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fuzzgen {

/// A text of lines from a small vocabulary (lines repeat, so alignments are
/// ambiguous), including lines that look like diff syntax, '\r' and empty
/// lines, with or without a final newline.
inline std::string text(Bytes& in) {
    static const char* const vocabulary[] = {"a", "b", "c", "", "{", "}", "    return x;", "\\ No newline at end of file",
                                             "-a", "+b", " a", "@@ -1 +1 @@", "a\r", "--- x", "\t"};
    std::string out;
    const std::size_t n = in.below(24);
    for (std::size_t i = 0; i < n; ++i) out += std::string(in.pick(vocabulary)) + "\n";
    if (!out.empty() && in.coin()) out.pop_back();  // no final newline
    return out;
}

/// `before` edited: lines removed, inserted, replaced, moved, the final newline toggled.
inline std::string edited(Bytes& in, const std::string& before) {
    auto lines = yobx::detail::split_lines_with_ends(before);
    std::vector<std::string> out(lines.begin(), lines.end());
    const std::size_t edits = in.below(6);
    for (std::size_t e = 0; e < edits; ++e) {
        const std::size_t at = in.below(out.size() + 1);
        switch (in.below(5)) {
            case 0:
                if (at < out.size()) out.erase(out.begin() + static_cast<std::ptrdiff_t>(at));
                break;
            case 1: out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), text(in) + "\n"); break;
            case 2:
                if (at < out.size()) out[at] = text(in) + "\n";
                break;
            case 3:
                if (at < out.size()) out.push_back(out[at]);
                break;
            default:
                if (!out.empty()) {
                    if (out.back().ends_with('\n')) out.back().pop_back();
                    else out.back() += '\n';
                }
        }
    }
    std::string joined;
    for (const auto& l : out) joined += l;
    // a newline lost in the middle joins two lines: that is a text too
    return joined;
}

/// `original` with `diff` applied strictly, or nullopt (with `why`) when a hunk does not apply.
inline std::optional<std::string> apply_unified_diff(std::string_view original, std::string_view diff, std::string& why) {
    const auto old_lines = yobx::detail::split_lines_with_ends(original);
    std::vector<std::string_view> d = yobx::detail::split_lines(diff);
    if (diff.empty()) return std::string(original);
    if (!diff.ends_with('\n') || d.size() < 3 || !d[0].starts_with("--- ") || !d[1].starts_with("+++ ")) {
        why = "no header";
        return std::nullopt;
    }
    const auto number = [](std::string_view& s) -> std::optional<std::size_t> {
        std::size_t v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || p == s.data()) return std::nullopt;
        s.remove_prefix(static_cast<std::size_t>(p - s.data()));
        return v;
    };
    const auto range = [&](std::string_view& s, char sign) -> std::optional<std::pair<std::size_t, std::size_t>> {
        if (s.empty() || s[0] != sign) return std::nullopt;
        s.remove_prefix(1);
        const auto start = number(s);
        if (!start) return std::nullopt;
        std::size_t length = 1;
        if (s.starts_with(',')) {
            s.remove_prefix(1);
            const auto l = number(s);
            if (!l) return std::nullopt;
            length = *l;
        }
        // a range "s,0" names the line before; "s,n" starts at line s (1-based)
        return std::pair{length == 0 ? *start : *start - 1, length};
    };
    std::string out;
    std::size_t pos = 0, new_count = 0;
    for (std::size_t k = 2; k < d.size();) {
        std::string_view h = d[k++];
        if (!h.starts_with("@@ ")) return why = "not a hunk header: " + std::string(h), std::nullopt;
        h.remove_prefix(3);
        const auto r_old = range(h, '-');
        if (!r_old || !h.starts_with(' ')) return why = "bad old range", std::nullopt;
        h.remove_prefix(1);
        const auto r_new = range(h, '+');
        if (!r_new || h != " @@") return why = "bad new range", std::nullopt;
        if (r_old->first < pos || r_old->first > old_lines.size()) return why = "hunk out of order", std::nullopt;
        for (; pos < r_old->first; ++pos, ++new_count) out += old_lines[pos];
        if (new_count != r_new->first) return why = "new start " + std::to_string(r_new->first) + " != " + std::to_string(new_count), std::nullopt;
        std::size_t n_old = 0, n_new = 0;
        while (k < d.size() && !d[k].starts_with("@@ ")) {
            const std::string_view body = d[k++];
            if (body.empty() || (body[0] != ' ' && body[0] != '-' && body[0] != '+'))
                return why = "bad hunk line: " + std::string(body), std::nullopt;
            std::string line(body.substr(1));
            if (k < d.size() && d[k].starts_with('\\')) {
                if (d[k] != "\\ No newline at end of file") return why = "bad marker", std::nullopt;
                ++k;
            } else {
                line += '\n';
            }
            if (body[0] != '+') {
                if (pos >= old_lines.size() || old_lines[pos] != line) return why = "context or removed line differs", std::nullopt;
                ++pos;
                ++n_old;
            }
            if (body[0] != '-') {
                out += line;
                ++new_count;
                ++n_new;
            }
        }
        if (n_old != r_old->second || n_new != r_new->second) return why = "hunk lengths differ from its header", std::nullopt;
    }
    for (; pos < old_lines.size(); ++pos) out += old_lines[pos];
    return out;
}

/// The pair of texts the bytes describe.
inline std::pair<std::string, std::string> text_pair(Bytes& in) {
    std::string before = text(in);
    std::string after = in.below(8) == 0 ? text(in) : edited(in, before);
    return {std::move(before), std::move(after)};
}

/// The diff of the pair is empty exactly when the texts are equal, and applies strictly to give the second text.
inline void check_unified_diff(const std::uint8_t* data, std::size_t size) {
    Bytes in(data, size);
    const auto [before, after] = text_pair(in);
    const std::string diff = yobx::detail::unified_diff(before, after, "before", "after", in.below(5));
    if (diff.empty() != (before == after)) defect("empty diff iff equal texts, for:\n" + before + "\n=====\n" + after);
    std::string why;
    const auto result = apply_unified_diff(before, diff, why);
    if (!result) defect("the diff does not apply (" + why + "):\n" + diff);
    if (*result != after) defect("the diff applied does not give the second text:\n" + diff);
}

}  // namespace fuzzgen
