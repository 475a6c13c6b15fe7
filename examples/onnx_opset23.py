"""A decoder layer as current exporters write it, at opset 23: the standard LLM operators
(ctest runs it and compares its output).

RMSNormalization, the q/k/v projections, RotaryEmbedding on the 3D q and k, and Attention
with grouped-query heads (8 query heads, 2 kv heads) and a KV cache: present_key and
present_value are the past grown by the new tokens. Neither Debian's ONNX nor its
onnxruntime knows opset 23; yobx shapes every value and says what the cache costs per token.
Run with the build's python/ on PYTHONPATH:  PYTHONPATH=build/dev/python python3 examples/onnx_opset23.py
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import yobx.onnx

HIDDEN, HEADS, KV_HEADS, HEAD = 128, 8, 2, 16
F = TensorProto.FLOAT


def weight(name, shape):
    return numpy_helper.from_array(np.full(shape, 0.01, np.float32), name)


angles = np.arange(2048)[:, None] / 10000 ** (np.arange(HEAD // 2)[None, :] / (HEAD // 2))
inits = [weight("norm", [HIDDEN]), weight("wq", [HIDDEN, HEADS * HEAD]), weight("wk", [HIDDEN, KV_HEADS * HEAD]),
         weight("wv", [HIDDEN, KV_HEADS * HEAD]), weight("wo", [HEADS * HEAD, HIDDEN]),
         numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos"), numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin")]
nodes = [helper.make_node("RMSNormalization", ["x", "norm"], ["h"], name="norm", epsilon=1e-6),
         helper.make_node("MatMul", ["h", "wq"], ["q"], name="q"),
         helper.make_node("MatMul", ["h", "wk"], ["k"], name="k"),
         helper.make_node("MatMul", ["h", "wv"], ["v"], name="v"),
         helper.make_node("RotaryEmbedding", ["q", "cos", "sin", "position_ids"], ["q_rot"], name="rope_q", num_heads=HEADS),
         helper.make_node("RotaryEmbedding", ["k", "cos", "sin", "position_ids"], ["k_rot"], name="rope_k", num_heads=KV_HEADS),
         helper.make_node("Attention", ["q_rot", "k_rot", "v", "", "past_key", "past_value"], ["attn", "present_key", "present_value"],
                          name="attention", q_num_heads=HEADS, kv_num_heads=KV_HEADS, is_causal=1),
         helper.make_node("MatMul", ["attn", "wo"], ["o"], name="o"),
         helper.make_node("Add", ["x", "o"], ["y"], name="residual")]
inputs = [helper.make_tensor_value_info("x", F, ["batch", "seq", HIDDEN]),
          helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"]),
          helper.make_tensor_value_info("past_key", F, ["batch", KV_HEADS, "past", HEAD]),
          helper.make_tensor_value_info("past_value", F, ["batch", KV_HEADS, "past", HEAD])]
outputs = [helper.make_tensor_value_info(n, F, None) for n in ("y", "present_key", "present_value")]
model = helper.make_model(helper.make_graph(nodes, "layer", inputs, outputs, inits), opset_imports=[helper.make_opsetid("", 23)])

shaped, report = yobx.onnx.infer_shapes(model, with_report=True)
for v in list(shaped.graph.value_info) + list(shaped.graph.output):
    dims = [d.dim_param or str(d.dim_value) for d in v.type.tensor_type.shape.dim]
    print(f"{v.name}: [{', '.join(dims)}]")
print("fresh symbols:", report["fresh"], "- operators not covered:", report["not_covered"] or "none")
memory = yobx.onnx.memory(shaped, at={"batch": 4, "seq": 1, "past": 2047}, infer=False)
for g in memory["growth"]:
    if g["dim"] == "past":
        print(f"the cache grows by {g['per_unit']} bytes per token of past ({g['per_unit_at']} at batch 4)")
print("peak activations at batch 4, one token after 2047:", memory["at"]["peak"], "bytes")
