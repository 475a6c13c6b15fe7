"""yobx's dims against onnxruntime's execution on random graphs (Debian 13).

Usage: python3 check_random_graphs.py [--graphs N] [--shape-graphs M] [--seed S]   (PYTHONPATH: the build's python/)

Builds N random graphs (seeds S to S + N - 1) from an input x: [n, 4, h, w] with the
operators whose dims depend on the input's: Conv and pooling (strides, pads, dilations,
auto_pad, ceil_mode), Slice (negative steps, INT64_MAX and -INT64_MAX ends), Pad, Resize,
Transpose, Concat, Split, Reduce, Flatten, a Reshape computed from Shape, Expand, Tile,
Gather, MatMul, DepthToSpace; and M graphs of shape computations (seeds S to S + M - 1):
Shape (with start and end), Size, Gather, Slice, Concat, Unsqueeze, the Reduce family
and integer arithmetic (Add, Sub, Mul, Div, Mod, Max, Min) on them, sizes through floats
(Cast to float32 or float64, Mul or Div by a float constant, Floor, Ceil, Cast back), consumed by the
operators that take shapes, sizes or counts as inputs (ConstantOfShape, Range, Expand,
Tile, Slice, Reshape, Resize with sizes or with scales such as 0.7, Pad, TopK, OneHot),
with Where, Einsum, ReduceSum, ConvTranspose, CumSum, ArgMax, SpaceToDepth,
LayerNormalization and Squeeze beside them. yobx.onnx.infer_shapes writes every value's
dims; onnxruntime then runs the graph with every value as an output at three sizes of n,
h and w, and each dim yobx wrote is evaluated there (yobx.onnx.evaluate_shapes) and
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
# ConstantOfShape's value attribute (make_node copies it into each node)
ONE = helper.make_tensor("value", TensorProto.FLOAT, [1], [1.0])
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
        return self.finish(13)

    def finish(self, opset):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, "h", "w"])
        y = helper.make_tensor_value_info(self.values[-1][0], TensorProto.FLOAT, None)
        m = helper.make_model(helper.make_graph(self.nodes, f"random{self.seed}", [x], [y], initializer=self.inits),
                              opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m


class ShapeGraph(Graph):
    """A graph of shape computations: float values (name, rank, full) built from x, int64 vectors
    (name, length) and scalars computed from their shapes, and the operators consuming them.
    `full`: the value cannot be empty. onnxruntime 1.21 stops the process with SIGFPE on an
    empty input to TopK, ArgMax, Einsum and ReduceMean, so those take full values only."""

    def __init__(self, seed):
        super().__init__(seed)
        self.values, self.vectors, self.scalars = [("x", 4, True)], [], []

    def vector(self, length=None):
        fits = [v for v in self.vectors if length is None or v[1] == length]
        return self.rng.choice(fits) if fits else (None, None)

    def operand(self):
        """A scalar (length None) or a vector and its length, half and half when there are both."""
        r = self.rng
        return (r.choice(self.scalars), None) if self.scalars and (not self.vectors or r.random() < 0.5) else self.vector()

    def keep(self, value, length):
        """A computed value among the scalars (length None) or the vectors."""
        if length is None:
            self.scalars.append(value)
        else:
            self.vectors.append((value, length))

    def clipped(self, v, low, high=None):
        """v's values clamped to [low, high] (the sizes and counts a consumer accepts)."""
        v = self.node("Max", [v, self.const(low)])
        return v if high is None else self.node("Min", [v, self.const(high)])

    def step(self):
        r = self.rng
        x, rank, full = r.choice(self.values)
        op = r.choice(["shape", "shape", "size", "gather", "arith", "arith", "arith", "concat", "reduce", "slice_vector",
                       "constant_of_shape", "range", "expand", "tile", "slice", "reshape", "resize", "pad", "topk", "where",
                       "einsum", "reduce_sum", "conv_transpose", "cumsum", "argmax", "onehot", "squeeze", "space_to_depth",
                       "layer_norm", "float_arith", "float_arith"])
        if op == "shape":
            start, end = r.randint(-rank, rank), r.randint(-rank, rank + 1)
            self.vectors.append((self.node("Shape", [x], start=start, end=end), len(range(rank)[start:end])))
        elif op == "size":
            self.scalars.append(self.node("Size", [x]))
        elif op == "gather" and self.vectors:
            v, length = self.vector()
            if length == 0:
                return
            if r.random() < 0.5:
                self.scalars.append(self.node("Gather", [v, self.const(r.randrange(-length, length))], axis=0))
            else:
                indices = [r.randrange(-length, length) for _ in range(r.randint(1, 3))]
                self.vectors.append((self.node("Gather", [v, self.const(indices)], axis=0), len(indices)))
        elif op == "arith" and (self.vectors or self.scalars):
            o = r.choice(["Add", "Sub", "Mul", "Div", "Mod", "Max", "Min"])
            a, length = self.operand()
            if r.random() < 0.5:
                b = self.const({"Add": r.randint(-3, 5), "Sub": r.randint(-2, 4), "Mul": r.randint(1, 3), "Div": r.randint(1, 4),
                                "Mod": r.randint(2, 5), "Max": r.randint(0, 20), "Min": r.randint(1, 30)}[o])
            else:  # a scalar, or a vector of a's length
                b = r.choice(self.scalars + [v for v, n in self.vectors if length is not None and n == length])
                if o in ("Div", "Mod"):
                    b = self.clipped(b, 1)
            out = self.node(o, [a, b])
            self.keep(out, length)
        elif op == "float_arith" and (self.vectors or self.scalars):
            # a size through floats and back, as exporters write `int(h * 0.5)` and `math.ceil(h / 3)`
            a, length = self.operand()
            dtype = r.choice([TensorProto.FLOAT, TensorProto.FLOAT, TensorProto.DOUBLE])
            np_type = np.float32 if dtype == TensorProto.FLOAT else np.float64
            f = self.node("Cast", [a], to=dtype)
            if r.random() < 0.3:  # integers stay integers
                f = self.node(r.choice(["Add", "Mul", "Sub"]), [f, self.const(float(r.randint(1, 3)), np_type)])
            factors = [0.5, 0.7, 1 / 3, 2.0, 1.5, 0.25, 1.3, 3.0, 0.6, -0.5]
            if length and r.random() < 0.5:
                c = self.const([r.choice(factors) for _ in range(length)], np_type)
            else:
                c = self.const(r.choice(factors), np_type)
            f = self.node(r.choice(["Mul", "Mul", "Div"]), [f, c] if r.random() < 0.7 else [c, f])
            if r.random() < 0.3:  # torch's interpolate casts its product to float32 again
                f = self.node("Cast", [f], to=dtype)
            rounding = r.choice(["Floor", "Ceil", None])
            if rounding:
                f = self.node(rounding, [f])
            out = self.node("Cast", [f], to=TensorProto.INT64)
            self.keep(out, length)
        elif op == "concat" and (self.vectors or self.scalars):
            parts, length = [], 0
            for _ in range(r.randint(1, 3)):
                if self.scalars and (not self.vectors or r.random() < 0.4):
                    parts.append(self.node("Unsqueeze", [r.choice(self.scalars), self.const([0])]))
                    length += 1
                else:
                    v, n = self.vector()
                    parts.append(v)
                    length += n
            self.vectors.append((self.node("Concat", parts, axis=0), length))
        elif op == "reduce" and self.vectors:
            v, length = self.vector()
            if length:
                o = r.choice(["ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin"])
                if r.random() < 0.5:
                    self.vectors.append((self.node(o, [v], keepdims=1), 1))
                else:
                    self.scalars.append(self.node(o, [v], keepdims=0))
        elif op == "slice_vector" and self.vectors:
            v, length = self.vector()
            start, end = r.randint(-length - 1, length), r.choice([length, INT64_MAX, -1, 1])
            self.vectors.append((self.node("Slice", [v, self.const([start]), self.const([end])]), len(range(length)[start:end])))
        elif op == "constant_of_shape" and self.vectors:
            v, length = self.vector()
            if 1 <= length <= 4:
                self.add(self.node("ConstantOfShape", [self.clipped(v, 1, 64)], value=ONE), length, True)
        elif op == "range" and self.scalars:
            limit = self.clipped(r.choice(self.scalars), 0, 10000)
            ranged = self.node("Range", [self.const(r.randint(0, 2)), limit, self.const(r.choice([1, 1, 2, 3]))])
            self.add(self.node("Cast", [ranged], to=TensorProto.FLOAT), 1, False)
        elif op == "expand" and self.vectors:
            v, length = self.vector()
            if 1 <= length <= 5:
                ones = self.const(np.ones([1] * r.randint(0, length)), np.float32)
                self.add(self.node("Expand", [ones, self.clipped(v, 1, 64)]), length, True)
        elif op == "tile":
            v, _ = self.vector(rank)
            if v:
                self.add(self.node("Tile", [x, self.clipped(v, 1, 3)]), rank, full)
        elif op == "slice" and self.scalars and rank:
            start = self.node("Unsqueeze", [self.node("Div", [r.choice(self.scalars), self.const(r.choice([2, 3, 4]))]), self.const([0])])
            end = self.const([r.choice([INT64_MAX, 2**31 - 1, -1, 100])])
            self.add(self.node("Slice", [x, start, end, self.const([r.randrange(rank)]), self.const([r.choice([1, 2, -1, -2])])]), rank,
                     False)
        elif op == "reshape" and rank >= 2:
            kept = self.node("Slice", [self.node("Shape", [x]), self.const([0]), self.const([r.randint(1, rank - 1)])])
            self.add(self.node("Reshape", [x, self.node("Concat", [kept, self.const([-1])], axis=0)]), None, full)
        elif op == "resize" and rank == 4:
            v, _ = self.vector(4)
            if v and r.random() < 0.5:
                self.add(self.node("Resize", [x, "", "", self.clipped(v, 1, 64)], mode=r.choice(["nearest", "linear"])), 4, full)
            else:
                scales = self.const([1.0, 1.0, r.choice([0.5, 1.5, 2.0, 0.3, 0.7]), r.choice([0.7, 2.0, 1.25, 1 / 3])], np.float32)
                self.add(self.node("Resize", [x, "", scales], mode=r.choice(["nearest", "linear", "cubic"])), 4, False)
        elif op == "pad":
            v, _ = self.vector(2 * rank)
            pads = self.clipped(v, 0, 3) if v else self.const([r.randint(0, 2) for _ in range(2 * rank)])
            self.add(self.node("Pad", [x, pads]), rank, full)
        elif op == "topk" and full and rank:  # k = 1: a dim may be 1
            values, _ = self.node("TopK", [x, self.const([1])], outputs=2, axis=r.randrange(-rank, rank), largest=r.randint(0, 1))
            self.add(values, rank, True)
        elif op == "where":  # x against itself or a tensor of 1s: broadcasts that hold at every size
            y = x if r.random() < 0.5 else self.const(np.ones([1] * r.randint(0, rank)), np.float32)
            self.add(self.node("Where", [self.node("Greater", [x, self.const(0.5, np.float32)]), x, y]), rank, full)
        elif op == "einsum" and rank == 4 and full:
            equation = r.choice(["abcd->adbc", "abcd->ab", "abcd,abdc->abcc", "abcd->"])
            operands = [x, self.node("Transpose", [x], perm=[0, 1, 3, 2])] if "," in equation else [x]
            self.add(self.node("Einsum", operands, equation=equation), len(equation.split("->")[1]), True)
        elif op == "reduce_sum" and rank:
            keep, axes = r.randint(0, 1), sorted(r.sample(range(rank), r.randint(1, rank)))
            self.add(self.node("ReduceSum", [x, self.const(axes)], keepdims=keep), rank if keep else rank - len(axes), full)
        elif op == "conv_transpose" and x == "x":
            s = r.randint(1, 3)
            attrs = dict(strides=[s, s], output_padding=[r.randint(0, s - 1)] * 2, pads=[r.randint(0, 2) for _ in range(4)],
                         dilations=[r.randint(1, 2)] * 2)
            if r.random() < 0.3:
                attrs = dict(strides=[s, s], auto_pad=r.choice(["SAME_UPPER", "SAME_LOWER"]))
            self.add(self.node("ConvTranspose", [x, self.const(np.ones((4, 2, 3, 3)), np.float32)], **attrs), 4, True)
        elif op == "cumsum" and rank:
            self.add(self.node("CumSum", [x, self.const(r.randrange(rank))]), rank, full)
        elif op == "argmax" and full and rank:
            keep = r.randint(0, 1)
            largest = self.node("ArgMax", [x], axis=r.randrange(rank), keepdims=keep)
            self.add(self.node("Cast", [largest], to=TensorProto.FLOAT), rank if keep else rank - 1, True)
        elif op == "onehot" and self.scalars:
            indices = self.node("Range", [self.const(0), self.const(3), self.const(1)])
            depth = self.clipped(r.choice(self.scalars), 1, 10000)
            self.add(self.node("OneHot", [indices, depth, self.const([0.0, 1.0], np.float32)], axis=r.choice([-1, 0])), 2, True)
        elif op == "squeeze":
            axis = r.randint(0, rank)
            self.add(self.node("Squeeze", [self.node("Unsqueeze", [x, self.const([axis])]), self.const([axis])]), rank, full)
        elif op == "space_to_depth" and rank == 4:
            self.add(self.node("SpaceToDepth", [x], blocksize=2), 4, False)
        elif op == "layer_norm" and rank and full:
            scale = self.node("ConstantOfShape", [self.node("Shape", [x], start=-1)], value=ONE)
            self.add(self.node("LayerNormalization", [x, scale], axis=-1), rank, full)

    def add(self, value, rank, full):
        if rank is not None:
            self.values.append((value, rank, full))

    def model(self):
        for _ in range(self.rng.randint(4, 16)):
            self.step()
        return self.finish(17)


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


def check(family, seed, stats):
    model = family(seed).model()
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
        # onnxruntime 1.21 gives None for some empty int64 results (a Div of two empty vectors): not compared
        pairs = [(v, r) for v, r in zip(written, results) if r is not None]
        stats["values skipped"] += len(written) - len(pairs)
        shapes = {"x": x.shape, **{v.name: r.shape for v, r in pairs}}
        if window_too_large(model, shapes):
            stats["sizes skipped"] += 1
            continue
        expected = yobx.onnx.evaluate_shapes(shaped, sizes, infer=False)
        for v, r in pairs:
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
    parser.add_argument("--shape-graphs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    onnxruntime.set_default_logger_severity(4)  # the sizes onnxruntime refuses are expected
    stats = {"graphs": 0, "dims": 0, "unknown": 0, "sizes skipped": 0, "values skipped": 0}
    failures = []
    for family, name, count in ((Graph, "graph", args.graphs), (ShapeGraph, "shape graph", args.shape_graphs)):
        for seed in range(args.seed, args.seed + count):
            try:
                check(family, seed, stats)
            except Exception as e:  # noqa: BLE001 -- a wrong dim, a yobx error, a model onnxruntime cannot load: each one line
                failures.append(f"{name} {seed}: {e}")
    for f in failures:
        print(f)
    print(f"{stats['graphs']} random graphs: {stats['dims']} dims compared with onnxruntime's, {stats['unknown']} not known to yobx, "
          f"{stats['sizes skipped']} sizes skipped, {stats['values skipped']} empty results onnxruntime gave as None; "
          f"{len(failures)} failures")
    print("random graphs check ok" if not failures else "random graphs check FAILED")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
