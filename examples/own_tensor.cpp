// A user's own tensor type end to end: specialize yobx::tensor_traits, then
// every yobx template works with it.
#include <yobx/pytree.hpp>
#include <yobx/value.hpp>

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

// The user's tensor: a handle to a buffer somewhere (a GPU, a file...).
struct DeviceTensor {
    std::string dtype;                 // "float16", "int64", ...
    std::vector<std::int64_t> sizes;
    std::shared_ptr<std::vector<char>> buffer;
};

template <>
struct yobx::tensor_traits<DeviceTensor> {
    static const std::vector<std::int64_t>& shape(const DeviceTensor& t) { return t.sizes; }
    static const std::string& dtype(const DeviceTensor& t) { return t.dtype; }
    static DeviceTensor clone(const DeviceTensor& t) {
        return {t.dtype, t.sizes, std::make_shared<std::vector<char>>(*t.buffer)};
    }
    static DeviceTensor empty(const std::vector<std::int64_t>& shape, const DeviceTensor& like) {
        return {like.dtype, shape, std::make_shared<std::vector<char>>()};
    }
    static DeviceTensor zeros(const std::vector<std::int64_t>& shape, const DeviceTensor& like) {
        return {like.dtype, shape, std::make_shared<std::vector<char>>()};
    }
};

static_assert(yobx::Tensor<DeviceTensor>);

int main() {
    auto make = [](std::vector<std::int64_t> s) { return DeviceTensor{"float16", std::move(s), std::make_shared<std::vector<char>>(4)}; };
    std::pair<DeviceTensor, std::vector<DeviceTensor>> args{make({1, 3}), {make({2}), make({2, 2})}};

    auto [leaves, spec] = yobx::tree_flatten(args);
    std::cout << leaves.size() << " leaves, spec " << spec << "\n";

    auto doubled = yobx::tree_map([](const DeviceTensor& t) { return yobx::clone(t); }, args);
    std::cout << "clone shares the buffer: " << std::boolalpha << (doubled.first.buffer == args.first.buffer) << "\n";

    yobx::Value<DeviceTensor> v = yobx::to_value(args);
    std::cout << v << "\n";
    return 0;
}
