// A fixed-size flatten of a type whose leaf count is only known at run time.
#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>

int main() {
    std::vector<yobx::DenseTensor> v(3);
    auto leaves = yobx::tree_leaves_fixed(v);
    return static_cast<int>(leaves.size());
}
