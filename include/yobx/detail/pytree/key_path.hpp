// yobx/detail/pytree/key_path.hpp — what a pytree's nodes are and how a leaf is named.
//
// NodeKind, the Constant a node may hold, KeyEntry (`[1]`, `['past_key_values']`,
// `.key_cache`) and KeyPath with keystr, torch's `[1]['past_key_values'].key_cache[3]`:
// both the static and the dynamic pytree layers, and TreeSpec, use them. Public names,
// reached through yobx/treespec.hpp and yobx/pytree.hpp; kept here, beneath the spec's storage
// (spec_data.hpp) that holds them, so that no include runs back up.
#pragma once

#include <yobx/detail/repr.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace yobx {

/// The kinds of pytree nodes. `constant` is a scalar kept in the spec (not a leaf).
enum class NodeKind : std::uint8_t { leaf, none, constant, list, tuple, dict, custom };

/// A scalar kept in a TreeSpec: bool, int64, double or string.
using Constant = std::variant<bool, std::int64_t, double, std::string>;

/// Python's repr of a constant: True, 3, 0.5, 'text'.
template <class = void>
inline std::string repr(const Constant& c) {
    switch (c.index()) {
        case 0: return std::get<bool>(c) ? "True" : "False";
        case 1: return std::to_string(std::get<std::int64_t>(c));
        case 2: return detail::repr_double(std::get<double>(c));
        default: return detail::repr_string(std::get<std::string>(c));
    }
}

/// One step of a key path: a sequence index `[3]`, a mapping key `['mask']`, or an attribute `.key_cache`.
struct KeyEntry {
    enum class Kind : std::uint8_t { sequence, mapping, attr };
    Kind kind = Kind::sequence;
    std::int64_t index = 0;
    std::string name;

    template <class = void>
    static KeyEntry sequence(std::int64_t i) { return {Kind::sequence, i, {}}; }
    template <class = void>
    static KeyEntry mapping(std::string key) { return {Kind::mapping, 0, std::move(key)}; }
    template <class = void>
    static KeyEntry attr(std::string name) { return {Kind::attr, 0, std::move(name)}; }

    /// `[3]`, `['mask']` or `.key_cache`, as torch.utils._pytree.keystr prints them.
    template <class = void>
    std::string to_string() const {
        // Appended, not "[" + s: GCC 12 at -O3 warns (-Wrestrict, a false
        // positive) on the insertion at 0 that operator+(const char*, string&&) makes.
        std::string s(kind == Kind::attr ? "." : "[");
        switch (kind) {
            case Kind::sequence: s += std::to_string(index); break;
            case Kind::mapping: s += detail::repr_string(name); break;
            case Kind::attr: s += name; return s;
        }
        s += ']';
        return s;
    }
    friend bool operator==(const KeyEntry&, const KeyEntry&) = default;
};

/// The keys from the root to a leaf.
using KeyPath = std::vector<KeyEntry>;

/// The printed form of a key path: keystr({seq(1), mapping("past_key_values"), attr("key_cache"), seq(3)})
/// == "[1]['past_key_values'].key_cache[3]".
template <class = void>
inline std::string keystr(const KeyPath& path) {
    std::string s;
    for (const auto& k : path) s += k.to_string();
    return s;
}

}  // namespace yobx
