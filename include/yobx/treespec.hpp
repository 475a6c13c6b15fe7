// yobx/treespec.hpp — TreeSpec, the structure of a pytree without its leaves.
//
// Over 600 lines: it still holds key paths, the spec's storage, TreeSpec and its JSON reader,
// four concepts whose split into headers of their own is left (docs/architecture.md).
//
// A TreeSpec is a value: cheap to copy (a shared immutable node array), to
// compare and to hash, printable in torch's style, and storable as JSON next
// to saved tensors. Key entries and key paths (`[1]['past_key_values'].key_cache[3]`)
// live here too, since both the static and the dynamic pytree layers use them.
//
// The functions and members that do more than read a field are templates,
// `template <class = void>`, called as plain functions (`spec.to_string()`):
// the compiler instantiates a template only where it is used, so a file that
// includes the pytree or the observer and uses none of it does not compile
// them (the same goes for the observer's option, signature, dynamic-shape
// and export-spec types). docs/performance.md has the measurements; an
// address needs its type or `<>` (`&yobx::TreeSpec::to_string<>`).
#pragma once

#include <yobx/detail/json.hpp>
#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
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

/// The structure of a pytree: node kinds, their context (dict keys, field names,
/// constant values) and children, with the number of leaves.
///   auto [leaves, spec] = yobx::tree_flatten(std::tuple{t1, std::vector{t2, t3}});
///   spec.to_string() == "TreeSpec(tuple, None, [*, TreeSpec(list, None, [*, *])])"
class TreeSpec {
public:
    /// The spec of a single leaf (`*`).
    template <class = void>
    TreeSpec() : TreeSpec(leaf()) {}

    template <class = void>
    static TreeSpec leaf() {
        static const TreeSpec s = [] {
            detail::SpecBuilder b;
            b.leaf();
            return TreeSpec(std::move(b.data));
        }();
        return s;
    }
    template <class = void>
    static TreeSpec none() {
        detail::SpecBuilder b;
        b.none();
        return TreeSpec(std::move(b.data));
    }
    template <class = void>
    static TreeSpec constant(Constant c) {
        detail::SpecBuilder b;
        b.constant(std::move(c));
        return TreeSpec(std::move(b.data));
    }
    template <class = void>
    static TreeSpec list(const std::vector<TreeSpec>& children) { return container(NodeKind::list, {}, {}, children); }
    template <class = void>
    static TreeSpec tuple(const std::vector<TreeSpec>& children) { return container(NodeKind::tuple, {}, {}, children); }
    /// Throws value_error when the keys and children counts differ or a key repeats.
    template <class = void>
    static TreeSpec dict(const std::vector<std::string>& keys, const std::vector<TreeSpec>& children) {
        return container(NodeKind::dict, {}, keys, children);
    }
    /// A registered node: type name, child names (empty: positional children), children.
    template <class = void>
    static TreeSpec custom(std::string_view type, const std::vector<std::string>& keys,
                           const std::vector<TreeSpec>& children) {
        if (type.empty()) throw value_error("TreeSpec::custom: the type name is empty");
        return container(NodeKind::custom, type, keys, children);
    }

    template <class = void>
    NodeKind kind() const noexcept { return node().kind; }
    template <class = void>
    bool is_leaf() const noexcept { return kind() == NodeKind::leaf; }

    /// "leaf", "None", "constant", "list", "tuple", "dict", or a custom node's type name.
    template <class = void>
    std::string_view type_name() const noexcept {
        switch (kind()) {
            case NodeKind::leaf: return "leaf";
            case NodeKind::none: return "None";
            case NodeKind::constant: return "constant";
            case NodeKind::list: return "list";
            case NodeKind::tuple: return "tuple";
            case NodeKind::dict: return "dict";
            case NodeKind::custom: return data_->strings[node().data];
        }
        return {};
    }

    template <class = void>
    std::size_t num_leaves() const noexcept { return node().num_leaves; }
    template <class = void>
    std::size_t num_children() const noexcept { return node().num_children; }
    /// Nodes in this subtree, itself included.
    template <class = void>
    std::size_t num_nodes() const noexcept { return node().size; }

    /// Child i; throws value_error when out of range.
    template <class = void>
    TreeSpec child(std::size_t i) const {
        if (i >= num_children())
            throw value_error("TreeSpec::child: index " + std::to_string(i) + " out of range for a " +
                              std::string(type_name()) + " node with " + std::to_string(num_children()) + " children");
        std::uint32_t at = root_ + 1;
        for (std::size_t k = 0; k < i; ++k) at += data_->nodes[at].size;
        return TreeSpec(data_, at);
    }
    template <class = void>
    std::vector<TreeSpec> children() const {
        std::vector<TreeSpec> out;
        out.reserve(num_children());
        std::uint32_t at = root_ + 1;
        for (std::size_t k = 0; k < num_children(); ++k, at += data_->nodes[at].size) out.push_back(TreeSpec(data_, at));
        return out;
    }

    /// The dict keys, or a custom node's child names; empty for other nodes.
    template <class = void>
    std::vector<std::string_view> keys() const {
        const auto& n = node();
        if (!n.has_keys) return {};
        return {data_->strings.begin() + n.key_index(0), data_->strings.begin() + n.key_index(n.num_children)};
    }

    /// The value of a constant node; throws type_error for other nodes.
    template <class = void>
    const Constant& value() const {
        if (kind() != NodeKind::constant)
            throw type_error("TreeSpec::value: a " + std::string(type_name()) + " node holds no constant");
        return data_->constants[node().data];
    }

    /// torch's layout: `*` for a leaf, `None`, a constant's repr, and
    /// `TreeSpec(type, context, [children])` for containers:
    ///   TreeSpec(dict, ['input_ids', 'mask'], [*, *])
    template <class = void>
    std::string to_string() const {
        std::string s;
        print(s, root_);
        return s;
    }

    /// A JSON document that from_json() reads back into an equal spec.
    template <class = void>
    std::string to_json() const {
        std::string s;
        detail::json::Writer w(s);
        w.begin_object().member("yobx_treespec", 1).key("root");
        write_json(w, root_);
        w.end();
        return s;
    }

    /// Reads what to_json() wrote. Throws value_error naming the offset (syntax)
    /// or the JSON path (structure) of the first problem.
    template <class = void>
    static TreeSpec from_json(std::string_view text);

    template <class = void>
    std::size_t hash() const noexcept {
        if (root_ != 0) return hash_at(*data_, root_);
        std::size_t h = data_->root_hash.load(std::memory_order_relaxed);
        if (h == 0) {
            // Racing threads compute the same value; 0 is remapped so it never means "unset".
            h = hash_at(*data_, 0);
            if (h == 0) h = 1;
            data_->root_hash.store(h, std::memory_order_relaxed);
        }
        return h;
    }

    template <class = void>
    friend bool operator==(const TreeSpec& a, const TreeSpec& b) noexcept {
        if (a.data_ == b.data_ && a.root_ == b.root_) return true;
        if (a.num_nodes() != b.num_nodes() || a.num_leaves() != b.num_leaves() || a.hash() != b.hash()) return false;
        const auto& da = *a.data_;
        const auto& db = *b.data_;
        for (std::uint32_t k = 0; k < a.node().size; ++k) {
            const auto& x = da.nodes[a.root_ + k];
            const auto& y = db.nodes[b.root_ + k];
            if (x.kind != y.kind || x.has_keys != y.has_keys || x.num_children != y.num_children || x.size != y.size)
                return false;
            if (x.kind == NodeKind::constant && !detail::equal_constant(da.constants[x.data], db.constants[y.data]))
                return false;
            if (x.kind == NodeKind::dict || x.kind == NodeKind::custom)
                for (std::uint32_t i = 0; i < x.num_strings(); ++i)
                    if (da.strings[x.data + i] != db.strings[y.data + i]) return false;
        }
        return true;
    }

    template <class = void>
    friend std::ostream& operator<<(std::ostream& os, const TreeSpec& s) { return os << s.to_string(); }

    // Internal: the node array, for the pytree machinery (detail::SpecReader).
    const detail::SpecData& data() const noexcept { return *data_; }
    std::uint32_t root() const noexcept { return root_; }

    // Internal: takes a finished node array.
    template <class = void>
    explicit TreeSpec(detail::SpecData&& d) : data_(std::make_shared<const detail::SpecData>(std::move(d))) {}

    // Internal: the spec of `built`, shared with an identical spec among the
    // last few this thread interned, or a new one. Flattening the same
    // structure again (every decode step of a model) then allocates no spec,
    // and equal specs compare by address. `built` is left as it was.
    template <class = void>
    static TreeSpec intern(const detail::SpecData& built) {
        auto& c = cache();
        for (const auto& r : c.recent)
            if (r && detail::identical(*r, built)) {
                c.last = r;
                return TreeSpec(r, 0);
            }
        detail::SpecData copy;
        copy.nodes = built.nodes;  // copies allocate the exact size, not the builder's reserve
        copy.strings = built.strings;
        copy.constants = built.constants;
        copy.leaf_runs.resize(copy.nodes.size());
        for (std::size_t i = copy.nodes.size(); i-- > 0;)
            if (copy.nodes[i].kind == NodeKind::leaf)
                copy.leaf_runs[i] = 1 + (i + 1 < copy.nodes.size() ? copy.leaf_runs[i + 1] : 0);
        auto made = std::make_shared<const detail::SpecData>(std::move(copy));
        // A huge spec is not kept alive by the thread after its last user.
        if (built.nodes.size() <= detail::max_kept_nodes) {
            c.recent[c.next] = made;
            c.next = (c.next + 1) % c.recent.size();
            c.last = made;
        }
        return TreeSpec(std::move(made), 0);
    }

    // Internal: the spec this thread interned or matched last (null: none
    // yet). A flatten checks its structure against it as it goes
    // (detail::SpecRecorder) and, when nothing differs, adopts it.
    template <class = void>
    static std::shared_ptr<const detail::SpecData> last_interned() { return cache().last; }
    template <class = void>
    static TreeSpec adopt(std::shared_ptr<const detail::SpecData> d) { return TreeSpec(std::move(d), 0); }

private:
    TreeSpec(std::shared_ptr<const detail::SpecData> d, std::uint32_t root) : data_(std::move(d)), root_(root) {}

    template <class = void>
    const detail::SpecNode& node() const noexcept { return data_->nodes[root_]; }

    struct InternCache {
        std::array<std::shared_ptr<const detail::SpecData>, 4> recent;
        std::size_t next = 0;
        std::shared_ptr<const detail::SpecData> last;
    };
    template <class = void>
    static InternCache& cache() {
        thread_local InternCache c;
        return c;
    }

    template <class = void>
    static TreeSpec container(NodeKind kind, std::string_view type, const std::vector<std::string>& keys,
                              const std::vector<TreeSpec>& children) {
        const bool has_keys = kind == NodeKind::dict || !keys.empty();
        if (has_keys && keys.size() != children.size())
            throw value_error("TreeSpec: " + std::to_string(keys.size()) + " keys for " +
                              std::to_string(children.size()) + " children");
        for (std::size_t i = 0; i < keys.size(); ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (keys[i] == keys[j]) throw value_error("TreeSpec: duplicate key " + detail::repr_string(keys[i]));
        detail::SpecBuilder b;
        std::uint32_t d = b.next_string();
        if (kind == NodeKind::custom) b.add_string(type);
        for (const auto& k : keys) b.add_string(k);
        const std::uint32_t at = b.open(kind, children.size(), has_keys, d);
        for (const auto& c : children) b.append(*c.data_, c.root_);
        b.close(at);
        return TreeSpec(std::move(b.data));
    }

    template <class = void>
    static std::size_t hash_at(const detail::SpecData& d, std::uint32_t at) noexcept {
        std::size_t h = 0x5eed;
        for (std::uint32_t k = at; k < at + d.nodes[at].size; ++k) {
            const auto& n = d.nodes[k];
            detail::hash_combine(h, static_cast<std::size_t>(n.kind) * 31 + n.num_children * 2 + n.has_keys);
            if (n.kind == NodeKind::constant) detail::hash_combine(h, detail::hash_constant(d.constants[n.data]));
            if (n.kind == NodeKind::dict || n.kind == NodeKind::custom)
                for (std::uint32_t i = 0; i < n.num_strings(); ++i)
                    detail::hash_combine(h, std::hash<std::string>{}(d.strings[n.data + i]));
        }
        return h;
    }

    template <class = void>
    void print(std::string& s, std::uint32_t at) const {
        const auto& n = data_->nodes[at];
        switch (n.kind) {
            case NodeKind::leaf: s += '*'; return;
            case NodeKind::none: s += "None"; return;
            case NodeKind::constant: s += repr(data_->constants[n.data]); return;
            default: break;
        }
        const TreeSpec self(data_, at);
        s += "TreeSpec(";
        s += self.type_name();
        s += ", ";
        if (n.has_keys) {
            s += '[';
            bool first = true;
            for (auto k : self.keys()) {
                if (!first) s += ", ";
                first = false;
                s += detail::repr_string(k);
            }
            s += ']';
        } else {
            s += "None";
        }
        s += ", [";
        std::uint32_t c = at + 1;
        for (std::uint32_t i = 0; i < n.num_children; ++i, c += data_->nodes[c].size) {
            if (i) s += ", ";
            print(s, c);
        }
        s += "])";
    }

    template <class = void>
    void write_json(detail::json::Writer& w, std::uint32_t at) const {
        const auto& n = data_->nodes[at];
        const TreeSpec self(data_, at);
        w.begin_object();
        switch (n.kind) {
            case NodeKind::leaf: w.member("kind", "leaf").end(); return;
            case NodeKind::none: w.member("kind", "none").end(); return;
            case NodeKind::constant: {
                const Constant& c = data_->constants[n.data];
                switch (c.index()) {
                    case 0: w.member("kind", "bool").member("value", std::get<bool>(c)); break;
                    case 1: w.member("kind", "int").member("value", std::get<std::int64_t>(c)); break;
                    case 2: {
                        const double v = std::get<double>(c);
                        const std::string r = detail::repr_double(v);
                        w.member("kind", "float").key("value");
                        if (std::isfinite(v)) w.raw(r);
                        else w.value(r);  // JSON has no inf/nan literals
                        break;
                    }
                    default: w.member("kind", "str").member("value", std::get<std::string>(c));
                }
                w.end();
                return;
            }
            case NodeKind::list: w.member("kind", "list"); break;
            case NodeKind::tuple: w.member("kind", "tuple"); break;
            case NodeKind::dict: w.member("kind", "dict"); break;
            case NodeKind::custom: w.member("kind", "custom").member("type", self.type_name()); break;
        }
        if (n.kind == NodeKind::dict || n.kind == NodeKind::custom) {
            w.key("keys");
            if (!n.has_keys) w.null();
            else w.array(self.keys());
        }
        w.key("children").begin_array();
        std::uint32_t c = at + 1;
        for (std::uint32_t i = 0; i < n.num_children; ++i, c += data_->nodes[c].size) write_json(w, c);
        w.end().end();
    }

    std::shared_ptr<const detail::SpecData> data_;
    std::uint32_t root_ = 0;
};

namespace detail {

// Builds a TreeSpec from the JSON DOM, checking the schema as it goes.
class SpecFromJson {
public:
    template <class = void>
    TreeSpec run(std::string_view text) {
        const json::Node doc = json::Parser(text, "TreeSpec.from_json").parse();
        if (doc.kind != json::Node::Kind::object) fail("$", "expected an object, got " + std::string(json::kind_name(doc.kind)));
        only(doc, "$", {"yobx_treespec", "root"});
        const std::string top = "$";  // a named path: need() returns into doc, never into a temporary
        const json::Node& version = need(doc, top, "yobx_treespec", json::Node::Kind::integer);
        if (version.integer != 1)
            fail("$.yobx_treespec", "unsupported format version " + std::to_string(version.integer) +
                                        " (this yobx reads version 1)");
        const json::Node* root = doc.find("root");
        if (!root) fail("$", "missing field 'root'");
        node(*root, "$.root");
        return TreeSpec(std::move(b_.data));
    }

private:
    template <class = void>
    [[noreturn]] static void fail(const std::string& path, const std::string& why) {
        throw value_error("TreeSpec.from_json: at " + path + ": " + why);
    }

    template <class = void>
    static void only(const json::Node& n, const std::string& path, std::initializer_list<std::string_view> allowed) {
        for (const auto& k : n.keys) {
            bool ok = false;
            for (auto a : allowed) ok = ok || a == k;
            if (!ok) fail(path, "unexpected field '" + k + "'");
        }
    }

    template <class = void>
    static const json::Node& need(const json::Node& n, const std::string& path, std::string_view key, json::Node::Kind kind) {
        const json::Node* v = n.find(key);
        if (!v) fail(path, "missing field '" + std::string(key) + "'");
        if (v->kind != kind)
            fail(path + "." + std::string(key),
                 "expected " + std::string(json::kind_name(kind)) + ", got " + std::string(json::kind_name(v->kind)));
        return *v;
    }

    template <class = void>
    void node(const json::Node& n, const std::string& path) {
        if (n.kind != json::Node::Kind::object) fail(path, "expected an object, got " + std::string(json::kind_name(n.kind)));
        const std::string& kind = need(n, path, "kind", json::Node::Kind::string).string;
        if (kind == "leaf" || kind == "none") {
            only(n, path, {"kind"});
            kind == "leaf" ? b_.leaf() : b_.none();
        } else if (kind == "bool" || kind == "int" || kind == "str") {
            only(n, path, {"kind", "value"});
            const auto want = kind == "bool" ? json::Node::Kind::boolean
                              : kind == "int" ? json::Node::Kind::integer
                                              : json::Node::Kind::string;
            const json::Node& v = need(n, path, "value", want);
            if (kind == "bool") b_.constant(v.boolean);
            else if (kind == "int") b_.constant(v.integer);
            else b_.constant(v.string);
        } else if (kind == "float") {
            only(n, path, {"kind", "value"});
            const json::Node* v = n.find("value");
            if (!v) fail(path, "missing field 'value'");
            if (v->kind == json::Node::Kind::number) b_.constant(v->number);
            else if (v->kind == json::Node::Kind::integer) b_.constant(static_cast<double>(v->integer));
            else if (v->kind == json::Node::Kind::string && (v->string == "inf" || v->string == "-inf" || v->string == "nan"))
                b_.constant(v->string == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                               : (v->string == "inf" ? 1.0 : -1.0) * std::numeric_limits<double>::infinity());
            else
                fail(path + ".value", "expected a number or one of \"inf\", \"-inf\", \"nan\"");
        } else if (kind == "list" || kind == "tuple" || kind == "dict" || kind == "custom") {
            const bool is_custom = kind == "custom", is_dict = kind == "dict";
            if (is_custom) only(n, path, {"kind", "type", "keys", "children"});
            else if (is_dict) only(n, path, {"kind", "keys", "children"});
            else only(n, path, {"kind", "children"});
            const auto& children = need(n, path, "children", json::Node::Kind::array).array;
            const std::uint32_t d = b_.next_string();
            if (is_custom) {
                const std::string& type = need(n, path, "type", json::Node::Kind::string).string;
                if (type.empty()) fail(path + ".type", "the type name is empty");
                b_.add_string(type);
            }
            bool has_keys = is_dict;
            if (is_dict || is_custom) {
                const json::Node* keys = n.find("keys");
                if (!keys) fail(path, "missing field 'keys'");
                if (is_custom && keys->kind == json::Node::Kind::null) {
                    has_keys = false;
                } else {
                    if (keys->kind != json::Node::Kind::array)
                        fail(path + ".keys", std::string("expected an array") + (is_custom ? " or null" : "") +
                                                 ", got " + std::string(json::kind_name(keys->kind)));
                    has_keys = true;
                    if (keys->array.size() != children.size())
                        fail(path, std::to_string(keys->array.size()) + " keys for " + std::to_string(children.size()) +
                                       " children");
                    for (std::size_t i = 0; i < keys->array.size(); ++i) {
                        const auto& k = keys->array[i];
                        const std::string kp = path + ".keys[" + std::to_string(i) + "]";
                        if (k.kind != json::Node::Kind::string)
                            fail(kp, "expected a string, got " + std::string(json::kind_name(k.kind)));
                        for (std::size_t j = 0; j < i; ++j)
                            if (keys->array[j].string == k.string) fail(kp, "duplicate key " + repr_string(k.string));
                        b_.add_string(k.string);
                    }
                }
            }
            const NodeKind nk = is_custom ? NodeKind::custom : is_dict ? NodeKind::dict
                                : kind == "list" ? NodeKind::list : NodeKind::tuple;
            const std::uint32_t at = b_.open(nk, children.size(), has_keys, d);
            for (std::size_t i = 0; i < children.size(); ++i) node(children[i], path + ".children[" + std::to_string(i) + "]");
            b_.close(at);
        } else {
            fail(path + ".kind", "unknown node kind '" + kind +
                                     "' (expected leaf, none, bool, int, float, str, list, tuple, dict or custom)");
        }
    }

    SpecBuilder b_;
};

}  // namespace detail

template <class>
TreeSpec TreeSpec::from_json(std::string_view text) { return detail::SpecFromJson().run(text); }

}  // namespace yobx

template <>
struct std::hash<yobx::TreeSpec> {
    template <class = void>
    std::size_t operator()(const yobx::TreeSpec& s) const noexcept { return s.hash(); }
};
