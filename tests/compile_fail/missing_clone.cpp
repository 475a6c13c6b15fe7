// tensor_traits without clone: the error names clone.
#include <yobx/pytree.hpp>

#include <cstdint>
#include <string>
#include <vector>

struct MyTensor {
    std::vector<std::int64_t> shape;
};

template <>
struct yobx::tensor_traits<MyTensor> {
    static const std::vector<std::int64_t>& shape(const MyTensor& t) { return t.shape; }
    static std::string dtype(const MyTensor&) { return "float32"; }
    static MyTensor empty(const std::vector<std::int64_t>& s, const MyTensor&) { return {s}; }
    static MyTensor zeros(const std::vector<std::int64_t>& s, const MyTensor&) { return {s}; }
};

int main() {
    auto leaves = yobx::tree_leaves(std::vector<MyTensor>(2));
    return static_cast<int>(leaves.size());
}
