// yobx/detail/repr.hpp — Python's repr() for the scalars yobx prints.
//
// Dynamic shapes, TreeSpecs and Values are printed as Python literals that a
// user pastes into Python, so floats and strings must print exactly as
// Python's repr() does.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

namespace yobx::detail {

/// repr(float) in Python: the shortest round-trip digits, fixed notation when
/// the decimal exponent is in [-4, 16), scientific ("1e+16", "1.5e-07") otherwise.
template <class = void>
inline std::string repr_double(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    std::string sci(buf, res.ptr);  // "-d.ddde+XX"
    const std::size_t epos = sci.find('e');
    const int exp = std::atoi(sci.c_str() + epos + 1);
    std::string sign;
    std::string mant = sci.substr(0, epos);
    if (mant[0] == '-') { sign = "-"; mant.erase(0, 1); }
    std::string digits;
    for (char c : mant)
        if (c != '.') digits += c;
    if (exp >= -4 && exp < 16) {
        std::string out;
        if (exp < 0) {
            out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
        } else if (static_cast<std::size_t>(exp) + 1 >= digits.size()) {
            out = digits + std::string(static_cast<std::size_t>(exp) + 1 - digits.size(), '0') + ".0";
        } else {
            out = digits.substr(0, static_cast<std::size_t>(exp) + 1) + "." + digits.substr(static_cast<std::size_t>(exp) + 1);
        }
        return sign + out;
    }
    std::string out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int a = std::abs(exp);
    out += exp < 0 ? "e-" : "e+";
    if (a < 10) out += '0';
    out += std::to_string(a);
    return sign + out;
}

/// repr(str) in Python: single quotes unless the text holds a ' and no ",
/// backslash escapes for \\, the quote, \n \r \t and other control characters.
template <class = void>
inline std::string repr_string(std::string_view s) {
    const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
    const char q = dq ? '"' : '\'';
    static constexpr char hex[] = "0123456789abcdef";
    std::string out(1, q);
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == q || ch == '\\') { out += '\\'; out += ch; }
        else if (ch == '\n') out += "\\n";
        else if (ch == '\r') out += "\\r";
        else if (ch == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) { out += "\\x"; out += hex[c >> 4]; out += hex[c & 15]; }
        else out += ch;
    }
    out += q;
    return out;
}

}  // namespace yobx::detail
