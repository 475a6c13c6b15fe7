// tensor_traits without zeros: the error names zeros and its signature.
#include <yobx/tensor.hpp>

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
    static MyTensor clone(const MyTensor& t) { return t; }
    static MyTensor empty(const std::vector<std::int64_t>& s, const MyTensor&) { return {s}; }
};

int main() { static_assert(yobx::check_tensor<MyTensor>()); }
