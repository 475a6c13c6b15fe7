"""yobx's dims against onnxruntime's execution on random graphs (Debian 13).

Usage: python3 check_random_graphs.py [--graphs N] [--seed S]   (PYTHONPATH: the build's python/)

Builds N random graphs (seeds S to S + N - 1) from an input x: [n, 4, h, w] with the
operators whose dims depend on the input's: Conv and pooling (strides, pads, dilations,
auto_pad, ceil_mode), Slice (negative steps, INT64_MAX and -INT64_MAX ends), Pad, Resize,
Transpose, Concat, Split, Reduce, Flatten, a Reshape computed from Shape, Expand, Tile,
Gather, MatMul, DepthToSpace. yobx.onnx.infer_shapes writes every value's dims;
onnxruntime then runs the graph with every value as an output at three sizes of n, h
and w, and each dim yobx wrote is evaluated there (yobx.onnx.evaluate_shapes) and
compared with the dim onnxruntime produced. Fails on a wrong dim or a yobx error.
Sizes where onnxruntime refuses to run, or where a pooling window is larger than its
padded input, are skipped: there onnxruntime 1.21 computes one window where ONNX's
formula, which yobx follows, gives none (docs/onnx.md, Limits).
"""
import argparse
import random
import sys

import numpy as np
import onnx
import onnx.reference  # noqa: F401 -- before onnxruntime: Debian 13's onnxruntime shares ONNX's schema registry
from onnx import TensorProto, helper, numpy_helper
import onnxruntime

import yobx.onnx

INT64_MAX = 2**63 - 1
POOLS = ("MaxPool", "AveragePool")


class Graph:
    """A graph being built: nodes, initializers, and the float values to build on (name, rank, channels or None)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.seed = seed
        self.nodes, self.inits, self.values, self.count = [], [], [("x", 4, 4)], 0

    def name(self, prefix="v"):
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, values, dtype=np.int64):
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), n))
        return n

    def node(self, op, inputs, outputs=1, **attrs):
        names = [self.name() for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=f"{names[0]}_{op}", **attrs))
        return names if outputs > 1 else names[0]

    def add(self, value, rank, channels=None):
        self.values.append((value, rank, channels))

    def step(self):
        r = self.rng
        x, rank, ch = r.choice(self.values)
        op = r.choice(["conv", "pool", "unary", "binary", "transpose", "slice", "concat", "reduce", "unsqueeze", "pad",
                       "flatten", "reshape", "expand", "gather", "tile", "matmul", "split", "global", "resize", "depth"])
        if op == "conv" and rank == 4 and ch:
            k, out_ch = r.randint(1, 3), r.choice([2, 4, 8])
            w = self.const(np.random.RandomState(self.seed + self.count).randn(out_ch, ch, k, k), np.float32)
            auto_pad = r.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
            attrs = dict(kernel_shape=[k, k], strides=[r.randint(1, 3), r.randint(1, 3)])
            if auto_pad == "NOTSET":
                attrs.update(pads=[r.randint(0, k - 1) for _ in range(4)], dilations=[r.randint(1, 2)] * 2)
            else:
                attrs["auto_pad"] = auto_pad
            self.add(self.node("Conv", [x, w], **attrs), 4, out_ch)
        elif op == "pool" and rank == 4:
            k = r.randint(1, 3)
            attrs = dict(kernel_shape=[k, k], strides=[r.randint(1, 3)] * 2, ceil_mode=r.randint(0, 1))
            if r.random() < 0.5:
                attrs["pads"] = [r.randint(0, k - 1) for _ in range(4)]
            self.add(self.node(r.choice(POOLS), [x], **attrs), 4, ch)
        elif op == "global" and rank == 4:
            self.add(self.node("GlobalAveragePool", [x]), 4, ch)
        elif op == "unary":
            self.add(self.node(r.choice(["Relu", "Sigmoid", "Neg"]), [x]), rank, ch)
        elif op == "binary":
            self.add(self.node(r.choice(["Add", "Mul"]), [x, x]), rank, ch)
        elif op == "transpose":
            perm = list(range(rank))
            r.shuffle(perm)
            self.add(self.node("Transpose", [x], perm=perm), rank, ch if rank > 1 and perm[1] == 1 else None)
        elif op == "slice":
            axis, step = r.randrange(rank), r.choice([1, 1, 2, -1, -2])
            if step > 0:
                start, end = r.choice([0, 1, 2, -3]), r.choice([INT64_MAX, -1, 3, 5])
            else:
                start, end = r.choice([-1, INT64_MAX, 4]), r.choice([-INT64_MAX, 0, 1])
            sliced = self.node("Slice", [x, self.const([start]), self.const([end]), self.const([axis]), self.const([step])])
            self.add(sliced, rank, ch if axis != 1 else None)
        elif op == "concat":
            axis = r.randrange(rank)
            self.add(self.node("Concat", [x, x], axis=axis), rank, (2 * ch if ch else None) if axis == 1 else ch)
        elif op == "reduce" and rank >= 2:
            keep = r.randint(0, 1)
            self.add(self.node("ReduceMean", [x], axes=[r.randrange(rank)], keepdims=keep), rank if keep else rank - 1)
        elif op == "unsqueeze" and rank < 5:
            self.add(self.node("Unsqueeze", [x, self.const([r.randint(0, rank)])]), rank + 1)
        elif op == "pad":
            pads = [r.randint(0, 2) for _ in range(2 * rank)]
            self.add(self.node("Pad", [x, self.const(pads)], mode=r.choice(["constant", "reflect", "edge"])), rank)
        elif op == "flatten":
            self.add(self.node("Flatten", [x], axis=r.randint(0, rank)), 2)
        elif op == "reshape" and rank >= 2:  # [d0, d1 * d2 * ...] computed from Shape
            shape = self.node("Shape", [x])
            first = self.node("Gather", [shape, self.const([0])], axis=0)
            rest = self.node("ReduceProd", [self.node("Gather", [shape, self.const(list(range(1, rank)))], axis=0)], keepdims=1)
            self.add(self.node("Reshape", [x, self.node("Concat", [first, rest], axis=0)]), 2)
        elif op == "expand":
            self.add(self.node("Expand", [x, self.node("Shape", [x])]), rank, ch)
        elif op == "gather":
            indices = r.choice([[0], 0, [0, 0, 0]])
            self.add(self.node("Gather", [x, self.const(indices)], axis=r.randrange(rank)), rank - 1 + np.ndim(indices))
        elif op == "tile":
            self.add(self.node("Tile", [x, self.const([r.randint(1, 3) for _ in range(rank)])]), rank)
        elif op == "matmul" and rank >= 2:
            swapped = self.node("Transpose", [x], perm=list(range(rank - 2)) + [rank - 1, rank - 2])
            self.add(self.node("MatMul", [x, swapped]), rank)
        elif op == "split":
            axis = r.randrange(rank)
            for half in self.node("Split", [self.node("Concat", [x, x], axis=axis)], outputs=2, axis=axis):
                self.add(half, rank)
        elif op == "resize" and rank == 4:
            scales = self.const([1.0, 1.0, r.choice([0.5, 2.0, 1.5]), r.choice([0.5, 2.0, 0.75])], np.float32)
            self.add(self.node("Resize", [x, "", scales], mode="nearest"), 4, ch)
        elif op == "depth" and rank == 4 and ch and ch % 4 == 0:
            self.add(self.node("DepthToSpace", [x], blocksize=2), 4, ch // 4)

    def model(self):
        for _ in range(self.rng.randint(3, 12)):
            self.step()
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, "h", "w"])
        y = helper.make_tensor_value_info(self.values[-1][0], TensorProto.FLOAT, None)
        m = helper.make_model(helper.make_graph(self.nodes, f"random{self.seed}", [x], [y], initializer=self.inits),
                              opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return m


def window_too_large(model, shapes):
    """Whether a pooling window is larger than its padded input at these runtime shapes."""
    for node in model.graph.node:
        if node.op_type not in POOLS or node.input[0] not in shapes:
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        kernel, pads = attrs["kernel_shape"], attrs.get("pads", [0] * 4)
        for i, d in enumerate(shapes[node.input[0]][2:]):
            if d + pads[i] + pads[i + len(kernel)] < kernel[i]:
                return True
    return False


def check(seed, stats):
    model = Graph(seed).model()
    shaped = yobx.onnx.infer_shapes(model)
    written = list(shaped.graph.value_info) + list(shaped.graph.output)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    for v in written:
        probe.graph.output.add().name = v.name  # no type: onnxruntime's own, compared below
    session = onnxruntime.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = random.Random(seed)
    for _ in range(3):
        sizes = {"n": rng.randint(1, 3), "h": rng.randint(9, 40), "w": rng.randint(9, 40)}
        x = np.random.RandomState(seed).rand(sizes["n"], 4, sizes["h"], sizes["w"]).astype(np.float32)
        try:
            results = session.run(None, {"x": x})
        except Exception:  # noqa: BLE001 -- onnxruntime refuses these sizes (a window past the input): nothing to compare
            stats["sizes skipped"] += 1
            continue
        shapes = {"x": x.shape, **{v.name: r.shape for v, r in zip(written, results)}}
        if window_too_large(model, shapes):
            stats["sizes skipped"] += 1
            continue
        expected = yobx.onnx.evaluate_shapes(shaped, sizes, infer=False)
        for v, r in zip(written, results):
            if helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type) != r.dtype:
                raise AssertionError(f"seed {seed}, {v.name}: yobx's type {v.type.tensor_type.elem_type}, onnxruntime's {r.dtype}")
            dims = expected[v.name]
            if dims is None or len(dims) != r.ndim:
                raise AssertionError(f"seed {seed}, {v.name}: yobx's rank {dims}, onnxruntime's shape {r.shape} at {sizes}")
            for d, actual in zip(dims, r.shape):
                stats["dims"] += 1
                if d is None:
                    stats["unknown"] += 1
                elif d != actual:
                    raise AssertionError(f"seed {seed}, {v.name}: yobx {dims}, onnxruntime {r.shape} at {sizes} "
                                         f"(written {[x.dim_param or x.dim_value for x in v.type.tensor_type.shape.dim]})")
    stats["graphs"] += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--graphs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    onnxruntime.set_default_logger_severity(4)  # the sizes onnxruntime refuses are expected
    stats = {"graphs": 0, "dims": 0, "unknown": 0, "sizes skipped": 0}
    failures = []
    for seed in range(args.seed, args.seed + args.graphs):
        try:
            check(seed, stats)
        except Exception as e:  # noqa: BLE001 -- a wrong dim, a yobx error, a model onnxruntime cannot load: each one line
            failures.append(f"seed {seed}: {e}")
    for f in failures:
        print(f)
    print(f"{stats['graphs']} random graphs: {stats['dims']} dims compared with onnxruntime's, {stats['unknown']} not known to yobx, "
          f"{stats['sizes skipped']} sizes skipped; {len(failures)} failures")
    print("random graphs check ok" if not failures else "random graphs check FAILED")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
