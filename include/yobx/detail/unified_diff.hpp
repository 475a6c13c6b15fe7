// yobx/detail/unified_diff.hpp — a line diff in the unified format of GNU
// `diff -u`, for the patch layer's diffs.
//
// Any text: a last line without a newline is a different line from the same
// text with one, and is written followed by `\ No newline at end of file`, as
// GNU diff does, so that GNU `patch` rebuilds the text byte for byte. The
// alignment is a shortest edit script (Myers' O((N+M)D) algorithm with the
// linear-space divide and conquer of his paper, section 4b): memory linear in
// the input, after the lines are interned as integers and those that occur on
// one side only are set aside (they can never be common). Within a change,
// removed lines come before added ones, as in `diff -u`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace yobx::detail {

/// The lines of `text` with their '\n' (the last one may have none).
inline std::vector<std::string_view> split_lines_with_ends(std::string_view text) {
    std::vector<std::string_view> lines;
    for (std::size_t start = 0; start < text.size();) {
        const auto end = text.find('\n', start);
        const std::size_t stop = end == std::string_view::npos ? text.size() : end + 1;
        lines.push_back(text.substr(start, stop - start));
        start = stop;
    }
    return lines;
}

/// The lines of `text`, without their line breaks; a final newline does not
/// start an empty line.
inline std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines = split_lines_with_ends(text);
    for (auto& line : lines)
        if (line.ends_with('\n')) line.remove_suffix(1);
    return lines;
}

/// `diff -u`'s range: "3,4" (4 lines from line 3), "3" for one line, "2,0"
/// for none after line 2.
inline std::string unified_range(std::size_t start, std::size_t length) {
    if (length == 1) return std::to_string(start + 1);
    return std::to_string(length == 0 ? start : start + 1) + "," + std::to_string(length);
}

/// The common lines of two sequences of line ids: `common_a[i]` and
/// `common_b[j]` are set for the lines of a longest common subsequence.
class LineMatcher {
public:
    LineMatcher(const std::vector<int>& a, const std::vector<int>& b, std::vector<char>& common_a,
                std::vector<char>& common_b)
        : a_(a), b_(b), common_a_(common_a), common_b_(common_b) {}

    // Matches a[a0, a1) against b[b0, b1).
    void match(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1) {
        for (;;) {
            while (a0 < a1 && b0 < b1 && a_[a0] == b_[b0]) mark(a0++, b0++);
            while (a0 < a1 && b0 < b1 && a_[a1 - 1] == b_[b1 - 1]) mark(--a1, --b1);
            if (a0 == a1 || b0 == b1) return;
            const auto [x, y] = split(a0, a1, b0, b1);
            if ((x == a0 && y == b0) || (x == a1 && y == b1)) return;  // no split (not reached: the ends differ)
            // recurse on the smaller half, loop on the other: the stack stays logarithmic
            if ((x - a0) + (y - b0) < (a1 - x) + (b1 - y)) {
                match(a0, x, b0, y);
                a0 = x;
                b0 = y;
            } else {
                match(x, a1, y, b1);
                a1 = x;
                b1 = y;
            }
        }
    }

private:
    void mark(std::size_t i, std::size_t j) {
        common_a_[i] = 1;
        common_b_[j] = 1;
    }

    // A point (x, y) on a shortest edit path of a[a0, a1) -> b[b0, b1) where
    // the forward and reverse searches meet, roughly half of the edits on
    // each side (the first elements differ, and so do the last).
    std::pair<std::size_t, std::size_t> split(std::size_t a0, std::size_t a1, std::size_t b0, std::size_t b1) const {
        const auto n = static_cast<std::ptrdiff_t>(a1 - a0), m = static_cast<std::ptrdiff_t>(b1 - b0);
        const std::ptrdiff_t max_d = (n + m + 1) / 2, offset = max_d + 1, length = 2 * max_d + 3;
        const std::ptrdiff_t delta = n - m;
        const bool front = (delta % 2) != 0;
        // forward[k]: furthest x on diagonal k = x - y from the start; reverse[k]: the same from the end
        std::vector<std::ptrdiff_t> forward(static_cast<std::size_t>(length), -1), reverse(static_cast<std::size_t>(length), -1);
        const auto at = [&](std::vector<std::ptrdiff_t>& v, std::ptrdiff_t k) -> std::ptrdiff_t& {
            return v[static_cast<std::size_t>(offset + k)];
        };
        const auto A = [&](std::ptrdiff_t i) { return a_[a0 + static_cast<std::size_t>(i)]; };
        const auto B = [&](std::ptrdiff_t j) { return b_[b0 + static_cast<std::size_t>(j)]; };
        at(forward, 1) = 0;
        at(reverse, 1) = 0;
        std::ptrdiff_t k1start = 0, k1end = 0, k2start = 0, k2end = 0;
        for (std::ptrdiff_t d = 0; d <= max_d; ++d) {
            for (std::ptrdiff_t k = -d + k1start; k <= d - k1end; k += 2) {
                std::ptrdiff_t x = (k == -d || (k != d && at(forward, k - 1) < at(forward, k + 1))) ? at(forward, k + 1)
                                                                                                   : at(forward, k - 1) + 1;
                std::ptrdiff_t y = x - k;
                while (x < n && y < m && A(x) == B(y)) ++x, ++y;
                at(forward, k) = x;
                if (x > n) k1end += 2;        // off the right edge
                else if (y > m) k1start += 2;  // off the bottom edge
                else if (front) {
                    const std::ptrdiff_t k2 = delta - k;
                    if (k2 >= -max_d - 1 && k2 <= max_d + 1 && at(reverse, k2) != -1 && x >= n - at(reverse, k2))
                        return {a0 + static_cast<std::size_t>(x), b0 + static_cast<std::size_t>(y)};
                }
            }
            for (std::ptrdiff_t k = -d + k2start; k <= d - k2end; k += 2) {
                std::ptrdiff_t x = (k == -d || (k != d && at(reverse, k - 1) < at(reverse, k + 1))) ? at(reverse, k + 1)
                                                                                                   : at(reverse, k - 1) + 1;
                std::ptrdiff_t y = x - k;
                while (x < n && y < m && A(n - x - 1) == B(m - y - 1)) ++x, ++y;
                at(reverse, k) = x;
                if (x > n) k2end += 2;
                else if (y > m) k2start += 2;
                else if (!front) {
                    const std::ptrdiff_t k1 = delta - k;
                    if (k1 >= -max_d - 1 && k1 <= max_d + 1 && at(forward, k1) != -1) {
                        const std::ptrdiff_t x1 = at(forward, k1);
                        if (x1 >= n - x)
                            return {a0 + static_cast<std::size_t>(x1), b0 + static_cast<std::size_t>(x1 - k1)};
                    }
                }
            }
        }
        return {a0, b0};
    }

    const std::vector<int>& a_;
    const std::vector<int>& b_;
    std::vector<char>& common_a_;
    std::vector<char>& common_b_;
};

/// One line of the edit script: kept (' '), removed ('-') or added ('+'),
/// with its positions in the old and new texts before it.
struct DiffOp {
    char kind;
    std::size_t i, j;
};

/// A shortest edit script from the lines `a` to the lines `b`.
inline std::vector<DiffOp> diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
    // Intern the lines; a line found on one side only is never common.
    std::unordered_map<std::string_view, int> ids;
    std::vector<int> count_a, count_b;
    const auto intern = [&](const std::vector<std::string_view>& lines, std::vector<int>& count) {
        std::vector<int> out;
        out.reserve(lines.size());
        for (auto line : lines) {
            const auto [it, added] = ids.try_emplace(line, static_cast<int>(ids.size()));
            if (added) {
                count_a.push_back(0);
                count_b.push_back(0);
            }
            ++count[static_cast<std::size_t>(it->second)];
            out.push_back(it->second);
        }
        return out;
    };
    const std::vector<int> ia = intern(a, count_a), ib = intern(b, count_b);
    // The candidates, with their positions in the full sequences.
    std::vector<int> ra, rb;
    std::vector<std::size_t> pa, pb;
    for (std::size_t i = 0; i < ia.size(); ++i)
        if (count_b[static_cast<std::size_t>(ia[i])] != 0) ra.push_back(ia[i]), pa.push_back(i);
    for (std::size_t j = 0; j < ib.size(); ++j)
        if (count_a[static_cast<std::size_t>(ib[j])] != 0) rb.push_back(ib[j]), pb.push_back(j);
    std::vector<char> common_ra(ra.size(), 0), common_rb(rb.size(), 0);
    LineMatcher(ra, rb, common_ra, common_rb).match(0, ra.size(), 0, rb.size());
    std::vector<char> common_a(a.size(), 0), common_b(b.size(), 0);
    for (std::size_t i = 0; i < ra.size(); ++i) common_a[pa[i]] = common_ra[i];
    for (std::size_t j = 0; j < rb.size(); ++j) common_b[pb[j]] = common_rb[j];

    // The k-th common line of a pairs with the k-th of b (the matching is monotone).
    std::vector<DiffOp> ops;
    std::size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        while (i < a.size() && !common_a[i]) ops.push_back({'-', i++, j});
        while (j < b.size() && !common_b[j]) ops.push_back({'+', i, j++});
        if (i < a.size() && j < b.size()) ops.push_back({' ', i++, j++});
    }
    return ops;
}

/// The unified diff from `before` to `after` with `context` lines around each
/// change, under the headers `--- <from>` and `+++ <to>`; empty when the
/// texts are equal. A last line without a newline is followed by GNU diff's
/// `\ No newline at end of file`.
///   unified_diff("a\nb\n", "a\nc\n", "original", "rewritten")
///   is "--- original\n+++ rewritten\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
inline std::string unified_diff(std::string_view before, std::string_view after, std::string_view from,
                                std::string_view to, std::size_t context = 3) {
    const auto a = split_lines_with_ends(before), b = split_lines_with_ends(after);
    const std::vector<DiffOp> ops = diff_lines(a, b);
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
            const std::string_view line = ops[h].kind == '+' ? b[ops[h].j] : a[ops[h].i];
            out += ops[h].kind;
            out += line;
            if (!line.ends_with('\n')) out += "\n\\ No newline at end of file\n";
        }
        k = end;
    }
    return out;
}

}  // namespace yobx::detail
