// A dynamic node that flattens a converted copy of its value (as the LibTorch
// adapter does for c10::IValue) cannot hand out addresses of its leaves.
#include <yobx/dense_tensor.hpp>
#include <yobx/value.hpp>

struct Boxed {
    yobx::DenseTensor t;
};

template <>
struct yobx::detail::dynamic_node<Boxed> {
    using leaf_type = yobx::DenseTensor;
    static constexpr long fixed = -1;
    template <class Ctx>
    static void flatten(const Boxed& b, Ctx& c) {
        dynamic_node<yobx::Value<yobx::DenseTensor>>::flatten(yobx::Value<yobx::DenseTensor>(b.t), c);
    }
};

int main() {
    auto [ptrs, spec] = yobx::tree_flatten_ptrs(Boxed{});
    return static_cast<int>(ptrs.size() + spec.num_leaves());
}
