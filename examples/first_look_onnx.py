"""The README's first look from Python: an ONNX model's shapes and memory at every size
(ctest runs it and compares its output). A KV cache: the new token's keys concatenated to
the past ones. Run with the build's python/ on PYTHONPATH."""
from onnx import TensorProto, helper
import yobx.onnx

f = TensorProto.FLOAT
inputs = [helper.make_tensor_value_info("x", f, ["batch", "seq", 64]),
          helper.make_tensor_value_info("past", f, ["batch", "past_len", 64])]
outputs = [helper.make_tensor_value_info(name, f, None) for name in ("y", "present")]
nodes = [helper.make_node("Concat", ["past", "x"], ["present"], axis=1),
         helper.make_node("Softmax", ["present"], ["y"], axis=-1)]
model = helper.make_model(helper.make_graph(nodes, "cache", inputs, outputs), opset_imports=[helper.make_opsetid("", 17)])

shaped = yobx.onnx.infer_shapes(model)  # a new ModelProto, every value typed
print([d.dim_param or d.dim_value for d in shaped.graph.output[0].type.tensor_type.shape.dim])
memory = yobx.onnx.memory(model, at={"batch": 8, "seq": 1, "past_len": 4095})
print(memory["at"]["peak"], "bytes at batch 8 after 4095 tokens")
print({g["dim"]: g["per_unit"] for g in memory["growth"]})
