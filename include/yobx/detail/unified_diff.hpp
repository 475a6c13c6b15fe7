// yobx/detail/unified_diff.hpp — a line diff in the unified format of
// `diff -u` and Python's difflib.unified_diff, for the patch layer's diffs.
//
// The texts are function definitions (tens of lines), so a longest common
// subsequence table is small and gives the minimal diff; within a change,
// removed lines come before added ones, as in `diff -u`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace yobx::detail {

/// The lines of `text`, without their line breaks; a final newline does not
/// start an empty line.
inline std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto end = text.find('\n', start);
        if (end == std::string_view::npos) {
            lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

/// `diff -u`'s range: "3,4" (4 lines from line 3), "3" for one line, "2,0"
/// for none after line 2.
inline std::string unified_range(std::size_t start, std::size_t length) {
    if (length == 1) return std::to_string(start + 1);
    return std::to_string(length == 0 ? start : start + 1) + "," + std::to_string(length);
}

/// The unified diff from `before` to `after` with `context` lines around each
/// change, under the headers `--- <from>` and `+++ <to>`; empty when the
/// texts have the same lines.
///   unified_diff("a\nb\n", "a\nc\n", "original", "rewritten")
///   is "--- original\n+++ rewritten\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
inline std::string unified_diff(std::string_view before, std::string_view after, std::string_view from,
                                std::string_view to, std::size_t context = 3) {
    const auto a = split_lines(before), b = split_lines(after);
    const std::size_t n = a.size(), m = b.size();
    // lcs[i][j]: length of the longest common subsequence of a[i:] and b[j:].
    std::vector<std::size_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));

    struct Op {
        char kind;  // ' ', '-', '+'
        std::size_t i, j;  // positions in a and b before the op
    };
    std::vector<Op> ops;
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            ops.push_back({' ', i++, j++});
        } else if (j == m || (i < n && at(i + 1, j) >= at(i, j + 1))) {
            ops.push_back({'-', i++, j});
        } else {
            ops.push_back({'+', i, j++});
        }
    }

    std::string out;
    std::size_t k = 0;
    while (k < ops.size()) {
        while (k < ops.size() && ops[k].kind == ' ') ++k;
        if (k == ops.size()) break;
        // A hunk: `context` lines before the first change, then changes whose
        // gaps are at most 2 * context lines, then `context` lines after.
        const std::size_t begin = k > context ? k - context : 0;
        std::size_t last_change = k, e = k;
        while (e < ops.size()) {
            if (ops[e].kind != ' ') last_change = e;
            else if (e - last_change > 2 * context) break;
            ++e;
        }
        const std::size_t end = std::min(ops.size(), last_change + 1 + context);
        std::size_t len_a = 0, len_b = 0;
        for (std::size_t h = begin; h < end; ++h) {
            if (ops[h].kind != '+') ++len_a;
            if (ops[h].kind != '-') ++len_b;
        }
        if (out.empty()) out = "--- " + std::string(from) + "\n+++ " + std::string(to) + "\n";
        out += "@@ -" + unified_range(ops[begin].i, len_a) + " +" + unified_range(ops[begin].j, len_b) + " @@\n";
        for (std::size_t h = begin; h < end; ++h) {
            out += ops[h].kind;
            out += ops[h].kind == '+' ? b[ops[h].j] : a[ops[h].i];
            out += '\n';
        }
        k = end;
    }
    return out;
}

}  // namespace yobx::detail
