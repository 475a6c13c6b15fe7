#!/usr/bin/python3
"""yobx's shape inference against ONNX's own, on random shape-computation graphs.

Usage: conformance.py RUNNER [--graphs N] [--seed S] [--show K]

Builds N random graphs (a fixed seed) of the operators of
docs/shape_inference.md, with symbolic input dimensions and three assignments
of the symbols. For each graph, in a child process (ONNX 1.12 crashes on some
graphs; those are counted): onnx.shape_inference.infer_shapes(strict_mode=True,
data_prop=True) on the symbolic model and on the model with each assignment
substituted. RUNNER (tests/onnx/shape_conformance_runner.cpp) runs yobx's
ShapeInference on the same graphs, per assignment under each broadcast policy
in a draft ShapeEnv whose hints are the assignment, and on constant dims.

Checked, failing the run when violated:
  1. where ONNX's concrete inference succeeds, every yobx run succeeds and each
     dimension, evaluated at the assignment, is ONNX's value;
  2. every dimension ONNX's symbolic inference determines (a constant or an
     input's symbol), every yobx run determines (an expression of the inputs'
     symbols, no fresh symbol) and it is ONNX's at each valid assignment;
  3. yobx determines strictly more dimensions than ONNX overall.
Reported: the counts, and examples of dimensions yobx determines and ONNX does not.
"""
import argparse
import math
import os
import pickle
import random
import subprocess
import sys

import onnx
from onnx import TensorProto, helper, shape_inference

INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
OPSET = min(18, onnx.defs.onnx_opset_version())


class Graph:
    """A random graph: symbols with assignments, float inputs, int64 constants, nodes."""

    def __init__(self, gid, rng):
        self.id = gid
        self.rng = rng
        names = rng.sample(["N", "M", "K"], rng.randint(1, 3))
        # values >= 1: a symbolic dimension here is a size the model was run with, never 0
        self.symbols = {s: [rng.randint(1, 7) for _ in range(3)] for s in names}
        self.inputs = []  # (name, dims)
        self.consts = []  # (name, values, scalar)
        self.nodes = []  # (op, output, inputs, attrs)
        self.tensors = []  # (name, rank): float32 values
        self.shapes = []  # (name, length or None for a scalar): int64 values
        self.count = 0

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def dim(self):
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(list(self.symbols))
        return self.rng.choice([1, 1, 2, 3, 6])

    def add_input(self, rank=None):
        rank = self.rng.randint(1, 3) if rank is None else rank
        name = self.fresh("x")
        self.inputs.append((name, [self.dim() for _ in range(rank)]))
        self.tensors.append((name, rank))
        return name, rank

    def const(self, values, scalar=False):
        name = self.fresh("c")
        self.consts.append((name, list(values), scalar))
        return name

    def node(self, op, inputs, attrs=None, out_prefix="v"):
        out = self.fresh(out_prefix)
        self.nodes.append((op, out, list(inputs), dict(attrs or {})))
        return out

    def index(self, n):
        return self.rng.randint(-n, n - 1)

    def bound(self):
        return self.rng.choice([INT64_MIN, INT64_MAX, -7, -3, -2, -1, 0, 1, 2, 3, 5, 9])

    # --- shape tensors -------------------------------------------------------
    def shape_tensor(self):
        """A 1-D int64 tensor, of a known length, usually computed from shapes."""
        one_d = [s for s in self.shapes if s[1] is not None]
        r = self.rng.random()
        if not one_d or r < 0.3:
            x, rank = self.rng.choice(self.tensors)
            start = self.rng.choice([0, 0, 0, -1, -2, 1, -5, 4])
            end = self.rng.choice([None, None, -1, 1, 2, 9])
            attrs = {"start": start} if start else {}
            if end is not None:
                attrs["end"] = end
            out = self.node("Shape", [x], attrs, "s")
            length = len(shape_range(rank, start, rank if end is None else end))
            self.shapes.append((out, length))
            return out, length
        name, length = self.rng.choice(one_d)
        r = self.rng.random()
        if r < 0.25 and length > 0:
            idx = [self.index(length) for _ in range(self.rng.randint(1, 2))]
            out = self.node("Gather", [name, self.const(idx)], {}, "s")
            self.shapes.append((out, len(idx)))
            return out, len(idx)
        if r < 0.45:
            other, olen = self.rng.choice(one_d)
            extra = [self.rng.choice([-1, 1, 2, 3])] if self.rng.random() < 0.5 else []
            parts = [name, other] + ([self.const(extra)] if extra else [])
            out = self.node("Concat", parts, {"axis": self.rng.choice([0, -1])}, "s")
            self.shapes.append((out, length + olen + len(extra)))
            return out, length + olen + len(extra)
        if r < 0.65 and length > 0:
            op = self.rng.choice(["Add", "Sub", "Mul", "Div", "Mul", "Add"])
            if self.rng.random() < 0.5:
                operand = self.const([self.rng.choice([1, 2, 3, -1])] * self.rng.choice([1, length]))
            else:
                same = [s for s in one_d if s[1] in (length, 1)]
                operand = self.rng.choice(same)[0]
            if op == "Div":
                operand = self.const([self.rng.choice([1, 2, 3])])
            out = self.node(op, [name, operand], {}, "s")
            self.shapes.append((out, length))
            return out, length
        if r < 0.85:
            start, end = self.bound(), self.bound()
            step = self.rng.choice([1, 1, 2, -1, -2, 3])
            ins = [name, self.const([start]), self.const([end]), self.const([0]), self.const([step])]
            out = self.node("Slice", ins, {}, "s")
            norm_len = len(range(length)[slice(*clamp_slice(length, start, end, step))])
            self.shapes.append((out, norm_len))
            return out, norm_len
        if length == 1:
            sq = self.node("Squeeze", [name, self.const([0])], {}, "s")
            self.shapes.append((sq, None))
            out = self.node("Unsqueeze", [sq, self.const([self.rng.choice([0, -1])])], {}, "s")
        else:
            c = self.node("Cast", [name], {"to": "int32"}, "s")
            out = self.node("Cast", [c], {"to": "int64"}, "s")
        self.shapes.append((out, length))
        return out, length

    # --- tensors -------------------------------------------------------------
    def tensor_op(self):
        x, rank = self.rng.choice(self.tensors)
        r = self.rng.random()
        if r < 0.14:  # Reshape, to a target usually computed from the shape
            s, length = self.shape_tensor()
            if length == 0 or self.rng.random() < 0.5:
                picks = [self.node("Gather", [self.node("Shape", [x], {}, "s"), self.const([self.index(rank)])], {}, "s")
                         for _ in range(self.rng.randint(0, 2))]
                parts = picks + [self.const([self.rng.choice([-1, 0, 1, 2, 3])])]
                s = self.node("Concat", parts, {"axis": 0}, "s") if len(parts) > 1 else parts[0]
                length = len(parts)
            attrs = {"allowzero": 1} if self.rng.random() < 0.15 else {}
            out, orank = self.node("Reshape", [x, s], attrs), length
        elif r < 0.28:  # Slice with constant bounds, possibly several axes
            axes = self.rng.sample(range(rank), self.rng.randint(1, rank))
            n = len(axes)
            ins = [x, self.const([self.bound() for _ in range(n)]), self.const([self.bound() for _ in range(n)]),
                   self.const([a - rank if self.rng.random() < 0.4 else a for a in axes]),
                   self.const([self.rng.choice([1, 1, 2, -1, -2, 3]) for _ in range(n)])]
            out, orank = self.node("Slice", ins), rank
        elif r < 0.36:  # Slice with computed bounds
            s, length = self.shape_tensor()
            if length != 1:
                return
            ins = [x, s, self.const([self.bound()])] if self.rng.random() < 0.5 else [x, self.const([self.bound()]), s]
            ins += [self.const([self.rng.randint(-rank, rank - 1)]), self.const([self.rng.choice([1, -1, 2])])]
            out, orank = self.node("Slice", ins), rank
        elif r < 0.46:  # a broadcast with another tensor or a fresh input
            y, yrank = self.rng.choice(self.tensors) if self.rng.random() < 0.5 else self.add_input()
            op = self.rng.choice(["Add", "Mul", "Sub", "Div"])
            a, b = (x, y) if self.rng.random() < 0.5 else (y, x)
            out, orank = self.node(op, [a, b]), max(rank, yrank)
        elif r < 0.52:
            axes = sorted(self.rng.sample(range(rank + 1), self.rng.randint(1, 2)))
            out_rank = rank + len(axes)
            axes = [a - out_rank if self.rng.random() < 0.4 else a for a in axes]
            out, orank = self.node("Unsqueeze", [x, self.const(axes)]), out_rank
        elif r < 0.58:
            if self.rng.random() < 0.5:
                axis = self.rng.randint(-rank, rank - 1)
                out, orank = self.node("Squeeze", [x, self.const([axis])]), rank - 1
            else:
                return  # Squeeze without axes: ONNX leaves the rank unknown on symbolic dims
        elif r < 0.64:
            perm = list(range(rank))
            self.rng.shuffle(perm)
            out, orank = self.node("Transpose", [x], {"perm": perm}), rank
        elif r < 0.72:
            y, yrank = self.rng.choice(self.tensors) if self.rng.random() < 0.4 else self.add_input()
            out, orank = self.node("MatMul", [x, y]), max(rank, yrank) - (rank == 1) - (yrank == 1)
            if rank == 1 and yrank == 1:
                orank = 0
        elif r < 0.80:
            s, length = self.shape_tensor()
            out, orank = self.node("Expand", [x, s]), max(rank, length)
        elif r < 0.88:
            others = [t for t in self.tensors if t[1] == rank]
            y = self.rng.choice(others)[0]
            out, orank = self.node("Concat", [x, y], {"axis": self.rng.randint(-rank, rank - 1)}), rank
        elif r < 0.94:
            idx = [self.index(3) for _ in range(self.rng.randint(0, 2))]
            indices = self.const(idx) if idx else self.const([self.index(2)], scalar=True)
            axis = self.rng.randint(-rank, rank - 1)
            out, orank = self.node("Gather", [x, indices], {"axis": axis}), rank - 1 + (1 if idx else 0)
        elif r < 0.97:
            out, orank = self.node("Relu", [x]), rank
        else:
            out = self.node("NonZero", [x])
            out = self.node("Cast", [out], {"to": "float32"})
            orank = 2
        if 1 <= orank <= 4:
            self.tensors.append((out, orank))

    def build(self):
        for _ in range(self.rng.randint(1, 2)):
            self.add_input()
        for _ in range(self.rng.randint(3, 9)):
            if self.rng.random() < 0.3:
                self.shape_tensor()
            else:
                self.tensor_op()
        return self

    # --- both encodings --------------------------------------------------------
    def text(self):
        lines = [f"graph {self.id}"]
        lines += [f"symbol {s} " + " ".join(map(str, v)) for s, v in self.symbols.items()]
        lines += [f"input {n} float32 " + " ".join(map(str, d)) for n, d in self.inputs]
        for n, values, scalar in self.consts:
            lines.append(("scalar " if scalar else "const ") + n + " " + " ".join(map(str, values)))
        for op, out, ins, attrs in self.nodes:
            words = [op, out] + ins
            for k, v in attrs.items():
                words.append(f"{k}=" + (",".join(map(str, v)) if isinstance(v, list) else str(v)))
            lines.append("node " + " ".join(words))
        lines.append("end")
        return "\n".join(lines) + "\n"

    def input_shapes(self, k):
        """name -> the input's dims at assignment k."""
        return {n: [self.symbols[x][k] if isinstance(x, str) else x for x in d] for n, d in self.inputs}

    def model(self, assignment=None):
        shapes = self.inputs if assignment is None else self.input_shapes(assignment).items()
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in shapes]
        inits = [helper.make_tensor(n, TensorProto.INT64, [] if scalar else [len(v)], v) for n, v, scalar in self.consts]
        nodes = []
        for op, out, ins, attrs in self.nodes:
            a = dict(attrs)
            if op == "Cast":
                a["to"] = {"int32": TensorProto.INT32, "int64": TensorProto.INT64, "float32": TensorProto.FLOAT}[a["to"]]
            nodes.append(helper.make_node(op, ins, [out], **a))
        outputs = [helper.make_empty_tensor_value_info(self.nodes[-1][1])] if self.nodes else []
        graph = helper.make_graph(nodes, f"g{self.id}", inputs, outputs, initializer=inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def shape_range(rank, start, end):
    """The positions Shape(start, end) takes: negative counted from the rank, clamped to [0, rank]."""
    norm = lambda v: min(max(v + rank if v < 0 else v, 0), rank)
    return range(norm(start), norm(end))


def clamp_slice(n, start, end, step):
    """ONNX's Slice of range(n) as Python slice arguments (for lengths only), an end of
    INT32_MAX or INT64_MAX read as numpy's None as ONNX Runtime (and yobx) read it."""
    def norm(v, lo, hi):
        return min(max(v + n if v < 0 else v, lo), hi)
    if end in (INT32_MAX, INT64_MAX):
        end = n if step > 0 else -n - 1
    if step > 0:
        return norm(start, 0, n), norm(end, 0, n), step
    s, e = norm(start, 0, n - 1), norm(end, -1, n - 1)
    return (s, None if e < 0 else e, step) if s >= 0 else (0, 0, 1)


def onnx_dims(model):
    """name -> list of dims (int, symbol name, or None) for every value ONNX typed."""
    out = {}
    for vi in list(model.graph.value_info) + list(model.graph.output):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        out[vi.name] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
    return out


def infer(model):
    try:
        return onnx_dims(shape_inference.infer_shapes(model, strict_mode=True, data_prop=True))
    except Exception as e:  # noqa: BLE001 -- onnx raises InferenceError, ValidationError, RuntimeError...
        return str(e).splitlines()[0] if str(e) else type(e).__name__


def concrete_shapes(graph, dims, k):
    """Every value's shape at assignment k: the inputs' and ONNX's concrete result (dims)."""
    known = graph.input_shapes(k)
    known.update(dims)
    return known


def trunc_div(a, b):
    """Integer division toward zero (ONNX Runtime's), None for a division by zero."""
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def violates_spec(graph, dims, k):
    """A requirement of the ONNX specification that ONNX's inference does not check,
    broken at a concrete assignment (dims: ONNX's concrete result): Reshape keeps the
    element count, Gather's indices are within the axis. Such a graph fails at run time."""
    consts = {n: v for n, v, _ in graph.consts}
    known = concrete_shapes(graph, dims, k)
    prod = lambda ds: math.prod(ds) if all(isinstance(d, int) for d in ds) else None
    for op, out, ins, attrs in graph.nodes:
        if op == "Reshape" and out in known and ins[0] in known:
            a, b = prod(known[ins[0]]), prod(known[out])
            if a is not None and b is not None and a != b:
                return f"{out}: Reshape from {known[ins[0]]} to {known[out]}"
        if op == "Gather" and ins[0] in known:
            data = known[ins[0]]
            axis = attrs.get("axis", 0)
            d = data[axis] if -len(data) <= axis < len(data) else None
            if isinstance(d, int) and any(not -d <= i < d for i in consts[ins[1]]):
                return f"{out}: Gather of {consts[ins[1]]} on an axis of {d}"
    return None


def shape_values(graph, dims, k):
    """The values of the int64 shape tensors at a concrete assignment, where they follow
    from dims (ONNX's result) through Shape, Gather, Concat, Add, Sub, Mul, Div, Cast,
    Squeeze and Unsqueeze (the rest are unknown: None). Only used to find Expands whose
    target does not broadcast, which ONNX's inference does not check."""
    vals = {n: (v if not scalar else v[0]) for n, v, scalar in graph.consts}
    known = concrete_shapes(graph, dims, k)
    arith = {"Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b, "Div": trunc_div}
    for op, out, ins, attrs in graph.nodes:
        args = [vals.get(i) for i in ins]
        if op == "Shape" and ins[0] in known:
            d = known[ins[0]]
            vals[out] = [d[i] for i in shape_range(len(d), attrs.get("start", 0), attrs.get("end", len(d)))]
        elif op == "Gather" and isinstance(args[0], list) and args[1] is not None:
            idx = args[1]
            pick = lambda i: args[0][i] if -len(args[0]) <= i < len(args[0]) else None
            vals[out] = [pick(i) for i in idx] if isinstance(idx, list) else pick(idx)
        elif op == "Concat" and all(isinstance(a, list) for a in args):
            vals[out] = [x for a in args for x in a]
        elif op in arith and all(isinstance(a, list) for a in args):
            a, b = args
            n = max(len(a), len(b))
            vals[out] = [arith[op](a[0 if len(a) == 1 else i], b[0 if len(b) == 1 else i]) for i in range(n)]
        elif op in ("Cast", "Identity") and ins[0] in vals:
            vals[out] = args[0]
        elif op == "Squeeze" and isinstance(args[0], list) and len(args[0]) == 1:
            vals[out] = args[0][0]
        elif op == "Unsqueeze" and args[0] is not None and not isinstance(args[0], list):
            vals[out] = [args[0]]
    return vals


def expand_breaks(graph, dims, k):
    """An Expand whose target does not broadcast with its input (or is not known here)."""
    vals = None
    known = concrete_shapes(graph, dims, k)
    for op, out, ins, _ in graph.nodes:
        if op != "Expand":
            continue
        vals = vals or shape_values(graph, dims, k)
        target, shape = vals.get(ins[1]), known.get(ins[0])
        if not isinstance(target, list) or any(t is None for t in target) or shape is None:
            return f"{out}: the Expand target is not known"
        for a, b in zip(reversed(shape), reversed(target)):
            if a != b and a != 1 and b != 1:
                return f"{out}: Expand of {shape} to {target}"
    return None


def onnx_defect(graph, dims):
    """Where ONNX's inference and ONNX Runtime (1.21) differ on a Slice, at a concrete
    assignment, yobx following ONNX Runtime: a negative step on an empty dimension (1 in
    ONNX's inference, 0 in ONNX Runtime), and an end of exactly INT32_MAX or INT64_MAX with
    a negative step (nothing in ONNX, through the first element in ONNX Runtime, which
    reads it as numpy's None). The difference flows on."""
    consts = {n: v for n, v, _ in graph.consts}
    for op, out, ins, _ in graph.nodes:
        if op == "Slice":
            steps = consts[ins[4]]
            for axis, end, step in zip(consts[ins[3]], consts.get(ins[2], [None] * len(steps)), steps):
                if step < 0 and ins[0] in dims and dims[ins[0]][axis] == 0:
                    return f"{out}: a backward Slice of an empty dimension"
                if step < 0 and end in (INT32_MAX, INT64_MAX):
                    return f"{out}: a backward Slice to INT64_MAX"
    return None


def onnx_side(graph):
    """ONNX's results in a child process: (symbolic, [concrete per assignment]) or None if it crashed."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            result = (infer(graph.model()), [infer(graph.model(k)) for k in range(3)])
            with os.fdopen(write, "wb") as f:
                pickle.dump(result, f)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) or not data:
        return None
    return pickle.loads(data)


def yobx_side(runner, graphs):
    """(graph id, assignment, policy) -> ({value: [(value or None, determined, expr)]}, error or None)."""
    text = "".join(g.text() for g in graphs)
    proc = subprocess.run([runner], input=text, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"the runner failed ({proc.returncode}): {proc.stderr}")
    runs, key = {}, None
    for line in proc.stdout.splitlines():
        f = line.split("\t")
        if f[0] == "run":
            key = (f[1], int(f[2]), f[3])
            runs[key] = ({}, None)
        elif f[0] == "value":
            dims = []
            for d in f[2:]:
                v, det, expr = d.split("|", 2)
                dims.append((None if v == "?" else int(v), det == "D", expr))
            runs[key][0][f[1]] = dims
        elif f[0] == "error":
            runs[key] = (runs[key][0], f"{f[1]}: {f[2]}")
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runner")
    ap.add_argument("--graphs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261124)
    ap.add_argument("--show", type=int, default=8)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    graphs = [Graph(str(i), rng).build() for i in range(args.graphs)]
    runs = yobx_side(args.runner, graphs)
    policies = ["strict", "sym_max", "new_symbol", "concrete"]

    failures, more_precise = [], []
    stats = dict(onnx_defect=0, sym_max_zero=0, undecided=0, crashed=0, valid_runs=0, dims_checked=0, onnx_symbolic=0, yobx_symbolic=0, yobx_only=0, symbolic_dims=0)
    for g in graphs:
        onnx_result = onnx_side(g)
        if onnx_result is None:
            stats["crashed"] += 1
            continue
        symbolic, concrete = onnx_result
        names = [out for _, out, _, _ in g.nodes]
        # ONNX decides the run when its inference succeeds, gives every value a shape (unknown
        # dims allowed) and no requirement it does not check is broken
        # A dim ONNX leaves unknown at a concrete assignment may hide a broken requirement (an
        # Expand to values ONNX does not check): only NonZero's count (and where that symbol flows
        # unchanged) is unknown by nature.
        def decided(k):
            if not isinstance(concrete[k], dict) or not all(n in concrete[k] for n in names):
                return False
            counts = {d for op, out, _, _ in g.nodes if op == "NonZero" for d in concrete[k].get(out, []) if isinstance(d, str)}
            return all(isinstance(d, int) or d in counts for n in names for d in concrete[k][n])
        defect = [isinstance(concrete[k], dict) and onnx_defect(g, concrete[k]) for k in range(3)]
        valid = [k for k in range(3) if decided(k) and not defect[k]
                 and not violates_spec(g, concrete[k], k) and not expand_breaks(g, concrete[k], k)]
        stats["onnx_defect"] += sum(1 for d in defect if d)
        stats["undecided"] += sum(1 for k in range(3) if isinstance(concrete[k], dict)) - len(valid)
        for k in valid:
            for policy in policies:
                values, error = runs[(g.id, k, policy)]
                stats["valid_runs"] += 1
                where = f"graph {g.id}, assignment {k} ({', '.join(f'{s}={v[k]}' for s, v in g.symbols.items())}), {policy}"
                if error:
                    failures.append(f"{where}: yobx fails where ONNX succeeds: {error}")
                    continue
                for name in names:
                    expected = concrete[k].get(name)
                    if expected is None:
                        continue
                    got = values.get(name)
                    if got is None or len(got) != len(expected):
                        failures.append(f"{where}: {name} has rank {len(expected)} in ONNX, yobx gives {got}")
                        continue
                    for i, (e, (v, _, expr)) in enumerate(zip(expected, got)):
                        if isinstance(e, int):
                            stats["dims_checked"] += 1
                            strict = runs[(g.id, k, "strict")][0].get(name)
                            if v != e and policy == "sym_max" and e == 0 and strict and strict[i][0] == 0:
                                stats["sym_max_zero"] += 1  # its documented assumption: no side is 0 against 1
                            elif v != e:
                                failures.append(f"{where}: {name}[{i}] is {e} in ONNX, yobx gives {expr} = {v}")
        # symbolic determination, on the runs of the valid assignments
        if not isinstance(symbolic, dict) or not valid:
            continue
        for name in names:
            dims = symbolic.get(name)
            if dims is None and name in runs[(g.id, valid[0], "strict")][0]:
                dims = [None] * len(runs[(g.id, valid[0], "strict")][0][name])  # no shape at all in ONNX
            for k in valid:
                for policy in policies[:3]:
                    got = runs[(g.id, k, policy)][0].get(name)
                    if got is None or dims is None or len(got) != len(dims):
                        continue
                    for i, d in enumerate(dims):
                        onnx_knows = isinstance(d, int) or d in g.symbols
                        det, expr = got[i][1], got[i][2]
                        if policy == "strict" and k == valid[0]:
                            stats["symbolic_dims"] += 1
                            stats["onnx_symbolic"] += onnx_knows
                            stats["yobx_symbolic"] += det
                        if onnx_knows and not det:
                            failures.append(f"graph {g.id}, {policy}: ONNX determines {name}[{i}] = {d}, yobx gives {expr}")
                        if not onnx_knows and det and policy == "strict" and k == valid[0]:
                            stats["yobx_only"] += 1
                            if len(more_precise) < args.show:
                                more_precise.append(f"graph {g.id}: {name}[{i}] is {expr} in yobx, {d or '?'} in ONNX")

    print(f"onnx {onnx.__version__}, opset {OPSET}, seed {args.seed}: {len(graphs)} graphs, "
          f"{stats['crashed']} crashed ONNX's inference")
    print(f"runs where ONNX's concrete inference decides the graph: {stats['valid_runs']}, dims compared: "
          f"{stats['dims_checked']}; assignments ONNX accepts without deciding: {stats['undecided']}")
    print(f"symbolic dims: {stats['symbolic_dims']}, determined by ONNX: {stats['onnx_symbolic']}, "
          f"by yobx: {stats['yobx_symbolic']}, by yobx only: {stats['yobx_only']}")
    print(f"assignments where ONNX's inference and ONNX Runtime differ on a backward Slice (of an empty dimension, "
          f"or to INT64_MAX), not compared: {stats['onnx_defect']}")
    print(f"sym_max dims that are 0 where its Max (a side of 0 against 1, its documented assumption) says 1: "
          f"{stats['sym_max_zero']}")
    for line in more_precise:
        print("  more precise: " + line)
    if stats["yobx_symbolic"] <= stats["onnx_symbolic"]:
        failures.append("yobx does not determine strictly more dims than ONNX")
    if failures:
        print(f"{len(failures)} failure(s):")
        for line in failures[:40]:
            print("  " + line)
        return 1
    print("OK: yobx agrees with every concrete ONNX result and determines every dim ONNX determines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
