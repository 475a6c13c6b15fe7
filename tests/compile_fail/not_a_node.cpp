// A class that is neither a tensor, a container, an aggregate, a Hana struct
// nor registered: the error says what a pytree may hold.
#include <yobx/dense_tensor.hpp>
#include <yobx/pytree.hpp>

class Opaque {
public:
    Opaque() = default;

private:
    yobx::DenseTensor t_;
};

int main() {
    auto [leaves, spec] = yobx::tree_flatten<yobx::DenseTensor>(Opaque{});
    return static_cast<int>(leaves.size());
}
