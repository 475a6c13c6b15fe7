"""yobx's rules of opsets 23 to 28 against numpy implementations written from ONNX's specification.

Usage: python3 check_new_opsets.py YOBX_ONNX_SHAPES WORKDIR [--cases N] [--seed S] [--ort]
(PYTHONPATH: the build's python/)

Debian's ONNX (1.12, 1.17) and onnxruntime (1.21) cannot run opset 23 or later, so each new
operator is executed here by a numpy implementation of ONNX's text (docs/Changelog.md at the
commit docs/onnx.md names; the older operators the models also hold have numpy
implementations too). Checked, failing the run when violated:
  1. random models of each operator added or changed in opsets 23 to 28 (Attention 23/24/25,
     RMSNormalization, RotaryEmbedding, TensorScatter, Swish, SwiGLU, CumProd, BitCast,
     DequantizeLinear's output_dtype, CausalConvWithState, LinearAttention, ai.onnx.preview's
     FlexAttention), with symbolic batch, sequence and past sizes: yobx.onnx.infer_shapes shapes
     every value (no fresh symbol, no unknown rank) and each dim, at three sizes, is the numpy
     run's; each value's bytes (yobx.onnx.memory at those sizes) are its elements packed as ONNX
     packs its type;
  2. where an older opset's operators compute the same (Attention against the MatMul/Softmax
     graph it replaces, RMSNormalization and RotaryEmbedding against their decompositions),
     both models give the same dims to the outputs, the same bytes and the same growth;
  3. a two-layer decoder (RMSNormalization, RotaryEmbedding, Attention with grouped-query heads
     and a KV cache, a gated MLP: SwiGLU at opset 28) at opsets 23 to 28, through the command
     (yobx-onnx-shapes --memory --report) and the Python module: the same value_info, every value's
     dims the numpy run's, the growth per token of past the equivalent opset-17 model's;
  4. Loops whose count the graph states (a trip count Shape(x)[0] or 2*n, the condition passed
     through or a constant true): exact dims, checked against the numpy run;
  5. the older operators at their newest versions: the random shape-computation graphs of
     conformance.py (Shape, Gather, Slice, Concat, Reshape, Expand, Range, ConstantOfShape, the
     arithmetic...) written at opset 18 give the same types and dims at opsets 23, 25 and 28.
With --ort (Debian 13: onnxruntime), the opset-17 models of 2 and 3 and the Loops at opset 17
are also run by onnxruntime: the outputs' dims and the KV cache's growth per token are its own.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import yobx.onnx

F, F16, I64, BOOL = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64, TensorProto.BOOL
BITS = {1: 32, 2: 8, 3: 8, 6: 32, 7: 64, 9: 8, 10: 16, 11: 64, 16: 16, 23: 4, 24: 8, 25: 2, 26: 2}
NP = {1: np.float32, 2: np.uint8, 3: np.int8, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64,
      25: np.uint8, 26: np.int8}
ORT = None  # onnxruntime, with --ort


# ---------------------------------------------------------------------------------------------
# numpy implementations, from ONNX's text (the new operators) and its older definitions
# ---------------------------------------------------------------------------------------------

def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    s = np.sum(e, axis=axis, keepdims=True)
    return np.where(s == 0, 0, e / np.where(s == 0, 1, s)).astype(x.dtype)


def attention(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None, *, is_causal=0,
              q_num_heads=None, kv_num_heads=None, qk_matmul_output_mode=0, scale=None, softcap=0.0,
              softmax_precision=None, left_window_size=-1, right_window_size=-1):
    """Attention-23/24/25: 3D inputs split into heads, the cache concatenated on the sequence axis,
    K and V repeated for grouped-query heads, Q*sqrt(scale) @ (K*sqrt(scale))^T, softcap, the mask
    and the causal (bottom-right) bias added, softmax, @ V."""
    rank3 = Q.ndim == 3
    if rank3:
        b = Q.shape[0]
        Q = Q.reshape(b, Q.shape[1], q_num_heads, -1).transpose(0, 2, 1, 3)
        K = K.reshape(b, K.shape[1], kv_num_heads, -1).transpose(0, 2, 1, 3)
        V = V.reshape(b, V.shape[1], kv_num_heads, -1).transpose(0, 2, 1, 3)
    past = 0 if past_key is None else past_key.shape[2]
    if past_key is not None:
        K = np.concatenate([past_key, K], axis=2)
        V = np.concatenate([past_value, V], axis=2)
    present_key, present_value = K, V
    group = Q.shape[1] // K.shape[1]
    Kr, Vr = np.repeat(K, group, axis=1), np.repeat(V, group, axis=1)
    scale = 1 / math.sqrt(Q.shape[3]) if scale is None else scale
    qk = (Q * math.sqrt(scale)) @ np.swapaxes(Kr * math.sqrt(scale), -1, -2)
    scores = softcap * np.tanh(qk / softcap) if softcap else qk
    sq, total = Q.shape[2], K.shape[2]
    bias = np.zeros((sq, total), dtype=Q.dtype)
    if attn_mask is not None:
        m = attn_mask
        if m.shape[-1] < total:  # (24: a shorter mask is padded with -inf)
            pad = [(0, 0)] * (m.ndim - 1) + [(0, total - m.shape[-1])]
            m = np.pad(m, pad, constant_values=False if m.dtype == np.bool_ else -np.inf)
        bias = bias + (np.where(m, 0, -np.inf).astype(Q.dtype) if m.dtype == np.bool_ else m)
    if is_causal:
        i = np.arange(sq).reshape(-1, 1)
        j = np.arange(total).reshape(1, -1)
        bias = bias + np.where(j <= i + past, 0, -np.inf).astype(Q.dtype)
    probs = softmax(scores + bias)
    Y = probs @ Vr
    if rank3:
        Y = Y.transpose(0, 2, 1, 3).reshape(Y.shape[0], sq, -1)
    out = {0: qk, 1: scores, 2: scores + bias, 3: probs}[qk_matmul_output_mode]
    return Y, present_key, present_value, out


def rms_normalization(X, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    axes = tuple(range(axis % X.ndim, X.ndim))
    x = X.astype(np.float32)
    rms = np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + epsilon)
    return ((x / rms).astype(X.dtype) * scale).astype(scale.dtype)


def rotary_embedding(input, cos_cache, sin_cache, position_ids=None, *, interleaved=0, rotary_embedding_dim=0, num_heads=0):
    """The specification's own algorithm (RotaryEmbedding-23)."""
    original_input_shape = input.shape
    if len(input.shape) == 4:
        input = np.transpose(input, (0, 2, 1, 3))
    batch_size, sequence_length = input.shape[0], input.shape[1]
    if len(input.shape) == 3:
        head_size = int(input.shape[2] / num_heads)
        input = np.reshape(input, [batch_size, sequence_length, num_heads, head_size])
    head_size = input.shape[3]
    if not rotary_embedding_dim:
        rotary_embedding_dim = head_size
    x_rotate = input[:, :, :, :rotary_embedding_dim]
    x_not_rotate = input[:, :, :, rotary_embedding_dim:]
    if position_ids is not None:
        cos_cache, sin_cache = cos_cache[position_ids], sin_cache[position_ids]
    assert cos_cache.shape[-1] == rotary_embedding_dim // 2
    cos_cache, sin_cache = np.expand_dims(cos_cache, axis=2), np.expand_dims(sin_cache, axis=2)
    if interleaved:
        x1, x2 = x_rotate[:, :, :, 0::2], x_rotate[:, :, :, 1::2]
    else:
        x1, x2 = np.split(x_rotate, 2, axis=-1)
    real = cos_cache * x1 - sin_cache * x2
    imag = sin_cache * x1 + cos_cache * x2
    if interleaved:
        x_rotate = np.reshape(np.concatenate((real[..., None], imag[..., None]), axis=-1), x_rotate.shape)
    else:
        x_rotate = np.concatenate((real, imag), axis=-1)
    output = np.concatenate((x_rotate, x_not_rotate), axis=-1)
    if len(original_input_shape) == 3:
        return np.reshape(output, original_input_shape)
    return np.transpose(output, (0, 2, 1, 3))


def tensor_scatter(past_cache, update, write_indices=None, *, axis=-2, mode="linear"):
    axis = axis % past_cache.ndim
    present = past_cache.copy()
    max_len, length = past_cache.shape[axis], update.shape[axis]
    if write_indices is None:
        write_indices = np.zeros(past_cache.shape[0], dtype=np.int64)
    for prefix in np.ndindex(past_cache.shape[:axis]):
        for s in range(length):
            at = write_indices[prefix[0]] + s
            present[prefix + ((at % max_len) if mode == "circular" else at,)] = update[prefix + (s,)]
    return present


def causal_conv_with_state(x, weight, bias=None, past_state=None, *, activation="none"):
    b, c, _ = x.shape
    k = weight.shape[2]
    if past_state is None:
        past_state = np.zeros((b, c, k - 1), dtype=x.dtype)
    padded = np.concatenate([past_state, x], axis=2)
    out = np.zeros_like(x)
    for t in range(x.shape[2]):
        out[:, :, t] = np.sum(padded[:, :, t:t + k] * weight[None, :, 0, :], axis=2)
    if bias is not None:
        out = out + bias[None, :, None]
    if activation in ("silu", "swish"):
        out = out / (1 + np.exp(-out))
    return out, padded[:, :, padded.shape[2] - (k - 1):]


def linear_attention(query, key, value, past_state=None, decay=None, beta=None, *, q_num_heads, kv_num_heads,
                     update_rule="linear", scale=0.0, chunk_size=64):
    """The 'linear' rule: S += k_t^T v_t per token and kv head, o_t = scale * q_t S."""
    assert update_rule == "linear"
    b, t, _ = query.shape
    q = query.reshape(b, t, q_num_heads, -1)
    k = key.reshape(b, t, kv_num_heads, -1)
    v = value.reshape(b, t, kv_num_heads, -1)
    dk, dv = k.shape[3], v.shape[3]
    scale = scale or 1 / math.sqrt(q.shape[3])
    S = np.zeros((b, kv_num_heads, dk, dv), dtype=np.float32) if past_state is None else past_state.astype(np.float32)
    out = np.zeros((b, t, q_num_heads, dv), dtype=query.dtype)
    group = q_num_heads // kv_num_heads
    for i in range(t):
        S = S + np.einsum("bhk,bhv->bhkv", k[:, i], v[:, i])
        out[:, i] = scale * np.einsum("bhk,bhkv->bhv", q[:, i], np.repeat(S, group, axis=1))
    return out.reshape(b, t, -1), S.astype(past_state.dtype if past_state is not None else query.dtype)


def flex_attention(Q, K, V, *, scale=None, softmax_precision=None, score_mod=None, prob_mod=None):
    """Scores (Q @ K^T) * scale in softmax_precision, score_mod, Softmax, prob_mod, @ V."""
    def modified(graph, x):
        return x if graph is None else run_graph(graph, {graph.input[0].name: x})[graph.output[0].name]
    group = Q.shape[1] // K.shape[1]
    scale = 1 / math.sqrt(Q.shape[3]) if scale is None else scale
    s = ((Q @ np.swapaxes(np.repeat(K, group, axis=1), -1, -2)) * scale).astype(np.float64 if Q.dtype == np.float64 else np.float32)
    return (modified(prob_mod, softmax(modified(score_mod, s))) @ np.repeat(V, group, axis=1)).astype(Q.dtype)


def cumulative(x, axis, *, exclusive=0, reverse=0, product=False):
    axis = int(axis) % x.ndim
    y = np.flip(x, axis) if reverse else x
    if exclusive:
        neutral = np.ones_like if product else np.zeros_like
        first = neutral(np.take(y, [0], axis=axis))
        y = np.concatenate([first, np.take(y, range(y.shape[axis] - 1), axis=axis)], axis=axis)
    y = np.cumprod(y, axis=axis) if product else np.cumsum(y, axis=axis)
    return (np.flip(y, axis) if reverse else y).astype(x.dtype)


def swish(x, alpha=1.0):
    return (x / (1 + np.exp(-alpha * x))).astype(x.dtype)


def swiglu(a, b, *, alpha=1.0):
    assert a.shape == b.shape, "SwiGLU: A and B of one shape"
    return swish(a, alpha) * b


def bit_cast(x, *, to):
    return x.view(NP[to])


def dequantize_linear(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=0):
    y = (x.astype(np.float32) - (0 if zero_point is None else zero_point.astype(np.float32))) * scale
    return y.astype(NP[output_dtype] if output_dtype else scale.dtype)


def slice_(data, starts, ends, axes=None, steps=None):
    axes = range(data.ndim) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * data.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[int(a)] = slice(int(s), int(e), int(st))
    return data[tuple(index)]


def reshape(data, shape):
    shape = [data.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return data.reshape(shape)


OPS = {
    "Attention": attention, "RMSNormalization": rms_normalization, "RotaryEmbedding": rotary_embedding,
    "TensorScatter": tensor_scatter, "CausalConvWithState": causal_conv_with_state, "LinearAttention": linear_attention,
    "FlexAttention": flex_attention, "Swish": swish, "SwiGLU": swiglu, "BitCast": bit_cast, "DequantizeLinear": dequantize_linear,
    "CumProd": lambda x, axis, **a: cumulative(x, axis, product=True, **a), "CumSum": cumulative,
    "MatMul": np.matmul, "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": lambda a, b: (a / b).astype(a.dtype),
    "Sqrt": np.sqrt, "Neg": np.negative, "Sigmoid": lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype),
    "Softmax": lambda x, axis=-1: softmax(x, axis), "Identity": lambda x: x, "Shape": lambda x: np.array(x.shape, dtype=np.int64),
    "ReduceMean": lambda x, axes=None, keepdims=1: np.mean(x, axis=tuple(axes), keepdims=bool(keepdims)).astype(x.dtype),
    "Reshape": reshape, "Transpose": lambda x, perm=None: np.transpose(x, perm), "Slice": slice_,
    "Concat": lambda *xs, axis: np.concatenate(xs, axis=axis), "Gather": lambda x, i, axis=0: np.take(x, i, axis=axis),
    "Unsqueeze": lambda x, axes: np.expand_dims(x, tuple(int(a) for a in axes)),
    "Squeeze": lambda x, axes=None: np.squeeze(x) if axes is None else np.squeeze(x, tuple(int(a) for a in axes)),
    "Cast": lambda x, to, **_: x.astype(NP[to]), "Range": lambda a, b, d: np.arange(a, b, d, dtype=np.asarray(a).dtype),
    "Less": np.less, "LessOrEqual": np.less_equal, "Where": np.where, "Mod": np.mod, "Expand": lambda x, s: x * np.ones(s, x.dtype),
    "ConstantOfShape": lambda s, value=None: np.full(tuple(s), 0 if value is None else numpy_helper.to_array(value).reshape(-1)[0]),
    "Constant": lambda value: numpy_helper.to_array(value),
}


def run_graph(graph, feeds, outer=None):
    """Every value of `graph` (its subgraphs' excepted), executed in the order of its nodes."""
    env = dict(outer or {})
    env.update({i.name: numpy_helper.to_array(i) for i in graph.initializer})
    env.update(feeds)
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}
        args = [env[i] if i else None for i in node.input]
        if node.op_type == "Loop":
            outs = run_loop(node, args, attrs["body"], env)
        else:
            while args and args[-1] is None:
                args.pop()
            outs = OPS[node.op_type](*args, **attrs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        for name, value in zip(node.output, outs):
            if name:
                env[name] = np.asarray(value)
    return env


def run_loop(node, args, body, env):
    trips, cond, carried = args[0], args[1], list(args[2:])
    go = True if cond is None else bool(cond)
    scans, i = [], 0
    while (trips is None or i < int(trips)) and go:
        feeds = dict(zip([b.name for b in body.input], [np.array(i, np.int64), np.array(go)] + carried))
        out = run_graph(body, feeds, env)
        values = [out[o.name] for o in body.output]
        if cond is not None:
            go = bool(values[0])
        carried = values[1:1 + len(carried)]
        scans.append(values[1 + len(carried):])
        i += 1
    n_scan = len(body.output) - 1 - len(carried)
    return tuple(carried) + tuple(np.stack([s[k] for s in scans]) for k in range(n_scan))


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------

class Failures:
    def __init__(self):
        self.wrong, self.checked, self.values = [], 0, 0

    def check(self, ok, what):
        self.checked += 1
        if not ok:
            self.wrong.append(what)


FAIL = Failures()


def make(nodes, inputs, outputs, opset, inits=(), extra=()):
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra]
    m = helper.make_model(helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits)), opset_imports=opsets)
    m.ir_version = 10
    return m


def vi(name, elem, dims):
    dims = None if dims is None else [int(d) if isinstance(d, (int, np.integer)) else str(d) for d in dims]
    return helper.make_tensor_value_info(name, int(elem), dims)


def random_input(rng, elem, shape):
    if elem == BOOL:
        return rng.random(shape) < 0.7
    if elem in (I64, TensorProto.INT32):
        return rng.integers(0, 4, shape).astype(NP[elem])
    if elem in (25, 26, 2, 3):
        return rng.integers(-2 if elem in (26, 3) else 0, 2, shape).astype(NP[elem])
    return rng.standard_normal(shape).astype(NP[elem])


def dims_of(value_info):
    return {v.name: v for v in value_info}


def check_model(label, model, sizes_list, feeds_of, seed=0):
    """Shapes every value with yobx, runs the model with numpy at each sizes, compares each
    value's dims and bytes. Returns the shaped model."""
    shaped, report = yobx.onnx.infer_shapes(model, with_report=True)
    FAIL.check(report["fresh"] == 0 and report["unknown_rank"] == 0 and not report["not_covered"],
               f"{label}: fresh {report['fresh']}, unknown rank {report['unknown_rank']}, not covered {report['not_covered']}")
    types = {v.name: v.type.tensor_type.elem_type for v in list(shaped.graph.value_info) + list(shaped.graph.output)}
    inputs = {i.name for i in model.graph.input}
    rng = np.random.default_rng(seed)
    for sizes in sizes_list:
        feeds = feeds_of(rng, sizes)
        values = run_graph(model.graph, feeds)
        dims = yobx.onnx.evaluate_shapes(shaped, sizes, infer=False)
        memory = yobx.onnx.memory(shaped, at=sizes, infer=False)
        at_bytes = {v["name"]: v.get("bytes_at") for v in memory["values"]}
        for name, value in values.items():
            if name in inputs or name not in types:
                continue
            FAIL.values += 1
            FAIL.check(dims.get(name) == value.shape, f"{label} at {sizes}: {name} yobx {dims.get(name)}, numpy {value.shape}")
            if types[name] in NP and value.dtype != NP[types[name]] and types[name] not in (25, 26):
                FAIL.check(False, f"{label}: {name} yobx type {types[name]}, numpy {value.dtype}")
            expected = -(-value.size * BITS[types[name]] // 8)
            FAIL.check(at_bytes.get(name) == expected, f"{label} at {sizes}: {name} bytes yobx {at_bytes.get(name)}, packed {expected}")
    return shaped


def feeds_for(model):
    """Random inputs of the model's input dims at given sizes."""
    def feeds(rng, sizes):
        out = {}
        for i in model.graph.input:
            tt = i.type.tensor_type
            shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param] for d in tt.shape.dim]
            out[i.name] = random_input(rng, tt.elem_type, shape)
            if i.name in ("pos", "position_ids"):
                out[i.name] = np.broadcast_to(np.arange(shape[1]) + sizes.get("past", 0), shape).astype(np.int64)
        return out
    return feeds


SIZES = [{"b": 1, "s": 3, "t": 2, "p": 0}, {"b": 2, "s": 1, "t": 4, "p": 5}, {"b": 3, "s": 5, "t": 3, "p": 2}]


def sizes_for(model):
    names = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param}
    return [{k: v for k, v in s.items() if k in names} for s in SIZES]


def case_attention(rng):
    opset = rng.choice([23, 24, 25])
    rank, hkv, group = rng.choice([3, 4]), rng.choice([1, 2]), rng.choice([1, 2, 3])
    hq, dh, dv = hkv * group, rng.choice([4, 8]), rng.choice([4, 6, 8])
    past, causal, kv = rng.random() < 0.6, int(rng.random() < 0.5), rng.choice(["s", "t"])
    mask = rng.choice(["none", "bool", "float"] + (["short"] if opset >= 24 else []))

    def qkv(name, heads, seq, d):
        return vi(name, F, ["b", heads, seq, d] if rank == 4 else ["b", seq, heads * d])
    inputs = [qkv("Q", hq, "s", dh), qkv("K", hkv, kv, dh), qkv("V", hkv, kv, dv)]
    names = ["Q", "K", "V", "", "", ""]
    nodes = []
    if mask != "none":
        inputs.append(vi("mask_in", BOOL if mask == "bool" else F, ["s", kv]))
        # the mask's last dim: past + kv (an Expand of the [s, kv] input), or kv alone (24: padded)
        names[3] = "mask_in"
        if mask != "short" and past:
            nodes += [helper.make_node("Shape", ["past_key"], ["pk_shape"]),
                      helper.make_node("Gather", ["pk_shape", "two1"], ["pk_len"]),
                      helper.make_node("Shape", ["mask_in"], ["m_shape"]),
                      helper.make_node("Slice", ["m_shape", "zero1", "one1"], ["m_rows"]),
                      helper.make_node("Concat", ["m_rows", "pk_len"], ["pad_shape"], axis=0),
                      helper.make_node("ConstantOfShape", ["pad_shape"], ["pad"],
                                       value=helper.make_tensor("v", BOOL if mask == "bool" else F, [1], [1])),
                      helper.make_node("Concat", ["pad", "mask_in"], ["mask"], axis=1)]
            names[3] = "mask"
    if past:
        inputs += [vi("past_key", F, ["b", hkv, "p", dh]), vi("past_value", F, ["b", hkv, "p", dv])]
        names[4:6] = ["past_key", "past_value"]
    while names and not names[-1]:
        names.pop()
    attrs = {"is_causal": causal, "qk_matmul_output_mode": int(rng.choice([0, 1, 2, 3]))}
    if rank == 3:
        attrs.update(q_num_heads=hq, kv_num_heads=hkv)
    if rng.random() < 0.3:
        attrs["softcap"] = 30.0
    nodes.append(helper.make_node("Attention", names, ["Y", "present_key", "present_value", "qk"], **attrs))
    outputs = [vi("Y", F, None), vi("present_key", F, None), vi("present_value", F, None), vi("qk", F, None)]
    inits = [numpy_helper.from_array(np.array([2], np.int64), "two1"), numpy_helper.from_array(np.array([0], np.int64), "zero1"),
             numpy_helper.from_array(np.array([1], np.int64), "one1")]
    return f"Attention-{opset} rank {rank} heads {hq}/{hkv} past {past} mask {mask}", make(nodes, inputs, outputs, opset, inits)


def case_rms(rng):
    rank = rng.choice([2, 3, 4])
    dims = ["b", "s", 8, 6][:rank]
    axis = int(rng.integers(-rank + 1, rank)) if rank > 1 else -1
    axis = max(axis, -rank + 1) if axis < 0 else max(axis, 1)
    scale_dims = dims[axis:] if axis >= 0 else dims[axis:]
    scale_dims = [d if isinstance(d, int) else 1 for d in scale_dims]
    st = rng.choice([F, F16])
    nodes = [helper.make_node("RMSNormalization", ["X", "scale"], ["Y"], axis=axis, epsilon=1e-5),
             helper.make_node("Shape", ["Y"], ["shape"])]
    return f"RMSNormalization rank {rank} axis {axis}", make(nodes, [vi("X", F, dims), vi("scale", st, scale_dims)],
                                                          [vi("shape", I64, None)], 23)


def case_rope(rng):
    rank, heads, head = rng.choice([3, 4]), rng.choice([1, 2, 4]), rng.choice([4, 8])
    partial = rng.choice([0, head // 2]) if head >= 8 else 0
    rot = partial or head
    x = ["b", heads, "s", head] if rank == 4 else ["b", "s", heads * head]
    attrs = {"interleaved": int(rng.random() < 0.5)}
    if rank == 3:
        attrs["num_heads"] = heads
    if partial:
        attrs["rotary_embedding_dim"] = partial
    with_ids = rng.random() < 0.6
    cache = [16, rot // 2] if with_ids else ["b", "s", rot // 2]
    inputs = [vi("X", F, x), vi("cos", F, cache), vi("sin", F, cache)] + ([vi("pos", I64, ["b", "s"])] if with_ids else [])
    nodes = [helper.make_node("RotaryEmbedding", [i.name for i in inputs], ["Y"], **attrs),
             helper.make_node("Transpose", ["Y"], ["T"])]
    return f"RotaryEmbedding rank {rank} {attrs}", make(nodes, inputs, [vi("T", F, None)], 23)


def case_scatter(rng):
    rank = rng.choice([3, 4])
    axis = int(rng.choice([-2, rank - 2]))  # the sequence axis of [b, 12, 4] or [b, 2, 12, 4]
    past = ["b", 2, 12, 4] if rank == 4 else ["b", 12, 4]
    upd = list(past)
    upd[axis % rank] = "s"
    mode = rng.choice(["linear", "circular"])
    nodes = [helper.make_node("TensorScatter", ["past", "upd", "at"], ["present"], axis=axis, mode=mode),
             helper.make_node("Concat", ["present", "past"], ["both"], axis=0)]
    return f"TensorScatter rank {rank} axis {axis} {mode}", make(
        nodes, [vi("past", F, past), vi("upd", F, upd), vi("at", I64, ["b"])], [vi("both", F, None)], 24)


def case_misc(rng):
    """Swish, SwiGLU, CumProd (on a shape: its values feed a Reshape), BitCast, DequantizeLinear."""
    opset = rng.choice([26, 27, 28])
    x = ["b", "s", 4]
    qtype = int(rng.choice([25, 26, 3, 2]))
    nodes = [helper.make_node("Swish", ["X"], ["sw"], alpha=1.5),
             helper.make_node("Shape", ["X"], ["shape"]),
             helper.make_node("CumProd", ["shape", "zero"], ["prods"], exclusive=int(rng.random() < 0.5)),
             helper.make_node("Slice", ["prods", "m1", "big"], ["last"]),
             helper.make_node("Concat", ["last", "m1"], ["to"], axis=0),
             helper.make_node("Reshape", ["sw", "to"], ["flat"]),
             helper.make_node("BitCast", ["X"], ["bits"], to=TensorProto.INT32),
             helper.make_node("DequantizeLinear", ["Q", "qs"], ["dq"], output_dtype=F16)]
    inputs = [vi("X", F, x), vi("Q", qtype, ["b", 6])]
    if opset >= 28:
        nodes.append(helper.make_node("SwiGLU", ["X", "sw"], ["glu"]))
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"), numpy_helper.from_array(np.array([-1], np.int64), "m1"),
             numpy_helper.from_array(np.array([2**62], np.int64), "big"), numpy_helper.from_array(np.array(0.5, np.float32), "qs")]
    outputs = [vi("flat", F, None), vi("bits", TensorProto.INT32, None), vi("dq", F16, None)]
    return f"Swish/CumProd/BitCast/DequantizeLinear-{opset} q {qtype}", make(nodes, inputs, outputs, opset, inits)


def case_recurrent(rng):
    """CausalConvWithState and LinearAttention (27), FlexAttention (ai.onnx.preview 1)."""
    k, c = int(rng.choice([2, 3, 4])), int(rng.choice([2, 3]))
    hkv, group, dk, dv = int(rng.choice([1, 2])), int(rng.choice([1, 2])), 4, int(rng.choice([2, 4]))
    hq = hkv * group
    # the modifiers: a score_mod halving the scores (a Constant inside), a prob_mod passing them on
    half = helper.make_graph([helper.make_node("Constant", [], ["h"], value=helper.make_tensor("h", F, [], [0.5])),
                              helper.make_node("Mul", ["scores", "h"], ["halved"])], "score_mod",
                             [vi("scores", F, ["b", hq, "s", "t"])], [vi("halved", F, None)])
    same = helper.make_graph([helper.make_node("Identity", ["probs"], ["kept"])], "prob_mod",
                             [vi("probs", F, ["b", hq, "s", "t"])], [vi("kept", F, None)])
    mods = {k: g for k, g in (("score_mod", half), ("prob_mod", same)) if rng.random() < 0.5}
    nodes = [helper.make_node("CausalConvWithState", ["x", "w", "bias", "state"], ["y", "new_state"], activation="silu"),
             helper.make_node("LinearAttention", ["q", "kk", "v", "S"], ["o", "S2"], q_num_heads=hq, kv_num_heads=hkv,
                              update_rule="linear"),
             helper.make_node("FlexAttention", ["Q4", "K4", "V4"], ["Y4"], domain="ai.onnx.preview", **mods)]
    inputs = [vi("x", F, ["b", c, "s"]), vi("w", F, [c, 1, k]), vi("bias", F, [c]), vi("state", F, ["b", c, k - 1]),
              vi("q", F, ["b", "s", hq * dk]), vi("kk", F, ["b", "s", hkv * dk]), vi("v", F, ["b", "s", hkv * dv]),
              vi("S", F, ["b", hkv, dk, dv]), vi("Q4", F, ["b", hq, "s", dk]), vi("K4", F, ["b", hkv, "t", dk]),
              vi("V4", F, ["b", hkv, "t", dv])]
    outputs = [vi(n, F, None) for n in ("y", "new_state", "o", "S2", "Y4")]
    return f"CausalConvWithState k {k}, LinearAttention {hq}/{hkv}, FlexAttention {sorted(mods)}", make(
        nodes, inputs, outputs, 27, extra=[("ai.onnx.preview", 1)])


CASES = [case_attention, case_rms, case_rope, case_scatter, case_misc, case_recurrent]


# ---------------------------------------------------------------------------------------------
# a decoder as exporters write it, and its opset-17 twin
# ---------------------------------------------------------------------------------------------

HIDDEN, HEADS, KV_HEADS, HEAD, FFN, LAYERS, MAXPOS = 32, 4, 2, 8, 48, 2, 64


def decoder(opset, standard):
    """Two layers over x [batch, seq, 32]: the standard operators (opset >= 23) or their
    decompositions (opset 17). Inputs x, pos [batch, seq], past_key_i / past_value_i
    [batch, 2, past, 8]; outputs y and present_key_i / present_value_i."""
    rng = np.random.default_rng(7)
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0], **attrs))
        return outs[0] if len(outs) == 1 else outs

    angles = np.arange(MAXPOS)[:, None] / 10000 ** (np.arange(HEAD // 2)[None, :] / (HEAD // 2))
    const("cos", np.cos(angles).astype(np.float32))
    const("sin", np.sin(angles).astype(np.float32))
    const("eps", np.array(1e-5, np.float32))
    const("two", np.array(2.0, np.float32))
    for name, shape in (("split_q", [0, 0, HEADS, HEAD]), ("split_kv", [0, 0, KV_HEADS, HEAD]), ("merge", [0, 0, HIDDEN])):
        const(name, np.array(shape, np.int64))
    for name, v in (("i0", [0]), ("i1", [1]), ("i2", [2]), ("half", [HEAD // 2]), ("end", [HEAD]), ("m1", [-1])):
        const(name, np.array(v, np.int64))

    def rms(x, i):
        w = const(f"norm{i}", (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))
        if standard:
            return node("RMSNormalization", [x, w], [f"rms{i}"], axis=-1, epsilon=1e-5)
        sq = node("Mul", [x, x], [f"sq{i}"])
        mean = node("ReduceMean", [sq], [f"mean{i}"], axes=[-1], keepdims=1)
        root = node("Sqrt", [node("Add", [mean, "eps"], [f"meps{i}"])], [f"root{i}"])
        return node("Mul", [node("Div", [x, root], [f"normed{i}"]), w], [f"rms{i}"])

    def rope(x, heads, tag):
        if standard:
            return node("RotaryEmbedding", [x, "cos", "sin", "pos"], [f"rope{tag}"], num_heads=heads)
        h = node("Reshape", [x, "split_q" if heads == HEADS else "split_kv"], [f"heads{tag}"])  # [b, s, h, d]
        c = node("Unsqueeze", [node("Gather", ["cos", "pos"], [f"c{tag}"]), "i2"], [f"cu{tag}"])  # [b, s, 1, d/2]
        s = node("Unsqueeze", [node("Gather", ["sin", "pos"], [f"s{tag}"]), "i2"], [f"su{tag}"])
        x1 = node("Slice", [h, "i0", "half", "m1"], [f"x1{tag}"])
        x2 = node("Slice", [h, "half", "end", "m1"], [f"x2{tag}"])
        real = node("Sub", [node("Mul", [c, x1], [f"cx1{tag}"]), node("Mul", [s, x2], [f"sx2{tag}"])], [f"re{tag}"])
        imag = node("Add", [node("Mul", [s, x1], [f"sx1{tag}"]), node("Mul", [c, x2], [f"cx2{tag}"])], [f"im{tag}"])
        rot = node("Concat", [real, imag], [f"rot{tag}"], axis=-1)
        return node("Reshape", [rot, "merge" if heads == HEADS else "merge_kv"], [f"rope{tag}"])

    const("merge_kv", np.array([0, 0, KV_HEADS * HEAD], np.int64))
    x = "x"
    for layer in range(LAYERS):
        h = rms(x, f"a{layer}")
        wq = const(f"wq{layer}", (0.2 * rng.standard_normal((HIDDEN, HEADS * HEAD))).astype(np.float32))
        wk = const(f"wk{layer}", (0.2 * rng.standard_normal((HIDDEN, KV_HEADS * HEAD))).astype(np.float32))
        wv = const(f"wv{layer}", (0.2 * rng.standard_normal((HIDDEN, KV_HEADS * HEAD))).astype(np.float32))
        q = rope(node("MatMul", [h, wq], [f"q{layer}"]), HEADS, f"q{layer}")
        k = rope(node("MatMul", [h, wk], [f"k{layer}"]), KV_HEADS, f"k{layer}")
        v = node("MatMul", [h, wv], [f"v{layer}"])
        pk, pv, ok, ov = f"past_key_{layer}", f"past_value_{layer}", f"present_key_{layer}", f"present_value_{layer}"
        if standard:
            a = node("Attention", [q, k, v, "", pk, pv], [f"attn{layer}", ok, ov], q_num_heads=HEADS, kv_num_heads=KV_HEADS,
                     is_causal=1)[0]
        else:
            qh = node("Transpose", [node("Reshape", [q, "split_q"], [f"qh{layer}"])], [f"qt{layer}"], perm=[0, 2, 1, 3])
            kh = node("Transpose", [node("Reshape", [k, "split_kv"], [f"kh{layer}"])], [f"kt{layer}"], perm=[0, 2, 1, 3])
            vh = node("Transpose", [node("Reshape", [v, "split_kv"], [f"vh{layer}"])], [f"vt{layer}"], perm=[0, 2, 1, 3])
            node("Concat", [pk, kh], [ok], axis=2)
            node("Concat", [pv, vh], [ov], axis=2)
            # grouped-query heads: [b, kv, 1, t, d] expanded to [b, kv, 2, t, d], then [b, heads, t, d]
            shape_k = node("Shape", [ok], [f"shk{layer}"])
            node("Concat", [node("Slice", [shape_k, "i0", "i2"], [f"bk{layer}"]), "group",
                            node("Slice", [shape_k, "i2", "end4"], [f"tk{layer}"])], [f"gshape{layer}"], axis=0)
            kx = node("Reshape", [node("Expand", [node("Unsqueeze", [ok, "i2"], [f"ku{layer}"]), f"gshape{layer}"], [f"ke{layer}"]),
                                  "heads_shape"], [f"kr{layer}"])
            vx = node("Reshape", [node("Expand", [node("Unsqueeze", [ov, "i2"], [f"vu{layer}"]), f"gshape{layer}"], [f"ve{layer}"]),
                                  "heads_shape"], [f"vr{layer}"])
            scores = node("Mul", [node("MatMul", [qh, node("Transpose", [kx], [f"kT{layer}"], perm=[0, 1, 3, 2])], [f"qk{layer}"]),
                                  "scale"], [f"sc{layer}"])
            # bottom-right causal: key j is seen by query i iff j <= i + past
            total = node("Gather", [shape_k, "i2"], [f"tot{layer}"])
            seq = node("Gather", [node("Shape", [q], [f"shq{layer}"]), "i1"], [f"sq_{layer}"])
            past = node("Sub", [total, seq], [f"pl{layer}"])
            steps = node("Range", ["zero", node("Squeeze", [seq], [f"sqs{layer}"]), "one"], [f"rg{layer}"])
            rows = node("Unsqueeze", [node("Add", [steps, node("Squeeze", [past], [f"pls{layer}"])], [f"rows0{layer}"]), "m1"],
                        [f"rows{layer}"])
            cols = node("Range", ["zero", node("Squeeze", [total], [f"tots{layer}"]), "one"], [f"cols{layer}"])
            allowed = node("LessOrEqual", [cols, rows], [f"ok{layer}"])
            bias = node("Where", [allowed, "fzero", "ninf"], [f"bias{layer}"])
            probs = node("Softmax", [node("Add", [scores, bias], [f"masked{layer}"])], [f"probs{layer}"], axis=-1)
            ctx = node("Transpose", [node("MatMul", [probs, vx], [f"ctx{layer}"])], [f"ctxt{layer}"], perm=[0, 2, 1, 3])
            a = node("Reshape", [ctx, "merge"], [f"attn{layer}"])
        wo = const(f"wo{layer}", (0.2 * rng.standard_normal((HEADS * HEAD, HIDDEN))).astype(np.float32))
        x = node("Add", [x, node("MatMul", [a, wo], [f"o{layer}"])], [f"res{layer}"])
        h2 = rms(x, f"m{layer}")
        wg = const(f"wg{layer}", (0.2 * rng.standard_normal((HIDDEN, FFN))).astype(np.float32))
        wu = const(f"wu{layer}", (0.2 * rng.standard_normal((HIDDEN, FFN))).astype(np.float32))
        wd = const(f"wd{layer}", (0.2 * rng.standard_normal((FFN, HIDDEN))).astype(np.float32))
        g, u = node("MatMul", [h2, wg], [f"g{layer}"]), node("MatMul", [h2, wu], [f"u{layer}"])
        if standard and opset >= 28:
            gated = node("SwiGLU", [g, u], [f"glu{layer}"])
        else:
            gated = node("Mul", [node("Mul", [g, node("Sigmoid", [g], [f"sg{layer}"])], [f"silu{layer}"]), u], [f"glu{layer}"])
        x = node("Add", [x, node("MatMul", [gated, wd], [f"d{layer}"])], [f"out{layer}"])
    node("Identity", [x], ["y"])
    if not standard:
        const("group", np.array([HEADS // KV_HEADS], np.int64))
        const("end4", np.array([4], np.int64))
        const("heads_shape", np.array([0, HEADS, -1, HEAD], np.int64))
        const("scale", np.array(1 / math.sqrt(HEAD), np.float32))
        const("zero", np.array(0, np.int64))
        const("one", np.array(1, np.int64))
        const("fzero", np.array(0.0, np.float32))
        const("ninf", np.array(-np.inf, np.float32))
    inputs = [vi("x", F, ["batch", "seq", HIDDEN]), vi("pos", I64, ["batch", "seq"])]
    outputs = [vi("y", F, ["batch", "seq", HIDDEN])]
    for layer in range(LAYERS):
        inputs += [vi(f"past_key_{layer}", F, ["batch", KV_HEADS, "past", HEAD]),
                   vi(f"past_value_{layer}", F, ["batch", KV_HEADS, "past", HEAD])]
        outputs += [vi(f"present_key_{layer}", F, None), vi(f"present_value_{layer}", F, None)]
    return make(nodes, inputs, outputs, opset, inits)


DECODER_SIZES = [{"batch": 1, "seq": 5, "past": 0}, {"batch": 2, "seq": 1, "past": 7}, {"batch": 3, "seq": 4, "past": 3}]


def out_dims(shaped, sizes, names):
    d = yobx.onnx.evaluate_shapes(shaped, sizes, infer=False)
    return {n: d.get(n) for n in names}


def growth(memory):
    return {g["dim"]: (g["per_unit"], sorted(g["outputs"])) for g in memory["growth"]}


def check_decoder(tool, workdir):
    old = decoder(17, standard=False)
    old_shaped = check_model("decoder opset 17", old, DECODER_SIZES, feeds_for(old))
    names = [o.name for o in old.graph.output]
    old_memory = yobx.onnx.memory(old_shaped, infer=False)
    FAIL.check(growth(old_memory)["past"][0] == "256*batch", f"decoder 17: growth per token of past {growth(old_memory)}")
    for opset in (23, 24, 25, 26, 27, 28):
        label = f"decoder opset {opset}"
        new = decoder(opset, standard=True)
        shaped = check_model(label, new, DECODER_SIZES, feeds_for(new))
        for sizes in DECODER_SIZES:
            a, b = out_dims(shaped, sizes, names), out_dims(old_shaped, sizes, names)
            FAIL.check(a == b, f"{label} at {sizes}: outputs {a}, opset 17 {b}")
        memory = yobx.onnx.memory(shaped, infer=False)
        FAIL.check(growth(memory) == growth(old_memory), f"{label}: growth {growth(memory)}, opset 17 {growth(old_memory)}")
        # the command writes what the module writes, and reports the same memory
        path, out, report = (os.path.join(workdir, f"decoder{opset}{s}") for s in (".onnx", ".shaped.onnx", ".json"))
        onnx.save(new, path)
        run = subprocess.run([tool, path, out, "--memory", "--report", report], capture_output=True, text=True)
        FAIL.check(run.returncode == 0, f"{label}: the command failed: {run.stderr.strip()}")
        if run.returncode == 0:
            written = onnx.load(out)
            FAIL.check(list(written.graph.value_info) == list(shaped.graph.value_info) and
                       list(written.graph.output) == list(shaped.graph.output), f"{label}: the command and the module differ")
            with open(report) as f:
                FAIL.check(growth(json.load(f)["memory"]) == growth(memory), f"{label}: the command's growth differs")
    if ORT is not None:
        check_ort(old, old_shaped, names, memory)


def ort_session(model):
    """onnxruntime without its graph optimizations: the model as written is what runs."""
    options = ORT.SessionOptions()
    options.graph_optimization_level = ORT.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3  # (not the warnings of the unused initializers)
    return ORT.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def check_ort(old, old_shaped, names, memory):
    """onnxruntime runs the opset-17 decoder: the outputs' dims are yobx's of the opset-23 one, and
    one more token of past adds the growth yobx states."""
    session = ort_session(old)
    rng = np.random.default_rng(3)
    per_unit = memory["growth"]
    for sizes in DECODER_SIZES:
        feeds = feeds_for(old)(rng, sizes)
        got = dict(zip(names, session.run(names, feeds)))
        dims = out_dims(old_shaped, sizes, names)
        FAIL.check(all(dims[n] == got[n].shape for n in names), f"onnxruntime at {sizes}: {dims} vs {[got[n].shape for n in names]}")
        more = dict(sizes, past=sizes["past"] + 1)
        bigger = dict(zip(names, session.run(names, feeds_for(old)(rng, more))))
        grown = sum(bigger[n].nbytes - got[n].nbytes for n in names if n.startswith("present"))
        stated = next(g for g in per_unit if g["dim"] == "past")
        stated = eval(stated["per_unit"], {}, {"batch": sizes["batch"]})  # noqa: S307 -- '256*batch'
        FAIL.check(grown == stated, f"onnxruntime at {sizes}: one more token of past adds {grown} bytes, yobx says {stated}")


# ---------------------------------------------------------------------------------------------
# loops whose count the graph states
# ---------------------------------------------------------------------------------------------

def loop_model(opset, trips, body_cond, carried_counter):
    """A Loop over X [n, 4] (its trip count `trips` of n, the condition true), summing rows into a
    carried value and scanning them out; `body_cond` gives the body's condition."""
    body_nodes = [helper.make_node("Mod", ["i", "n"], ["at"]), helper.make_node("Gather", ["X", "at"], ["row"]),
                  helper.make_node("Add", ["acc", "row"], ["acc2"]), helper.make_node("Add", ["k", "one"], ["k2"])]
    if body_cond == "passthrough":
        body_nodes.append(helper.make_node("Identity", ["c"], ["c2"]))
    elif body_cond == "constant":
        body_nodes.append(helper.make_node("Constant", [], ["c2"], value=helper.make_tensor("t", BOOL, [], [True])))
    else:  # stops after `carried_counter` iterations: the count depends on the data
        body_nodes.append(helper.make_node("Less", ["k2", "limit"], ["c2"]))
    body = helper.make_graph(body_nodes, "body", [vi("i", I64, []), vi("c", BOOL, []), vi("acc", F, [4]), vi("k", I64, [])],
                             [vi("c2", BOOL, []), vi("acc2", F, [4]), vi("k2", I64, []), vi("row", F, [4])])
    nodes = [helper.make_node("Shape", ["X"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["n"]),
             helper.make_node("Mul", ["n", "mult"], ["trips"]),
             helper.make_node("Loop", ["trips" if trips == "2n" else "n", "true", "init", "zero"], ["A", "K", "S"], body=body)]
    inits = [numpy_helper.from_array(np.array(v, t), name) for name, v, t in
             (("zero", 0, np.int64), ("one", 1, np.int64), ("two", 2, np.int64), ("mult", 2, np.int64), ("true", True, np.bool_),
              ("limit", carried_counter, np.int64), ("init", np.zeros(4), np.float32))]
    return make(nodes, [vi("X", F, ["n", 4])], [vi("A", F, None), vi("K", I64, None), vi("S", F, None)], opset, inits)


def check_loops():
    for opset in (17, 23, 25, 28):
        for trips in ("n", "2n"):
            for cond in ("passthrough", "constant"):
                label = f"Loop-{opset} trips {trips} condition {cond}"
                model = loop_model(opset, trips, cond, 3)
                shaped = check_model(label, model, [{"n": 1}, {"n": 3}, {"n": 6}], feeds_for(model))
                s = {v.name: v for v in shaped.graph.output}["S"].type.tensor_type.shape.dim
                FAIL.check(s[0].dim_param == ("n" if trips == "n" else "2*n"), f"{label}: S's length {s[0]}")
                if ORT is not None and opset == 17:
                    session = ort_session(model)
                    for n in (1, 3, 6):
                        got = session.run(["S"], {"X": np.ones((n, 4), np.float32)})[0].shape
                        want = yobx.onnx.evaluate_shapes(shaped, {"n": n}, infer=False)["S"]
                        FAIL.check(got == want, f"{label}: onnxruntime's S {got}, yobx {want}")
        # a count the data decides stays a fresh symbol (and execution agrees it is not n)
        shaped = yobx.onnx.infer_shapes(loop_model(opset, "n", "counter", 3))
        s = {v.name: v for v in shaped.graph.output}["S"].type.tensor_type.shape.dim
        FAIL.check(s[0].dim_param.startswith("unk__"), f"Loop-{opset} with a counter: S's length {s[0]}")
        FAIL.check(run_graph(loop_model(opset, "n", "counter", 3).graph, {"X": np.ones((6, 4), np.float32)})["S"].shape[0] == 3,
                   "the numpy Loop with a counter")


def written_dims(model):
    shaped = yobx.onnx.infer_shapes(model)
    return {v.name: (v.type.tensor_type.elem_type, [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim])
            for v in list(shaped.graph.value_info) + list(shaped.graph.output)}


def check_older_operators(count, seed):
    """The older operators at their newest versions: the random shape-computation graphs of
    tests/onnx/conformance.py (their operators' signatures are those of opset 18, and none
    changes a shape up to 28) shaped at opsets 23, 25 and 28 as at 18."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import conformance
    conformance.OPSET = 18
    rng = random.Random(seed)
    for gid in range(count):
        graph = conformance.Graph(gid, rng).build()
        model = graph.model()
        at18 = written_dims(model)
        for opset in (23, 25, 28):
            model.opset_import[0].version = opset
            FAIL.values += len(at18)
            got = written_dims(model)
            FAIL.check(got == at18, f"conformance graph {gid} at opset {opset}: {got} where opset 18 gives {at18}")


def main():
    global ORT
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("workdir")
    parser.add_argument("--cases", type=int, default=60, help="random models per operator family")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ort", action="store_true", help="also run the opset-17 twins with onnxruntime (Debian 13)")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    if args.ort:
        import onnx.reference  # noqa: F401 -- before onnxruntime: Debian 13's onnxruntime shares ONNX's schema registry
        import onnxruntime
        ORT = onnxruntime
    rng = random.Random(args.seed)
    for make_case in CASES:
        for k in range(args.cases):
            seed = rng.randrange(2**31)
            label, model = make_case(np.random.default_rng(seed))
            try:
                check_model(f"{label} (seed {seed})", model, sizes_for(model), feeds_for(model), seed)
            except Exception as e:  # a yobx error or a numpy refusal: either is a failure of this case
                FAIL.check(False, f"{label} (seed {seed}): {type(e).__name__}: {e}")
    check_decoder(args.tool, args.workdir)
    check_loops()
    check_older_operators(4 * args.cases, args.seed)
    print(f"{FAIL.checked} checks on {FAIL.values} values, {len(FAIL.wrong)} wrong")
    for w in FAIL.wrong[:30]:
        print("  " + w)
    if FAIL.wrong:
        sys.exit(1)
    print("new opsets check ok")


if __name__ == "__main__":
    main()
