// A type with no tensor_traits specialization used where a tensor is required.
#include <yobx/tensor.hpp>

struct NotATensor {};

int main() { static_assert(yobx::check_tensor<NotATensor>()); }
