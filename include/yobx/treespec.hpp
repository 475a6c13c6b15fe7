// yobx/treespec.hpp — TreeSpec, the structure of a pytree without its leaves.
//
// Key entries and paths are yobx/detail/pytree/key_path.hpp, the spec's node storage and builder
// detail/pytree/spec_data.hpp, its JSON reader detail/pytree/spec_from_json.hpp.
//
// A TreeSpec is a value: cheap to copy (a shared immutable node array), to
// compare and to hash, printable in torch's style, and storable as JSON next
// to saved tensors.
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
#include <yobx/detail/pytree/spec_data.hpp>
#include <yobx/detail/pytree/spec_from_json.hpp>
#include <yobx/detail/repr.hpp>
#include <yobx/error.hpp>
#include <yobx/detail/pytree/key_path.hpp>

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


template <class>
TreeSpec TreeSpec::from_json(std::string_view text) { return TreeSpec(detail::SpecFromJson().run(text)); }

}  // namespace yobx

template <>
struct std::hash<yobx::TreeSpec> {
    template <class = void>
    std::size_t operator()(const yobx::TreeSpec& s) const noexcept { return s.hash(); }
};
