// Addresses of leaves that a registered node's flatten returns by value would
// point into a temporary: tree_flatten_ptrs refuses the node at compile time.
#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>

#include <tuple>

struct Pair {
    yobx::DenseTensor a, b;
};

template <>
struct yobx::pytree_node<Pair> {
    static constexpr std::string_view type_name = "Pair";
    static auto flatten(const Pair& p) { return std::tuple{p.a, p.b}; }  // copies, not std::tie
    static Pair unflatten(yobx::DenseTensor a, yobx::DenseTensor b) { return {std::move(a), std::move(b)}; }
};

int main() {
    auto [ptrs, spec] = yobx::tree_flatten_ptrs(Pair{});
    return static_cast<int>(ptrs.size() + spec.num_leaves());
}
