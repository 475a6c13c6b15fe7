"""yobx's ONNX shape inference from Python, in-process (ctest runs it and compares its output).

A model built with onnx.helper: a strided convolution, then a Reshape whose target
comes from Shape -> Gather -> Concat, and an Add of two inputs whose dims nothing
relates. yobx.onnx.infer_shapes writes every value's shape, as expressions of the
inputs' dims; evaluate_shapes gives them at given sizes; yobx.sym computes with them.
Run with the build's python/ on PYTHONPATH:  PYTHONPATH=build/dev/python python3 examples/onnx_in_python.py
"""
import onnx
from onnx import TensorProto, helper

import yobx.onnx
from yobx import sym


def make_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 8])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["m", 8])
    inits = [helper.make_tensor("w", TensorProto.FLOAT, [16, 3, 3, 3], [0.0] * 432),
             helper.make_tensor("zero", TensorProto.INT64, [1], [0]),
             helper.make_tensor("minus_one", TensorProto.INT64, [1], [-1])]
    nodes = [helper.make_node("Conv", ["x", "w"], ["conv"], name="conv", strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Shape", ["conv"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "zero"], ["batch_size"], name="gather"),
             helper.make_node("Concat", ["batch_size", "minus_one"], ["target"], name="concat", axis=0),
             helper.make_node("Reshape", ["conv", "target"], ["y"], name="reshape"),
             helper.make_node("Add", ["a", "b"], ["z"], name="add")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None), helper.make_tensor_value_info("z", TensorProto.FLOAT, None)]
    return helper.make_model(helper.make_graph(nodes, "example", [x, a, b], outputs, inits),
                             opset_imports=[helper.make_opsetid("", 17)])


def dims(value_info):
    return "[" + ", ".join(d.dim_param or str(d.dim_value) for d in value_info.type.tensor_type.shape.dim) + "]"


model = make_model()
shaped, report = yobx.onnx.infer_shapes(model, with_report=True)
for v in list(shaped.graph.value_info) + list(shaped.graph.output):
    print(f"{v.name}: {dims(v)}")
print(f"{report['values']} values, {report['dims']} dims: {report['constant']} constant, {report['symbolic']} symbolic, "
      f"{report['fresh']} fresh")
for f in report["fresh_symbols"]:
    print(f"fresh {f['symbol']} at {f['node']}: {f['why']}")

# the dims at given sizes
sizes = yobx.onnx.evaluate_shapes(shaped, {"batch": 2, "height": 224, "width": 199, "n": 5, "m": 5})
print("at batch 2, 224x199:", {k: sizes[k] for k in ("conv", "y")})
print("z at n = m = 5:", sizes["z"], "(its first dim is a fresh symbol: not known before running)")

# strict mode: the question that gave the fresh symbol is an error naming the node
try:
    yobx.onnx.infer_shapes(model, strict=True)
except ValueError as e:
    print("strict:", str(e).split(";")[0])

# hints make a draft walk: the assumption is in the report
_, draft = yobx.onnx.infer_shapes(model, hints={"n": 5, "m": 5}, with_report=True)
for a in draft["assumptions"]:
    print(f"assumed at {a['node']}: {a['question']} -> {a['answer']}")

# the dims as expressions
h = sym.parse(dims(shaped.graph.value_info[0])[1:-1].split(", ")[2])
print(f"{h} at height 224: {h.evaluate({'height': 224})}")
print("2*(h//2) + h%2 == h:", sym.equal("2*(h//2) + h%2", "h"), "for every size h;", "h + 1 == h:", sym.equal("h + 1", "h"))
print("Max(h, 1) simplified for h >= 1:", sym.simplify("Max(h, 1)", {"h": (1, None)}))
print("the model given is unchanged:", len(model.graph.value_info) == 0 and not model.graph.output[0].type.tensor_type.HasField("shape"))
