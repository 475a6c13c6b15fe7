// yobx/sym/abbreviate.hpp — a printed expression shortened for a line a person reads.
//
// A summary line or an error message quotes an expression; past `limit` characters it shows
// the expression's head, cut between two of its top-level terms (a sum's terms, a Max's or a
// Min's arguments), then `...` and how many terms there are. The report and the values at
// given sizes keep the expression whole.
//
//   yobx::abbreviated("Max(4*n, 8*n + 2, 2*m)", 10)   // "Max(4*n, ... (3 terms, 22 characters)"
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace yobx {

/// `printed` whole when it has at most `limit` characters, else its head up to the last
/// top-level separator within the limit, ` ... ` and the count of its terms and characters.
inline std::string abbreviated(std::string_view printed, std::size_t limit = 200) {
    if (printed.size() <= limit) return std::string(printed);
    // a call (Max, Min) counts its arguments, anything else its terms at depth 0
    const bool call = printed.size() > 4 && (printed.substr(0, 4) == "Max(" || printed.substr(0, 4) == "Min(") && printed.back() == ')';
    const std::size_t depth_of_terms = call ? 1 : 0;
    std::vector<std::size_t> cuts;  // where a top-level term ends
    std::size_t depth = 0;
    for (std::size_t i = 0; i < printed.size(); ++i) {
        const char c = printed[i];
        if (c == '(') ++depth;
        else if (c == ')') depth = depth > 0 ? depth - 1 : 0;
        else if (depth == depth_of_terms && call && c == ',') cuts.push_back(i);
        else if (depth == depth_of_terms && !call && c == ' ' && i + 2 < printed.size() && (printed[i + 1] == '+' || printed[i + 1] == '-') &&
                 printed[i + 2] == ' ')
            cuts.push_back(i);
    }
    std::size_t head = 0;
    for (const std::size_t c : cuts)
        if (c <= limit) head = c;
    if (head == 0) head = limit;  // one term longer than the limit: cut inside it
    return std::string(printed.substr(0, head)) + (call ? ", ... (" : " ... (") + std::to_string(cuts.size() + 1) + " terms, " +
           std::to_string(printed.size()) + " characters)";
}

}  // namespace yobx
