// yobx/detail/pytree/spec_data.hpp — a TreeSpec's storage: its nodes in one array, and their builder.
//
// SpecData holds a spec's nodes in preorder (kind, child count, keys, constants); SpecBuilder
// appends them as a flatten or a reader walks a tree. TreeSpec (yobx/treespec.hpp) shares one
// immutable SpecData between its copies.
#pragma once

#include <yobx/error.hpp>
#include <yobx/detail/pytree/key_path.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace yobx {

namespace detail {

// One node of a spec in preorder. Children follow their parent; `size` (the
// node count of the subtree) lets a reader skip a subtree in O(1).
struct SpecNode {
    // A constructor, so that emplace_back writes the fields in place: building
    // the struct on the stack and copying it made the 16-byte load miss store
    // forwarding, which cost more than the rest of a flatten.
    constexpr SpecNode(NodeKind k, bool keys, std::uint32_t children, std::uint32_t sz, std::uint32_t lv, std::uint32_t d) noexcept
        : kind(k), has_keys(keys), num_children(children), size(sz), num_leaves(lv), data(d) {}

    NodeKind kind;
    bool has_keys;          // dict: always; custom: when the node names its children
    std::uint16_t unused = 0;  // no padding byte: node arrays compare with memcmp
    std::uint32_t num_children;
    std::uint32_t size;
    std::uint32_t num_leaves;
    std::uint32_t data;     // dict: first key in strings; custom: type name in strings (keys follow); constant: index in constants

    /// How many entries of SpecData::strings, from `data`, belong to this node
    /// (a custom node's type name, then the keys).
    template <class = void>
    std::uint32_t num_strings() const noexcept {
        return (kind == NodeKind::custom ? 1 : 0) + (has_keys ? num_children : 0);
    }
    /// The index in SpecData::strings of child i's key (dict key or custom child name).
    template <class = void>
    std::uint32_t key_index(std::uint32_t i) const noexcept { return data + (kind == NodeKind::custom ? 1 : 0) + i; }
};

static_assert(std::has_unique_object_representations_v<SpecNode>);

struct SpecData {
    std::vector<SpecNode> nodes;
    std::vector<std::string> strings;
    std::vector<Constant> constants;
    // The root's hash, computed on first use (0: not yet). Flatten builds many
    // specs that are never hashed, so it is not computed eagerly.
    mutable std::atomic<std::size_t> root_hash{0};
    // Interned specs only (TreeSpec::intern): for each node, how many leaf
    // nodes start there, so that a flatten checks a run of leaves at once.
    std::vector<std::uint32_t> leaf_runs;

    SpecData() = default;
    SpecData(SpecData&& o) noexcept
        : nodes(std::move(o.nodes)),
          strings(std::move(o.strings)),
          constants(std::move(o.constants)),
          leaf_runs(std::move(o.leaf_runs)) {}
};

// The largest spec (in nodes) a thread keeps between flattens, built or interned.
inline constexpr std::size_t max_kept_nodes = 1 << 14;

// The same nodes, strings and constants, bit for bit (0.0 and -0.0 differ:
// an interned spec must print as the one built).
template <class = void>
inline bool identical(const SpecData& a, const SpecData& b) noexcept {
    if (a.nodes.size() != b.nodes.size() || a.strings.size() != b.strings.size() ||
        a.constants.size() != b.constants.size())
        return false;
    if (!a.nodes.empty() && std::memcmp(a.nodes.data(), b.nodes.data(), a.nodes.size() * sizeof(SpecNode)) != 0)
        return false;
    if (a.strings != b.strings) return false;
    for (std::size_t i = 0; i < a.constants.size(); ++i) {
        const Constant& x = a.constants[i];
        const Constant& y = b.constants[i];
        if (x.index() != y.index()) return false;
        if (x.index() == 2) {
            const double u = std::get<double>(x), v = std::get<double>(y);
            if (std::memcmp(&u, &v, sizeof u) != 0) return false;
        } else if (x != y) {
            return false;
        }
    }
    return true;
}

template <class = void>
inline void hash_combine(std::size_t& seed, std::size_t v) noexcept {
    seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

template <class = void>
inline std::size_t hash_constant(const Constant& c) noexcept {
    std::size_t h = c.index();
    switch (c.index()) {
        case 0: hash_combine(h, std::get<bool>(c)); break;
        case 1: hash_combine(h, std::hash<std::int64_t>{}(std::get<std::int64_t>(c))); break;
        case 2: {
            // Equal constants hash equally: every NaN alike, and -0.0 like 0.0.
            const double d = std::get<double>(c);
            hash_combine(h, std::isnan(d) ? 0x7ff8u : std::hash<double>{}(d == 0 ? 0.0 : d));
            break;
        }
        default: hash_combine(h, std::hash<std::string>{}(std::get<std::string>(c)));
    }
    return h;
}

// Constants compare by value, except that NaN equals NaN: a spec must equal itself.
template <class = void>
inline bool equal_constant(const Constant& a, const Constant& b) noexcept {
    if (a.index() != b.index()) return false;
    if (a.index() == 2) {
        const double x = std::get<double>(a), y = std::get<double>(b);
        return x == y || (std::isnan(x) && std::isnan(y));
    }
    return a == b;
}

// Appends nodes in preorder. open() reserves a container node, close() fills in
// its subtree size and leaf count once its children are written.
class SpecBuilder {
public:
    SpecData data;
    std::uint32_t leaves = 0;

    template <class = void>
    void leaf() {
        data.nodes.emplace_back(NodeKind::leaf, false, 0, 1, 1, 0);
        ++leaves;
    }
    template <class = void>
    void leaves_run(std::size_t n) {
        data.nodes.insert(data.nodes.end(), n, SpecNode(NodeKind::leaf, false, 0, 1, 1, 0));
        leaves += static_cast<std::uint32_t>(n);
    }
    template <class = void>
    void none() { data.nodes.emplace_back(NodeKind::none, false, 0, 1, 0, 0); }
    template <class C>
    void constant(C&& c) {
        data.nodes.emplace_back(NodeKind::constant, false, 0, 1, 0, static_cast<std::uint32_t>(data.constants.size()));
        data.constants.emplace_back(std::forward<C>(c));
    }
    template <class = void>
    std::uint32_t add_string(std::string_view s) {
        data.strings.emplace_back(s);
        return static_cast<std::uint32_t>(data.strings.size() - 1);
    }
    template <class = void>
    std::uint32_t next_string() const { return static_cast<std::uint32_t>(data.strings.size()); }
    template <class = void>
    std::uint32_t open(NodeKind kind, std::size_t num_children, bool has_keys = false, std::uint32_t d = 0) {
        data.nodes.emplace_back(kind, has_keys, static_cast<std::uint32_t>(num_children), 0, leaves, d);
        return static_cast<std::uint32_t>(data.nodes.size() - 1);
    }
    template <class = void>
    void close(std::uint32_t at) {
        SpecNode& n = data.nodes[at];
        n.size = static_cast<std::uint32_t>(data.nodes.size() - at);
        n.num_leaves = leaves - n.num_leaves;
    }
    // Copies the subtree rooted at `at` of `src`, remapping its strings and constants.
    template <class = void>
    void append(const SpecData& src, std::uint32_t at) {
        const std::uint32_t end = at + src.nodes[at].size;
        for (std::uint32_t i = at; i < end; ++i) {
            SpecNode n = src.nodes[i];
            if (n.kind == NodeKind::constant) {
                n.data = static_cast<std::uint32_t>(data.constants.size());
                data.constants.push_back(src.constants[src.nodes[i].data]);
            } else if (n.kind == NodeKind::dict || n.kind == NodeKind::custom) {
                n.data = next_string();
                for (std::uint32_t k = 0; k < n.num_strings(); ++k) data.strings.push_back(src.strings[src.nodes[i].data + k]);
            } else if (n.kind == NodeKind::leaf) {
                ++leaves;
            }
            data.nodes.push_back(n);
        }
    }
};

}  // namespace detail

}  // namespace yobx
