"""Writes the small models tests/onnx/check_cli.sh runs yobx-onnx-shapes on. Usage: python3 make_cli_models.py DIR"""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
f = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, opset=17, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", f, ["batch", 3, "height", "width"])
y = helper.make_tensor_value_info("y", f, None)
w = helper.make_tensor("w", f, [8, 3, 3, 3], [0.0] * 216)
conv = helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[2, 2])
pool = helper.make_node("MaxPool", ["c"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2])
save("conv", [conv, pool], [x], [y], inits=[w])
save("opset30", [helper.make_node("Relu", ["x"], ["y"])], [x], [y], opset=30)
save("opset6", [helper.make_node("Relu", ["x"], ["y"])], [x], [y], opset=6)
save("cycle", [helper.make_node("Relu", ["b"], ["a"], name="r1"), helper.make_node("Relu", ["a"], ["b"], name="r2"),
               helper.make_node("Add", ["x", "a"], ["y"], name="add")], [x], [y])
save("dangling", [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")], [x], [y])
# the same with control characters in the names, which the one-line error escapes
save("dangling_newline", [helper.make_node("Add", ["x", "no\nwhere"], ["y"], name="a\r\nb\x01")], [x], [y])
# two unrelated symbols broadcast: ONNX's fresh symbol by default, an error with --strict, an assumption with hints
a = helper.make_tensor_value_info("a", f, ["n"])
b = helper.make_tensor_value_info("b", f, ["m"])
save("broadcast", [helper.make_node("Add", ["a", "b"], ["y"], name="add")], [a, b], [y])
# a dim_param that is not a symbol name, and one that is an expression
p = helper.make_tensor_value_info("p", f, ["batch size", "past_sequence_length + 1"])
save("names", [helper.make_node("Relu", ["p"], ["y"], name="relu")], [p], [y])
# the same with names that are not UTF-8 (proto2 strings hold any bytes; Latin-1's e acute here),
# and an input that no node produces, named so: the dim, a node, a value
with open(os.path.join(out, "names.onnx"), "rb") as fp:
    latin1 = fp.read().replace(b"batch size", b"batch\xe9size").replace(b"relu", b"r\xe9lu")
with open(os.path.join(out, "latin1.onnx"), "wb") as fp:
    fp.write(latin1)
with open(os.path.join(out, "latin1_dangling.onnx"), "wb") as fp:
    fp.write(latin1.replace(b"\n\x01p", b"\n\x01\xe9", 1))  # the node's input p (field 1, 1 byte) renamed
# an operator of another domain, with a profile
c = helper.make_node("MyOp", ["x"], ["y"], name="custom", domain="mydomain")
g = helper.make_graph([c], "custom", [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("mydomain", 1)])
m.ir_version = 8
onnx.save(m, os.path.join(out, "custom.onnx"))
with open(os.path.join(out, "profiles.json"), "w") as fp:
    fp.write('{"mydomain.MyOp": [{"inputs": [{"rank": 4, "dtype": "float32"}], '
             '"outputs": [{"rank": 3, "dtype": "float32", "dims": ["i0_0", "i0_2*i0_3", "2*i0_1"]}]}]}')
with open(os.path.join(out, "bad_profiles.json"), "w") as fp:
    fp.write('{"mydomain.MyOp": [{"inputs": [{"rank": 4, "dtype": "float99"}], "outputs": []}]}')
# external data: a Reshape's target stored beside the model (read), a float weight whose file
# does not exist (never read), and locations that escape the model's directory
def external(name, location, offset=0):
    t = helper.make_tensor("target", TensorProto.INT64, [2], [0, 0])
    t.ClearField("int64_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location), ("offset", str(offset)), ("length", "16")]:
        e = t.external_data.add()
        e.key, e.value = k, v
    big = TensorProto(name="big", data_type=f, dims=[1000, 1000])
    big.data_location = TensorProto.EXTERNAL
    e = big.external_data.add()
    e.key, e.value = "location", "no-such-file.bin"
    xi = helper.make_tensor_value_info("x", f, ["batch", 4, 6])
    save(name, [helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape")], [xi], [y], inits=[t, big])


import struct
with open(os.path.join(out, "target.bin"), "wb") as fp:
    fp.write(struct.pack("<qq", 0, -1))
os.makedirs(os.path.join(out, "..", "outside"), exist_ok=True)
with open(os.path.join(out, "..", "outside", "secret.bin"), "wb") as fp:
    fp.write(struct.pack("<qq", 0, -1))
if not os.path.lexists(os.path.join(out, "link.bin")):
    os.symlink(os.path.join("..", "outside", "secret.bin"), os.path.join(out, "link.bin"))
external("external", "target.bin")
external("escape", "../outside/secret.bin")
external("absolute", "/etc/hostname")
external("symlink", "link.bin")
external("past_end", "target.bin", offset=8)
# a Slice whose start, n - m, may be negative: a question no rule can settle without hints
xs = helper.make_tensor_value_info("x", f, ["n", "m"])
zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
one = helper.make_tensor("one", TensorProto.INT64, [1], [1])
end = helper.make_tensor("end", TensorProto.INT64, [1], [2**63 - 1])
save("slice", [helper.make_node("Shape", ["x"], ["s"], name="shape"),
               helper.make_node("Gather", ["s", "zero"], ["n"], name="n"),
               helper.make_node("Gather", ["s", "one"], ["m"], name="m"),
               helper.make_node("Sub", ["n", "m"], ["start"], name="start"),
               helper.make_node("Slice", ["x", "start", "end", "zero"], ["y"], name="slice")], [xs], [y],
     inits=[zero, one, end])

# the model declares shapes of its own: one that yobx's inference contradicts
m = onnx.load(os.path.join(out, "conv.onnx"))
m.graph.value_info.append(helper.make_tensor_value_info("c", f, ["batch", 6, 5, "w2"]))
onnx.save(m, os.path.join(out, "declared.onnx"))
print("models written")
