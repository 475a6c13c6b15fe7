// A NodeContext keeps its attribute map by address: built from a temporary map, it would read
// a destroyed map in the rule. The overload for a temporary is deleted.
#include <yobx/onnx/node_context.hpp>

int main() {
    yobx::ShapeEnv env;
    yobx::onnx::NodeContext ctx(env, yobx::BroadcastPolicy::new_symbol, "", "Relu", "n", 18, {},
                                yobx::onnx::Attributes{}, 1);
    return static_cast<int>(ctx.output_count()) - 1;
}
