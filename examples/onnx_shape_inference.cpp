// The examples of the ONNX proposal "Symbolic Shape Inference and Partial Data
// Propagation", worked with yobx: symbolic results instead of "?", values of
// shape tensors propagated to Reshape, fresh symbols where nothing else works.
#include <yobx/shape_inference.hpp>

#include <iostream>

using namespace yobx;

int main() {
    ShapeEnv env;
    ShapeInference si(env);
    const SymInt M = env.create_symbol("M", 3, ValueRange::at_least(1));
    const SymInt N = env.create_symbol("N", 5, ValueRange::at_least(1));

    std::cout << "== symbolic arithmetic instead of '?'\n";
    const SymTensor p({5, 2}, DType::float32), q({N, 2}, DType::float32);
    std::cout << "Concat((5, 2), (N, 2), axis=0) -> " << si.concat({p, q}, 0) << "\n";

    std::cout << "\n== one symbol flows through unary ops\n";
    const SymTensor X = si.concat({SymTensor({M}, DType::float32), SymTensor({N}, DType::float32)}, 0);
    const SymTensor Y = si.unary(X);  // Op1
    const SymTensor Z = si.unary(Y);  // Op2
    std::cout << "X = " << X << "\nY = " << Y << "\nZ = " << Z << "\n";
    std::cout << "X + Z -> " << si.add(X, Z) << "  (no question asked: same expression)\n";

    std::cout << "\n== partial data propagation: Shape -> Gather -> Unsqueeze -> Concat -> Reshape\n";
    const SymInt batch = env.create_symbol("batch", 2, ValueRange::at_least(1));
    const SymInt seq = env.create_symbol("seq", 7, ValueRange::at_least(1));
    const SymTensor x({batch, seq, 4, 16}, DType::float32);
    const SymTensor shape = si.shape(x);
    const SymTensor b = si.unsqueeze(si.gather(shape, SymTensor::scalar(0)), {0});
    const SymTensor s = si.unsqueeze(si.gather(shape, SymTensor::scalar(1)), {0});
    const SymTensor target = si.concat({b, s, SymTensor::from_values({-1})}, 0);
    std::cout << "Shape(x)            = " << shape << "\n";
    std::cout << "Concat(b, s, [-1])  = " << target << "\n";
    std::cout << "Reshape(x, target)  = " << si.reshape(x, target) << "\n";
    const SymTensor half = si.div(si.size(x), SymTensor::scalar(2));
    std::cout << "Div(Size(x), 2)     = " << half << "\n";

    std::cout << "\n== data-dependent output: a fresh symbol, the rank kept\n";
    const SymTensor nz = si.nonzero(x);
    std::cout << "NonZero(x)          = " << nz << "\n";
    std::cout << "Transpose(NonZero)  = " << si.transpose(nz) << "\n";
    const SymTensor unknown_shape({2}, DType::int64);  // values nobody knows
    std::cout << "Reshape(x, ?)       = " << si.reshape(x, unknown_shape) << "\n";

    std::cout << "\n== broadcasting M with N: ONNX's rule is a new symbol\n";
    ShapeInference onnx(env, BroadcastPolicy::new_symbol);
    std::cout << "Add([M], [N])       = " << onnx.add(SymTensor({M}, DType::float32), SymTensor({N}, DType::float32)) << "\n";
}
