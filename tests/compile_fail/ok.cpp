// The control case of the compile-fail harness: a complete tensor type and a
// valid pytree build.
#include <yobx/dense_tensor.hpp>
#include <yobx/onnx/node_context.hpp>
#include <yobx/observer.hpp>
#include <yobx/pytree.hpp>

int main() {
    static_assert(yobx::check_tensor<yobx::DenseTensor>());
    auto leaves = yobx::tree_leaves(std::vector<yobx::DenseTensor>(2));
    // The observer part of the discrepancies_without_values case, with a tensor that has to_doubles.
    yobx::InputObserver<yobx::DenseTensor> observer;
    auto f = observer.wrap([](const yobx::DenseTensor& x) { return x; }, yobx::Signature{yobx::param("x")});
    f(leaves[0]);
    if (observer.check_discrepancies([](const yobx::Value<yobx::DenseTensor>& a) { return a[0][0]; }).size() != 1) return 1;
    // The node_context_temporary case with an attribute map that outlives the context.
    const yobx::onnx::Attributes attributes;
    yobx::ShapeEnv env;
    yobx::onnx::NodeContext ctx(env, yobx::BroadcastPolicy::new_symbol, "", "Relu", "n", 18, {}, attributes, 1);
    return leaves.size() == 2 && ctx.output_count() == 1 ? 0 : 1;
}
