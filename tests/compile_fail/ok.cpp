// The control case of the compile-fail harness: a complete tensor type and a
// valid pytree build.
#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>

int main() {
    static_assert(yobx::check_tensor<yobx::DenseTensor>());
    auto leaves = yobx::tree_leaves(std::vector<yobx::DenseTensor>(2));
    return leaves.size() == 2 ? 0 : 1;
}
