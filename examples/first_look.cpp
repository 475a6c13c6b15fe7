// The README's first example: a model's forward called three times under an
// InputObserver, then the arguments and the dynamic shapes torch.export needs.
#include <yobx/dense_tensor.hpp>
#include <yobx/observer.hpp>

#include <cstdint>
#include <iostream>

using yobx::DenseTensor;

// The model: any callable on tensors (here, it returns its input ids).
DenseTensor forward_fn(const DenseTensor& input_ids, const DenseTensor& /*attention_mask*/) { return input_ids; }

DenseTensor ids(std::int64_t batch, std::int64_t length) { return DenseTensor::zeros({batch, length}, yobx::DType::int64); }

int main() {
    yobx::InputObserver<DenseTensor> observer;
    auto forward = observer.wrap(forward_fn, yobx::Signature{yobx::param("input_ids"), yobx::param("attention_mask")});
    for (std::int64_t length : {3, 5, 8}) forward(ids(2, length), ids(2, length));  // the program's real calls
    std::cout << "export arguments: " << observer.infer_arguments() << "\n";
    std::cout << "dynamic_shapes = " << observer.infer_dynamic_shapes({.dim_names = true}).to_python() << "\n";
}
