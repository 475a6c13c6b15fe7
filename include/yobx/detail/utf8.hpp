// yobx/detail/utf8.hpp — which bytes of a string are well-formed UTF-8.
//
// ONNX names are protobuf proto2 strings: any bytes. JSON (RFC 8259) and XML text must be
// UTF-8, and Python decodes text strictly, so yobx's JSON writes each byte that starts no
// well-formed sequence as the escape Python's "surrogateescape" gives it (\udcXX, read back
// as the byte), and its plots and Python's error messages as U+FFFD, the replacement
// character, as Python's "replace" error handler does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace yobx::detail::utf8 {

/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
inline constexpr std::string_view replacement = "\xEF\xBF\xBD";

/// The length of the well-formed UTF-8 sequence that starts at s[i] (Unicode's Table 3-7:
/// no overlong form, no surrogate, nothing past U+10FFFF), or 0 when none does.
/// `sequence_length("\xC3\xA9", 0)` is 2, `sequence_length("\xFF", 0)` 0.
constexpr std::size_t sequence_length(std::string_view s, std::size_t i) noexcept {
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const auto in = [&](std::size_t k, unsigned lo, unsigned hi) { return i + k < s.size() && at(k) >= lo && at(k) <= hi; };
    const unsigned c = at(0);
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return in(1, 0x80, 0xBF) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return in(1, lo, hi) && in(2, 0x80, 0xBF) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return in(1, lo, hi) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
    }
    return 0;
}

/// Whether all of `s` is well-formed UTF-8.
constexpr bool valid(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = sequence_length(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

}  // namespace yobx::detail::utf8
