// yobx/detail/pytree/flatten_ctx.hpp — where flatten writes: the leaves
// (copies, addresses, or addresses into an array sized by the type), the spec
// (SpecRecorder: first compared node by node with the spec this thread
// flattened last, which a matching flatten returns shared, as every decode
// step of a model does; built and interned from the first difference) and the
// key paths. FlattenCtx switches each off at compile time when a call does not
// need it, so tree_leaves builds no spec and tree_flatten records no path.
#pragma once

#include <yobx/detail/pytree/classify.hpp>

namespace yobx {
namespace detail {

// A forward iterator over get(0), get(1), ...: hands a computed sequence to
// a range insertion.
template <class Get>
struct index_iterator {
    using iterator_category = std::forward_iterator_tag;
    using reference = decltype(std::declval<Get&>()(std::size_t{}));
    using value_type = std::remove_cvref_t<reference>;
    using difference_type = std::ptrdiff_t;
    using pointer = void;

    Get* get = nullptr;
    std::size_t i = 0;

    reference operator*() const { return (*get)(i); }
    index_iterator& operator++() {
        ++i;
        return *this;
    }
    index_iterator operator++(int) {
        index_iterator old = *this;
        ++i;
        return old;
    }
    friend bool operator==(const index_iterator& a, const index_iterator& b) noexcept { return a.i == b.i; }
};

// Records the spec of a flatten. It first checks the structure, node by node,
// against the spec this thread flattened last (TreeSpec::last_interned):
// while every node, string and constant matches, nothing is written, and a
// flatten that matches to the end returns that spec, shared. Every decode
// step of a model flattens the same structure, so this is the common case.
// At the first difference the matched prefix is copied into vectors the
// thread keeps between flattens, building goes on from there, and finish()
// interns the result (TreeSpec::intern). A nested flatten (a pytree_node
// that calls tree_flatten) finds those vectors taken and grows its own.
// A template (used as SpecRecorder = SpecRecorderT<>) so that a file that
// flattens nothing does not compile it: its constructor and destructor
// cannot be member templates.
template <class = void>
class SpecRecorderT {
public:
    // An open container: its node and the leaf count when it was opened.
    struct Open {
        std::uint32_t at;
        std::uint32_t leaves;
    };

    SpecRecorderT() : expect_(TreeSpec::last_interned()) {
        if (!expect_) start_building();
    }
    ~SpecRecorderT() {
        if (!building_) return;
        b_.data.nodes.clear();
        b_.data.strings.clear();
        b_.data.constants.clear();
        // A huge structure does not pin its arrays for the thread's lifetime.
        if (b_.data.nodes.capacity() > max_kept_nodes) b_.data.nodes = {};
        swap_with_store();
    }
    SpecRecorderT(const SpecRecorderT&) = delete;
    SpecRecorderT& operator=(const SpecRecorderT&) = delete;

    // Each step below checks the next piece against the last spec inline
    // (always: GCC's per-unit inlining budget would otherwise make it a call
    // in some units and not others) and leaves anything else, building
    // included, to a call.
    [[gnu::always_inline]] void leaf() { leaves_run(1); }
    [[gnu::always_inline]] void leaves_run(std::size_t n) {
        if (expect_ && nodes_ < expect_->leaf_runs.size() && expect_->leaf_runs[nodes_] >= n) {
            nodes_ += static_cast<std::uint32_t>(n);
            leaves_ += static_cast<std::uint32_t>(n);
            return;
        }
        build_leaves_run(n);
    }
    void none() {
        if (expect_) {
            if (nodes_ < expect_->nodes.size() && same_node(none_node)) {
                ++nodes_;
                return;
            }
            diverge();
        }
        b_.none();
    }
    // c is a bool, std::int64_t, double or std::string; doubles compare bit for bit.
    template <class C>
    void constant(const C& c) {
        if (expect_) {
            if (nodes_ < expect_->nodes.size() && constants_ < expect_->constants.size()) {
                const SpecNode want(NodeKind::constant, false, 0, 1, 0, constants_);
                const auto* have = std::get_if<C>(&expect_->constants[constants_]);
                if (have && same_node(want) && same_constant(*have, c)) {
                    ++nodes_;
                    ++constants_;
                    return;
                }
            }
            diverge();
        }
        b_.constant(c);
    }
    std::uint32_t next_string() const { return expect_ ? strings_ : b_.next_string(); }
    [[gnu::always_inline]] void add_string(std::string_view s) {
        if (expect_ && strings_ < expect_->strings.size() && same_string(expect_->strings[strings_], s)) {
            ++strings_;
            return;
        }
        build_string(s);
    }
    [[gnu::always_inline]] Open open(NodeKind k, std::size_t n, bool has_keys, std::uint32_t d) {
        if (expect_ && nodes_ < expect_->nodes.size()) {
            const SpecNode& e = expect_->nodes[nodes_];
            if (e.kind == k && e.has_keys == has_keys && e.num_children == n && e.data == d)
                return {nodes_++, leaves_};
        }
        return build_open(k, n, has_keys, d);
    }
    [[gnu::always_inline]] void close(Open o) {
        if (expect_) {
            const SpecNode& e = expect_->nodes[o.at];
            if (e.size == nodes_ - o.at && e.num_leaves == leaves_ - o.leaves) return;
        }
        build_close(o);
    }

    TreeSpec finish() {
        if (expect_) {
            const SpecData& e = *expect_;
            if (nodes_ == e.nodes.size() && strings_ == e.strings.size() && constants_ == e.constants.size())
                return TreeSpec::adopt(std::move(expect_));
            diverge();  // a prefix of the last spec
        }
        return TreeSpec::intern(b_.data);
    }

private:
    static constexpr SpecNode none_node{NodeKind::none, false, 0, 1, 0, 0};

    // Equal strings without a call to memcmp in the common case: dict keys
    // and type names are short. Two overlapping loads cover 4 to 16 bytes
    // and never read past either string.
    static bool same_string(std::string_view a, std::string_view b) noexcept {
        const std::size_t n = a.size();
        if (n != b.size()) return false;
        const char* x = a.data();
        const char* y = b.data();
        const auto load = [](const char* p, auto word) {
            std::memcpy(&word, p, sizeof word);
            return word;
        };
        if (n > 16) return std::memcmp(x, y, n) == 0;
        if (n >= 8)
            return load(x, std::uint64_t{}) == load(y, std::uint64_t{}) &&
                   load(x + n - 8, std::uint64_t{}) == load(y + n - 8, std::uint64_t{});
        if (n >= 4)
            return load(x, std::uint32_t{}) == load(y, std::uint32_t{}) &&
                   load(x + n - 4, std::uint32_t{}) == load(y + n - 4, std::uint32_t{});
        for (std::size_t i = 0; i < n; ++i)
            if (x[i] != y[i]) return false;
        return true;
    }

    // The next expected node equals `want`, bit for bit.
    bool same_node(const SpecNode& want) const noexcept {
        return std::memcmp(&expect_->nodes[nodes_], &want, sizeof want) == 0;
    }
    template <class C>
    static bool same_constant(const C& a, const C& b) noexcept {
        if constexpr (std::same_as<C, double>) return std::memcmp(&a, &b, sizeof a) == 0;  // -0.0 prints apart from 0.0
        else return a == b;
    }

    // The steps that build (the spec differs from the last one, or there is none).
    [[gnu::noinline]] void build_leaves_run(std::size_t n) {
        if (expect_) diverge();
        b_.leaves_run(n);
    }
    [[gnu::noinline]] void build_string(std::string_view s) {
        if (expect_) diverge();
        b_.add_string(s);
    }
    [[gnu::noinline]] Open build_open(NodeKind k, std::size_t n, bool has_keys, std::uint32_t d) {
        if (expect_) diverge();
        return {b_.open(k, n, has_keys, d), b_.leaves};
    }
    [[gnu::noinline]] void build_close(Open o) {
        if (expect_) diverge();
        SpecNode& n = b_.data.nodes[o.at];
        n.size = static_cast<std::uint32_t>(b_.data.nodes.size() - o.at);
        n.num_leaves = b_.leaves - o.leaves;
    }

    // Stops matching: the matched prefix becomes the start of the built spec.
    void diverge() {
        const SpecData& e = *expect_;
        start_building();
        b_.data.nodes.assign(e.nodes.begin(), e.nodes.begin() + nodes_);
        b_.data.strings.assign(e.strings.begin(), e.strings.begin() + strings_);
        b_.data.constants.assign(e.constants.begin(), e.constants.begin() + constants_);
        b_.leaves = leaves_;
        expect_.reset();
    }
    void start_building() {
        building_ = true;
        swap_with_store();
        b_.data.nodes.reserve(128);
        b_.data.strings.reserve(8);
    }
    static SpecData& store() {
        thread_local SpecData s;
        return s;
    }
    void swap_with_store() {
        SpecData& s = store();
        b_.data.nodes.swap(s.nodes);
        b_.data.strings.swap(s.strings);
        b_.data.constants.swap(s.constants);
    }

    std::shared_ptr<const SpecData> expect_;  // null once building
    std::uint32_t nodes_ = 0, strings_ = 0, constants_ = 0, leaves_ = 0;  // matched so far
    bool building_ = false;
    SpecBuilder b_;
};
using SpecRecorder = SpecRecorderT<>;

// Where flatten puts the leaves: copies in a vector, addresses in a vector,
// or addresses in an array the caller sized (the leaf count fixed by the type).
enum class LeafOut { copies, ptrs, ptr_array };

// What flatten produces: leaves, a spec, key paths. Each feature compiles away when off.
template <class T, bool Spec, bool Path, LeafOut Out = LeafOut::copies>
struct FlattenCtx {
    // Addresses must point into the argument, never into a temporary.
    static constexpr bool ptr = Out != LeafOut::copies;
    static constexpr bool with_paths = Path;
    using leaf_out = std::conditional_t<ptr, const T*, T>;
    std::vector<leaf_out>* leaves = nullptr;  // copies, ptrs
    const T** fixed = nullptr;                // ptr_array
    std::size_t count = 0;
    struct NoSpec {};
    [[no_unique_address]] std::conditional_t<Spec, SpecRecorder, NoSpec> spec;
    KeyPath path;
    std::vector<KeyPath>* paths = nullptr;

    // Room for the leaves without regrowing: the exact count when the type
    // fixes it, else enough for a typical model's arguments (tens of tensors).
    void reserve(long fixed_leaves) {
        if (leaves) leaves->reserve(fixed_leaves >= 0 ? static_cast<std::size_t>(fixed_leaves) : 128);
    }

    // The steps below are inlined whatever the unit's inlining budget, as the
    // SpecRecorder's are: as calls, they made a Value flatten 5 to 12% slower.
    [[gnu::always_inline]] void leaf(const T& t) {
        if constexpr (Out == LeafOut::ptr_array) fixed[count] = &t;
        else if constexpr (Out == LeafOut::ptrs) leaves->push_back(&t);
        else leaves->push_back(t);
        ++count;
        if constexpr (Spec) spec.leaf();
        if constexpr (Path) paths->push_back(path);
    }
    // n consecutive leaves, at(i) giving the i-th: one capacity check and a
    // tight loop instead of n calls (most children of a model's lists are tensors).
    // Key paths need a key per leaf: callers with paths go leaf by leaf.
    template <class At>
        requires(!Path)
    void leaf_run(std::size_t n, At&& at) {
        if constexpr (Out == LeafOut::ptr_array) {
            for (std::size_t i = 0; i < n; ++i) fixed[count + i] = &at(i);
        } else {
            // One range insertion: a single capacity check (growing
            // geometrically), then the copies or addresses in a tight loop.
            auto get = [&at](std::size_t i) -> decltype(auto) {
                if constexpr (ptr) return &at(i);
                else return at(i);
            };
            leaves->insert(leaves->end(), index_iterator<decltype(get)>{&get, 0}, index_iterator<decltype(get)>{&get, n});
        }
        count += n;
        if constexpr (Spec) spec.leaves_run(n);
    }
    void none() {
        if constexpr (Spec) spec.none();
    }
    template <class C>
    void constant(const C& c) {
        if constexpr (Spec) {
            if constexpr (std::same_as<C, bool> || std::same_as<C, std::string>) spec.constant(c);
            else if constexpr (std::floating_point<C>) spec.constant(static_cast<double>(c));
            else {
                if constexpr (std::is_unsigned_v<C> && sizeof(C) >= sizeof(std::int64_t))
                    if (c > static_cast<C>(std::numeric_limits<std::int64_t>::max()))
                        throw value_error("tree_flatten: the unsigned constant " + std::to_string(c) +
                                          " does not fit in int64");
                spec.constant(static_cast<std::int64_t>(c));
            }
        }
    }
    std::uint32_t next_string() const {
        if constexpr (Spec) return spec.next_string();
        else return 0;
    }
    [[gnu::always_inline]] void add_string(std::string_view s) {
        if constexpr (Spec) spec.add_string(s);
    }
    // Returns what close() takes once the children are written.
    [[gnu::always_inline]] auto open(NodeKind k, std::size_t n, bool has_keys = false, std::uint32_t d = 0) {
        if constexpr (Spec) return spec.open(k, n, has_keys, d);
        else return 0;
    }
    template <class Open>
    [[gnu::always_inline]] void close(Open at) {
        if constexpr (Spec) spec.close(at);
    }
    void push_index(std::size_t i) {
        if constexpr (Path) path.push_back(KeyEntry::sequence(static_cast<std::int64_t>(i)));
    }
    void push_key(std::string_view k) {
        if constexpr (Path) path.push_back(KeyEntry::mapping(std::string(k)));
    }
    void push_attr(std::string_view k) {
        if constexpr (Path) path.push_back(KeyEntry::attr(std::string(k)));
    }
    void pop() {
        if constexpr (Path) path.pop_back();
    }
};

}  // namespace detail
}  // namespace yobx
