"""How much memory an ONNX decoder layer needs at any size, from its shapes alone
(ctest runs it and compares its output).

One attention layer with a KV cache, built with onnx.helper: the new keys and values
are concatenated to the past ones (present_key, present_value are outputs), the scores
are [batch, 4, seq, past + seq]. yobx.onnx.memory gives every value's bytes as an
expression of the input dims, the weights, the peak of the activations over the node
order, and how much the outputs grow per unit of each dim: the KV cache's bytes per token.
Run with the build's python/ on PYTHONPATH:  PYTHONPATH=build/dev/python python3 examples/onnx_memory.py
"""
from onnx import TensorProto, helper

import yobx.onnx


def make_layer(hidden=64, heads=4):
    head = hidden // heads
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("x", f, ["batch", "seq", hidden]),
              helper.make_tensor_value_info("past_key", f, ["batch", heads, "past", head]),
              helper.make_tensor_value_info("past_value", f, ["batch", heads, "past", head])]
    weights = [helper.make_tensor(n, f, [hidden, hidden], [0.01] * hidden * hidden) for n in ("wq", "wk", "wv", "wo")]
    weights.append(helper.make_tensor("split_heads", TensorProto.INT64, [4], [0, 0, heads, head]))
    weights.append(helper.make_tensor("merge_heads", TensorProto.INT64, [3], [0, 0, hidden]))
    nodes = []
    for name, w in (("q", "wq"), ("k", "wk"), ("v", "wv")):
        nodes += [helper.make_node("MatMul", ["x", w], [name + "_proj"], name=name + "_proj"),
                  helper.make_node("Reshape", [name + "_proj", "split_heads"], [name + "_heads"], name=name + "_heads"),
                  helper.make_node("Transpose", [name + "_heads"], [name + "_t"], name=name + "_t", perm=[0, 2, 1, 3])]
    nodes += [helper.make_node("Concat", ["past_key", "k_t"], ["present_key"], name="present_key", axis=2),
              helper.make_node("Concat", ["past_value", "v_t"], ["present_value"], name="present_value", axis=2),
              helper.make_node("Transpose", ["present_key"], ["key_t"], name="key_t", perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["q_t", "key_t"], ["scores"], name="scores"),
              helper.make_node("Softmax", ["scores"], ["probs"], name="softmax", axis=-1),
              helper.make_node("MatMul", ["probs", "present_value"], ["context"], name="context"),
              helper.make_node("Transpose", ["context"], ["context_t"], name="context_t", perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["context_t", "merge_heads"], ["merged"], name="merged"),
              helper.make_node("MatMul", ["merged", "wo"], ["y"], name="out_proj")]
    outputs = [helper.make_tensor_value_info(n, f, None) for n in ("y", "present_key", "present_value")]
    return helper.make_model(helper.make_graph(nodes, "decoder_layer", inputs, outputs, weights),
                             opset_imports=[helper.make_opsetid("", 17)])


model = make_layer()
memory = yobx.onnx.memory(model, at={"batch": 8, "seq": 1, "past": 4095})
bytes_of = {v["name"]: v["bytes"] for v in memory["values"]}
print("scores:", bytes_of["scores"])
print("present_key:", bytes_of["present_key"])
print("weights:", memory["weights"]["total"], "bytes", memory["weights"]["by_dtype"])
print("peak activations:", memory["peak"])
for kept in memory["peak_steps"]:  # each the largest alone somewhere: its witness
    print(f"  step {kept['step']} ({kept['op']}) alone the largest at {kept['witness']}")
large = memory["large"]
print(f"the peak once every size is at least {large['from']}: step {large['step']}; {memory['unresolved']} steps unresolved")
at = memory["at"]
print(f"at batch 8, one new token after 4095: peak {at['peak']} bytes at step {at['step']} ({at['op']} '{at['node']}'), "
      f"with {', '.join(v['name'] for v in at['largest'][:3])}")
for g in memory["growth"]:
    if g["dim"] == "past":
        print(f"the outputs grow by {g['per_unit']} bytes per token of past ({g['per_unit_at']} at batch 8): {', '.join(g['outputs'])}")
# a prompt of 512 tokens, no past: the scores' seq*seq takes over
print("at batch 8, a prompt of 512 tokens:", yobx.onnx.memory(model, at={"batch": 8, "seq": 512, "past": 0})["at"]["peak"], "bytes")
