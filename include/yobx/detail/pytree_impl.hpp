// yobx/detail/pytree_impl.hpp — the machinery behind yobx/pytree.hpp.
//
// Every C++ type that can appear in a pytree maps to one node implementation
// (node<X>) chosen at compile time. A node writes itself into a flatten
// context (leaves, spec builder, key path) and reads itself back from a spec
// reader. The contexts switch off what a call does not need, so tree_leaves
// builds no spec and tree_flatten records no key path.
#pragma once

#include <yobx/detail/flat_tree.hpp>
#include <yobx/error.hpp>
#include <yobx/ordered_dict.hpp>
#include <yobx/tensor.hpp>
#include <yobx/treespec.hpp>

#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>
#include <boost/pfr/core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace yobx {

template <class X>
struct pytree_node;

namespace detail {

// ---------------------------------------------------------------- classification

template <class X>
concept registered_node = !requires { typename pytree_node<X>::yobx_unregistered; };

// Run-time-structured nodes (Value<T>) specialize this in value.hpp.
template <class X>
struct dynamic_node {
    using yobx_not_dynamic = void;
};
template <class X>
concept dynamic = !requires { typename dynamic_node<X>::yobx_not_dynamic; };

// A dynamic node that may hold its value as a FlatTree (Value<T>) gives it
// through `flat_tree(x)` (null when it does not).
template <class X, class L>
concept has_flat_tree = requires(const X& x) {
    { dynamic_node<X>::flat_tree(x) } -> std::same_as<const FlatTree<L>*>;
};
// A dynamic node that keeps what tree_unflatten gives it as a FlatTree:
// leaves moved in, or copied from a span.
template <class X, class L>
concept keeps_flat = requires(std::vector<L> moved, std::span<const L> copied, const TreeSpec& spec) {
    { dynamic_node<X>::from_flat(std::move(moved), spec) } -> std::same_as<X>;
    { dynamic_node<X>::from_flat(copied, spec) } -> std::same_as<X>;
};
template <class L, class X>
const FlatTree<L>* flat_tree_of(const X& x) noexcept {
    if constexpr (has_flat_tree<X, L>) return dynamic_node<X>::flat_tree(x);
    else return nullptr;
}

template <class X> struct is_optional : std::false_type {};
template <class Y> struct is_optional<std::optional<Y>> : std::true_type {};
template <class X> struct is_vector : std::false_type {};
template <class Y, class A> struct is_vector<std::vector<Y, A>> : std::true_type {};
template <class X> struct is_tuple_like : std::false_type {};
template <class... Y> struct is_tuple_like<std::tuple<Y...>> : std::true_type {};
template <class A, class B> struct is_tuple_like<std::pair<A, B>> : std::true_type {};
template <class Y, std::size_t N> struct is_tuple_like<std::array<Y, N>> : std::true_type {};
template <class X> struct is_std_array : std::false_type {};
template <class Y, std::size_t N> struct is_std_array<std::array<Y, N>> : std::true_type {};
template <class X> struct is_string_map : std::false_type {};
template <class V, class C, class A> struct is_string_map<std::map<std::string, V, C, A>> : std::true_type {};
template <class V, class H, class E, class A> struct is_string_map<std::unordered_map<std::string, V, H, E, A>> : std::true_type {};
template <class V> struct is_string_map<ordered_dict<V>> : std::true_type {};
template <class X> struct is_unordered : std::false_type {};
template <class V, class H, class E, class A> struct is_unordered<std::unordered_map<std::string, V, H, E, A>> : std::true_type {};

// Character types are text, not numbers; int8_t/uint8_t (signed/unsigned char) are numbers.
template <class X>
concept char_like = std::same_as<X, char> || std::same_as<X, wchar_t> || std::same_as<X, char8_t> || std::same_as<X, char16_t> ||
                    std::same_as<X, char32_t>;
template <class X>
concept scalar = std::same_as<X, bool> || (std::integral<X> && !char_like<X>) || std::floating_point<X> ||
                 std::same_as<X, std::string>;

enum class Kind { custom, dynamic, leaf, optional, constant, list, tuple, dict, hana, aggregate, unsupported };

template <class X>
consteval Kind kind_of() {
    if constexpr (registered_node<X>) return Kind::custom;
    else if constexpr (dynamic<X>) return Kind::dynamic;
    else if constexpr (has_tensor_traits<X>) return Kind::leaf;
    else if constexpr (is_optional<X>::value) return Kind::optional;
    else if constexpr (scalar<X>) return Kind::constant;
    else if constexpr (is_vector<X>::value) return Kind::list;
    else if constexpr (is_tuple_like<X>::value) return Kind::tuple;
    else if constexpr (is_string_map<X>::value) return Kind::dict;
    else if constexpr (boost::hana::Struct<X>::value) return Kind::hana;
    else if constexpr (std::is_aggregate_v<X> && std::is_class_v<X>) return Kind::aggregate;
    else return Kind::unsupported;
}

template <class X, Kind K = kind_of<X>()>
struct node;

// The single tensor type of a structure: void when it holds no tensor.
template <class A, class B>
struct common_leaf {
    static_assert(std::is_void_v<A> || std::is_void_v<B> || std::is_same_v<A, B>,
                  "yobx pytree: a structure mixes two tensor types; all leaves must have one type");
    using type = std::conditional_t<std::is_void_v<A>, B, A>;
};
template <class... X>
struct leaf_of_all {
    using type = void;
};
template <class X, class... R>
struct leaf_of_all<X, R...> {
    using type = typename common_leaf<typename node<X>::leaf_type, typename leaf_of_all<R...>::type>::type;
};

// Leaf count fixed by the type (no vector, optional, map or dynamic value inside), or -1.
constexpr long fixed_sum(std::initializer_list<long> counts) {
    long s = 0;
    for (long c : counts) {
        if (c < 0) return -1;
        s += c;
    }
    return s;
}

// ---------------------------------------------------------------- flatten contexts

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
class SpecRecorder {
public:
    // An open container: its node and the leaf count when it was opened.
    struct Open {
        std::uint32_t at;
        std::uint32_t leaves;
    };

    SpecRecorder() : expect_(TreeSpec::last_interned()) {
        if (!expect_) start_building();
    }
    ~SpecRecorder() {
        if (!building_) return;
        b_.data.nodes.clear();
        b_.data.strings.clear();
        b_.data.constants.clear();
        // A huge structure does not pin its arrays for the thread's lifetime.
        if (b_.data.nodes.capacity() > max_kept_nodes) b_.data.nodes = {};
        swap_with_store();
    }
    SpecRecorder(const SpecRecorder&) = delete;
    SpecRecorder& operator=(const SpecRecorder&) = delete;

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

// ---------------------------------------------------------------- unflatten reader

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

// ---------------------------------------------------------------- node kinds

template <class X>
struct node<X, Kind::unsupported> {
    static_assert(sizeof(X) == 0,
                  "yobx pytree: this type is not a pytree node. A pytree holds tensors (types with a "
                  "yobx::tensor_traits specialization), std::optional, std::vector, std::array, std::tuple, "
                  "std::pair, string-keyed std::map/std::unordered_map/yobx::ordered_dict, bool/integer/"
                  "floating/std::string scalars, aggregates, Boost.Hana structs, and classes registered by "
                  "specializing yobx::pytree_node<X>.");
    using leaf_type = void;
    static constexpr long fixed = -1;
};

template <class X>
struct node<X, Kind::leaf> {
    static_assert(check_tensor<X>());
    using leaf_type = X;
    static constexpr long fixed = 1;
    template <class Ctx>
    static void flatten(const X& x, Ctx& c) { c.leaf(x); }
    template <class R>
    static X unflatten(R& r) {
        r.expect(NodeKind::leaf, "a leaf (tensor)");
        return r.take_leaf();
    }
};

template <class Y>
struct node<std::optional<Y>, Kind::optional> {
    using leaf_type = typename node<Y>::leaf_type;
    static constexpr long fixed = -1;
    template <class Ctx>
    static void flatten(const std::optional<Y>& x, Ctx& c) {
        if (x) node<Y>::flatten(*x, c);
        else c.none();
    }
    template <class R>
    static std::optional<Y> unflatten(R& r) {
        if (r.cur().kind == NodeKind::none) {
            r.advance();
            return std::nullopt;
        }
        return node<Y>::unflatten(r);
    }
};

template <class X>
struct node<X, Kind::constant> {
    using leaf_type = void;
    static constexpr long fixed = 0;
    template <class Ctx>
    static void flatten(const X& x, Ctx& c) { c.constant(x); }

    static std::string_view expected() {
        if constexpr (std::same_as<X, bool>) return "a bool constant";
        else if constexpr (std::same_as<X, std::string>) return "a str constant";
        else if constexpr (std::floating_point<X>) return "a float constant";
        else return "an int constant";
    }
    template <class R>
    static X unflatten(R& r) {
        r.expect(NodeKind::constant, expected());
        const Constant& v = r.data().constants[r.cur().data];
        X out{};
        if constexpr (std::same_as<X, bool>) {
            if (!std::holds_alternative<bool>(v)) r.mismatch(expected());
            out = std::get<bool>(v);
        } else if constexpr (std::same_as<X, std::string>) {
            if (!std::holds_alternative<std::string>(v)) r.mismatch(expected());
            out = std::get<std::string>(v);
        } else if constexpr (std::floating_point<X>) {
            if (!std::holds_alternative<double>(v)) r.mismatch(expected());
            out = static_cast<X>(std::get<double>(v));
        } else {
            if (!std::holds_alternative<std::int64_t>(v)) r.mismatch(expected());
            const std::int64_t i = std::get<std::int64_t>(v);
            if (!std::in_range<X>(i))
                throw value_error("tree_unflatten: the constant " + std::to_string(i) + " at " + r.where() +
                                  " does not fit in the requested integer type");
            out = static_cast<X>(i);
        }
        r.advance();
        return out;
    }
};

// The elements of a std::vector or std::array, whose type is one: a run of
// leaves when they are tensors and no key path is recorded, else one by one.
template <class X, class Ctx>
void flatten_elements(const X& x, Ctx& c) {
    using Y = typename X::value_type;
    if constexpr (kind_of<Y>() == Kind::leaf && !Ctx::with_paths) {
        // Through the elements' address, not the container (see dynamic_node<Value>::children).
        c.leaf_run(x.size(), [run = x.data()](std::size_t i) -> const Y& { return run[i]; });
    } else {
        for (std::size_t i = 0; i < x.size(); ++i) {
            c.push_index(i);
            node<Y>::flatten(x[i], c);
            c.pop();
        }
    }
}

template <class Y, class A>
struct node<std::vector<Y, A>, Kind::list> {
    using leaf_type = typename node<Y>::leaf_type;
    static constexpr long fixed = -1;
    template <class Ctx>
    static void flatten(const std::vector<Y, A>& x, Ctx& c) {
        const auto at = c.open(NodeKind::list, x.size());
        flatten_elements(x, c);
        c.close(at);
    }
    template <class R>
    static std::vector<Y, A> unflatten(R& r) {
        r.expect(NodeKind::list, "a list (std::vector)");
        if constexpr (kind_of<Y>() == Kind::leaf)
            if (r.children_are_leaves()) return r.template take_children_leaves<std::vector<Y, A>>();
        const std::size_t n = r.cur().num_children;
        r.advance();
        std::vector<Y, A> out;
        out.reserve(n);
        for (std::size_t i = 0; i < n; ++i) out.push_back(node<Y>::unflatten(r));
        return out;
    }
};

template <class X>
struct node<X, Kind::tuple> {
    static constexpr std::size_t N = std::tuple_size_v<X>;
    template <std::size_t... I>
    static auto leaf_helper(std::index_sequence<I...>) -> typename leaf_of_all<std::tuple_element_t<I, X>...>::type;
    template <std::size_t... I>
    static constexpr long fixed_helper(std::index_sequence<I...>) {
        return fixed_sum({node<std::tuple_element_t<I, X>>::fixed...});
    }
    using leaf_type = decltype(leaf_helper(std::make_index_sequence<N>{}));
    static constexpr long fixed = fixed_helper(std::make_index_sequence<N>{});

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto at = c.open(NodeKind::tuple, N);
        if constexpr (is_std_array<X>::value) {
            flatten_elements(x, c);  // one element type: a loop, not N copies of the element's code
        } else {
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((c.push_index(I), node<std::tuple_element_t<I, X>>::flatten(std::get<I>(x), c), c.pop()), ...);
            }(std::make_index_sequence<N>{});
        }
        c.close(at);
    }
    template <class R>
    static X unflatten(R& r) {
        if (!r.at_container(NodeKind::tuple, N)) r.mismatch("a tuple of " + std::to_string(N));
        r.advance();
        // Braced initialization evaluates the children left to right, in spec order.
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return X{node<std::tuple_element_t<I, X>>::unflatten(r)...};
        }(std::make_index_sequence<N>{});
    }
};

template <class X>
struct node<X, Kind::dict> {
    using V = typename X::mapped_type;
    using leaf_type = typename node<V>::leaf_type;
    static constexpr long fixed = -1;

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        if constexpr (is_unordered<X>::value) {
            // No order to follow: sorted keys make the spec reproducible.
            std::vector<const typename X::value_type*> items;
            items.reserve(x.size());
            for (const auto& kv : x) items.push_back(&kv);
            std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
            emit(items, c, [](auto* p) -> const auto& { return *p; });
        } else {
            emit(x, c, [](const auto& kv) -> const auto& { return kv; });
        }
    }
    template <class Items, class Ctx, class Get>
    static void emit(const Items& items, Ctx& c, Get get) {
        const auto d = c.next_string();
        for (const auto& it : items) c.add_string(get(it).first);
        const auto at = c.open(NodeKind::dict, items.size(), true, d);
        for (const auto& it : items) {
            const auto& [k, v] = get(it);
            c.push_key(k);
            node<V>::flatten(v, c);
            c.pop();
        }
        c.close(at);
    }
    template <class R>
    static X unflatten(R& r) {
        r.expect(NodeKind::dict, "a dict (string-keyed map)");
        const SpecNode n = r.cur();
        r.advance();
        X out;
        for (std::uint32_t i = 0; i < n.num_children; ++i) {
            const std::string& key = r.data().strings[n.key_index(i)];
            out.insert_or_assign(key, node<V>::unflatten(r));
        }
        return out;
    }
};

// Boost.Hana structs: named fields, flattened like a dict whose keys are the field names.
template <class X>
struct node<X, Kind::hana> {
    template <class Acc>
    using field_t = std::remove_cvref_t<decltype(boost::hana::second(std::declval<Acc>())(std::declval<X&>()))>;
    using accessors = decltype(boost::hana::accessors<X>());
    template <class... Acc>
    static constexpr std::size_t count(boost::hana::tuple<Acc...>) { return sizeof...(Acc); }
    static constexpr std::size_t N = count(accessors{});

    template <class... Acc>
    static auto leaf_helper(boost::hana::tuple<Acc...>) -> typename leaf_of_all<field_t<Acc>...>::type;
    template <class... Acc>
    static constexpr long fixed_helper(boost::hana::tuple<Acc...>) { return fixed_sum({node<field_t<Acc>>::fixed...}); }
    using leaf_type = decltype(leaf_helper(std::declval<accessors>()));
    static constexpr long fixed = fixed_helper(accessors{});

    template <class Acc>
    static std::string_view name_of(const Acc& acc) {
        return boost::hana::to<char const*>(boost::hana::first(acc));
    }

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto d = c.next_string();
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) { c.add_string(name_of(acc)); });
        const auto at = c.open(NodeKind::dict, N, true, d);
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
            c.push_key(name_of(acc));
            node<field_t<decltype(acc)>>::flatten(boost::hana::second(acc)(x), c);
            c.pop();
        });
        c.close(at);
    }

    // Fields are matched by name, so a dict built elsewhere (keyword arguments
    // in another order, optional fields left out) converts back.
    template <class R>
    static X unflatten(R& r) {
        static_assert(std::is_default_constructible_v<X>,
                      "yobx pytree: a Boost.Hana struct must be default constructible to be unflattened");
        r.expect(NodeKind::dict, "a dict with the struct's field names");
        const SpecNode n = r.cur();
        r.advance();
        X out{};
        std::array<bool, N> seen{};
        for (std::uint32_t i = 0; i < n.num_children; ++i) {
            const std::string& key = r.data().strings[n.key_index(i)];
            bool found = false;
            std::size_t index = 0;
            boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
                if (!found && name_of(acc) == key) {
                    found = true;
                    seen[index] = true;
                    boost::hana::second(acc)(out) = node<field_t<decltype(acc)>>::unflatten(r);
                }
                if (!found) ++index;
            });
            if (!found)
                throw value_error("tree_unflatten: the dict key " + detail::repr_string(key) +
                                  " is not a field of the requested struct (fields: " + field_list() + ")");
        }
        std::size_t index = 0;
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
            if (!seen[index] && !is_optional<field_t<decltype(acc)>>::value)
                throw value_error("tree_unflatten: the dict has no key '" + std::string(name_of(acc)) +
                                  "' for a required field of the requested struct (fields: " + field_list() + ")");
            ++index;
        });
        return out;
    }

    static std::string field_list() {
        std::string s;
        boost::hana::for_each(boost::hana::accessors<X>(), [&](auto acc) {
            if (!s.empty()) s += ", ";
            s += name_of(acc);
        });
        return s;
    }
};

// Aggregates through Boost.PFR: positional fields, flattened like a tuple.
template <class X>
struct node<X, Kind::aggregate> {
    static constexpr std::size_t N = boost::pfr::tuple_size_v<X>;
    template <std::size_t... I>
    static auto leaf_helper(std::index_sequence<I...>) -> typename leaf_of_all<boost::pfr::tuple_element_t<I, X>...>::type;
    template <std::size_t... I>
    static constexpr long fixed_helper(std::index_sequence<I...>) {
        return fixed_sum({node<boost::pfr::tuple_element_t<I, X>>::fixed...});
    }
    using leaf_type = decltype(leaf_helper(std::make_index_sequence<N>{}));
    static constexpr long fixed = fixed_helper(std::make_index_sequence<N>{});

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto at = c.open(NodeKind::tuple, N);
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            ((c.push_index(I), node<boost::pfr::tuple_element_t<I, X>>::flatten(boost::pfr::get<I>(x), c), c.pop()), ...);
        }(std::make_index_sequence<N>{});
        c.close(at);
    }
    template <class R>
    static X unflatten(R& r) {
        if (!r.at_container(NodeKind::tuple, N)) r.mismatch("a tuple of " + std::to_string(N) + " (the aggregate's fields)");
        r.advance();
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return X{node<boost::pfr::tuple_element_t<I, X>>::unflatten(r)...};
        }(std::make_index_sequence<N>{});
    }
};

template <class X>
struct node<X, Kind::custom> {
    using P = pytree_node<X>;
    static_assert(requires { std::string_view(P::type_name); },
                  "yobx::pytree_node<X> must define `static constexpr std::string_view type_name`");
    static_assert(requires(const X& x) { P::flatten(x); },
                  "yobx::pytree_node<X> must define `static auto flatten(const X&)` returning a std::tuple of children");
    using children_t = std::remove_cvref_t<decltype(P::flatten(std::declval<const X&>()))>;
    static constexpr std::size_t N = std::tuple_size_v<children_t>;
    template <std::size_t I>
    using child_t = std::remove_cvref_t<std::tuple_element_t<I, children_t>>;
    static constexpr bool with_keys = requires(const X& x) { P::flatten_with_keys(x); };
    static constexpr bool refs_only = []<std::size_t... I>(std::index_sequence<I...>) {
        return (std::is_lvalue_reference_v<std::tuple_element_t<I, children_t>> && ...);
    }(std::make_index_sequence<N>{});

    template <std::size_t... I>
    static auto leaf_helper(std::index_sequence<I...>) -> typename leaf_of_all<child_t<I>...>::type;
    template <std::size_t... I>
    static constexpr long fixed_helper(std::index_sequence<I...>) { return fixed_sum({node<child_t<I>>::fixed...}); }
    using leaf_type = decltype(leaf_helper(std::make_index_sequence<N>{}));
    static constexpr long fixed = fixed_helper(std::make_index_sequence<N>{});

    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        const auto d = c.next_string();
        c.add_string(P::type_name);
        if constexpr (with_keys) {
            const auto named = P::flatten_with_keys(x);
            static_assert(std::tuple_size_v<std::remove_cvref_t<decltype(named)>> == N,
                          "yobx::pytree_node<X>::flatten_with_keys must return as many children as flatten");
            std::apply([&](const auto&... nc) { (c.add_string(nc.name), ...); }, named);
            const auto at = c.open(NodeKind::custom, N, true, d);
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((c.push_attr(std::get<I>(named).name), node<child_t<I>>::flatten(std::get<I>(named).child, c), c.pop()), ...);
            }(std::make_index_sequence<N>{});
            c.close(at);
        } else {
            if constexpr (Ctx::ptr)
                static_assert(refs_only, "yobx::tree_flatten_ptrs, tree_leaf_ptrs and tree_leaves_fixed need "
                                         "pytree_node<X>::flatten to return references to the children (std::tie), "
                                         "not copies");
            const auto children = P::flatten(x);
            const auto at = c.open(NodeKind::custom, N, false, d);
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                ((c.push_index(I), node<child_t<I>>::flatten(std::get<I>(children), c), c.pop()), ...);
            }(std::make_index_sequence<N>{});
            c.close(at);
        }
    }

    template <class R>
    static X unflatten(R& r) {
        if (!r.at_container(NodeKind::custom, N) || r.data().strings[r.cur().data] != P::type_name)
            r.mismatch("a " + std::string(P::type_name) + " node with " + std::to_string(N) + " children");
        r.advance();
        // Children in spec order (braced init), then handed to the user's unflatten.
        auto children = [&]<std::size_t... I>(std::index_sequence<I...>) {
            return std::tuple<child_t<I>...>{node<child_t<I>>::unflatten(r)...};
        }(std::make_index_sequence<N>{});
        return std::apply([](auto&&... ch) { return P::unflatten(std::move(ch)...); }, std::move(children));
    }
};

// A dynamic node that converts its value before flattening it (c10::IValue
// to a Value) hands out leaves of a temporary: tree_flatten_ptrs needs nodes
// that declare `leaves_in_place = true` (Value<T> does).
template <class X>
concept leaves_in_place = requires {
    requires dynamic_node<X>::leaves_in_place;
};

template <class X>
struct node<X, Kind::dynamic> : dynamic_node<X> {
    template <class Ctx>
    static void flatten(const X& x, Ctx& c) {
        static_assert(!Ctx::ptr || leaves_in_place<X>,
                      "yobx::tree_flatten_ptrs: this dynamic node flattens a converted copy of its value, so "
                      "the addresses of its leaves would dangle; use tree_flatten");
        dynamic_node<X>::flatten(x, c);
    }
};

[[noreturn, gnu::cold, gnu::noinline]] inline void leaf_count_error(std::size_t given, const TreeSpec& spec) {
    throw value_error("tree_unflatten: the spec has " + std::to_string(spec.num_leaves()) + " leaves but " +
                      std::to_string(given) + " leaves were given");
}
// The comparison inline (it shares its reads of the spec with what follows), the message out of line.
inline void check_leaf_count(std::size_t given, const TreeSpec& spec) {
    if (given != spec.num_leaves()) [[unlikely]]
        leaf_count_error(given, spec);
}

// The tensor type of X, or T when given explicitly.
template <class T, class X>
struct resolve_leaf {
    using type = T;
};
template <class X>
struct resolve_leaf<void, X> {
    using type = typename node<X>::leaf_type;
    static_assert(!std::is_void_v<type>,
                  "yobx pytree: this structure holds no tensor type to deduce; name it: tree_flatten<MyTensor>(x)");
};

// The leaves (copies or addresses, as Out says) and the interned spec of x:
// tree_flatten and tree_flatten_ptrs.
template <LeafOut Out, class L, class X>
auto flatten_with_spec(const X& x) {
    using C = FlattenCtx<L, true, false, Out>;
    std::vector<typename C::leaf_out> leaves;
    if (const FlatTree<L>* f = flat_tree_of<L>(x)) {
        if constexpr (C::ptr) {
            leaves.reserve(f->leaves().size());
            for (const L& l : f->leaves()) leaves.push_back(&l);
        } else {
            leaves = f->copy_leaves();
        }
        return std::pair<std::vector<typename C::leaf_out>, TreeSpec>(std::move(leaves), f->spec());
    }
    C c;
    c.leaves = &leaves;
    c.reserve(node<X>::fixed);
    node<X>::flatten(x, c);
    return std::pair<std::vector<typename C::leaf_out>, TreeSpec>(std::move(leaves), c.spec.finish());
}

}  // namespace detail
}  // namespace yobx
