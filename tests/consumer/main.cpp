// Uses yobx through whichever way the consumer check set up.
#include <yobx/dense_tensor.hpp>
#include <yobx/yobx.hpp>

#include <iostream>
#include <map>
#include <string>
#include <vector>

int main() {
    const auto t = yobx::DenseTensor::zeros({2, 3}, yobx::DType::float32);
    std::map<std::string, std::vector<yobx::DenseTensor>> args{{"past", {t, t}}, {"x", {t}}};
    auto [leaves, spec] = yobx::tree_flatten(args);
    const auto back = yobx::tree_unflatten<decltype(args)>(leaves, spec);
    if (back.at("past").size() != 2) return 1;
    std::cout << "consumer ok: " << leaves.size() << " leaves, " << spec << "\n";
    return 0;
}
