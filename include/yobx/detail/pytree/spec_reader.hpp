// yobx/detail/pytree/spec_reader.hpp — what unflatten reads: SpecReader walks a
// spec in preorder and hands out the leaves in order, moved from a vector or
// copied from a span, and says which node it expected when the spec does not
// fit the type being rebuilt.
#pragma once

#include <yobx/detail/pytree/flatten_ctx.hpp>

namespace yobx {
namespace detail {

// Walks a spec in preorder and hands out the leaves in order.
template <class T>
class SpecReader {
public:
    SpecReader(const TreeSpec& spec, T* moved, const T* copied)
        : spec_(spec), d_(spec.data()), pos_(spec.root()), moved_(moved), copied_(copied) {}

    const SpecNode& cur() const { return d_.nodes[pos_]; }
    const SpecData& data() const { return d_; }
    void advance() { ++pos_; }
    void skip() { pos_ += cur().size; }

    T take_leaf() {
        ++pos_;
        return moved_ ? std::move(moved_[next_++]) : copied_[next_++];
    }
    // Whether every child of the current container is a leaf: each child is
    // one node, and each holds a leaf (None and constants hold none).
    bool children_are_leaves() const {
        return cur().size == cur().num_children + 1 && cur().num_leaves == cur().num_children;
    }
    // The current container's children, all leaves, as one range
    // construction of Out; the reader moves past the container.
    template <class Out>
    Out take_children_leaves() {
        const std::size_t n = cur().num_children;
        const std::size_t first = next_;
        pos_ += static_cast<std::uint32_t>(n + 1);
        next_ += n;
        if (moved_) return Out(std::make_move_iterator(moved_ + first), std::make_move_iterator(moved_ + first + n));
        return Out(copied_ + first, copied_ + first + n);
    }

    void expect(NodeKind k, std::string_view what) const {
        if (cur().kind != k) mismatch(what);
    }
    // The message is built only on a mismatch.
    bool at_container(NodeKind k, std::size_t n) const { return cur().kind == k && cur().num_children == n; }

    /// Throws value_error with what the type expects, what the spec holds there, and the whole spec.
    [[noreturn]] void mismatch(std::string_view expected) const {
        std::string msg = "tree_unflatten: the spec does not match the requested type at " + where() +
                          ": the type expects " + std::string(expected) + " but the spec has " + subtree();
        if (pos_ != spec_.root()) msg += " (whole spec: " + spec_.to_string() + ")";
        throw value_error(msg);
    }

    /// The key path of the current node, "<root>" for the root.
    std::string where() const {
        KeyPath path;
        std::uint32_t at = spec_.root();
        while (at != pos_) {
            const SpecNode& n = d_.nodes[at];
            std::uint32_t c = at + 1;
            for (std::uint32_t i = 0; i < n.num_children; ++i, c += d_.nodes[c].size) {
                if (pos_ < c + d_.nodes[c].size) {
                    if (n.kind == NodeKind::dict) path.push_back(KeyEntry::mapping(d_.strings[n.key_index(i)]));
                    else if (n.kind == NodeKind::custom && n.has_keys) path.push_back(KeyEntry::attr(d_.strings[n.key_index(i)]));
                    else path.push_back(KeyEntry::sequence(i));
                    break;
                }
            }
            at = c;
        }
        return path.empty() ? "<root>" : keystr(path);
    }

private:
    std::string subtree() const {
        // A copy of the subtree keeps TreeSpec's printing in one place.
        SpecBuilder b;
        b.append(d_, pos_);
        return TreeSpec(std::move(b.data)).to_string();
    }

    const TreeSpec& spec_;
    const SpecData& d_;
    std::uint32_t pos_;
    T* moved_;
    const T* copied_;
    std::size_t next_ = 0;
};

}  // namespace detail
}  // namespace yobx
