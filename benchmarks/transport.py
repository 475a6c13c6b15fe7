"""What each of the Python module's transport mechanisms gains, on and off side by side.

Usage: python3 benchmarks/transport.py [MODEL.onnx ...]   (PYTHONPATH: the build's python/)

yobx.onnx.infer_shapes(model) on a ModelProto decides what crosses into C++ and how
(python/yobx/onnx/__init__.py, "What crosses into C++"). Each mechanism is switched off by
setting its constant, and the call is timed with it on and off in turns, in one process, on
the same ModelProtos: the best of as many calls as `--seconds` (0.3 s a side by default) holds,
three rounds interleaved, the best of each side kept. The models: generated ones of the shapes
the mechanisms were made for (an 18-node graph, a 233-node decoder, an 8,000-node one, a model of
large weights and few nodes, one of many 16 KiB weights), and any .onnx file given.
A mechanism is kept where it gains at least 10% on some model (docs/performance.md).
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import yobx.onnx as yo


def chain(layers, width, name, weight_every=1):
    """A chain of MatMul + Add + Relu over [batch, seq, width], a [width, width] weight each layer."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", width])
    nodes, inits, prev = [], [], "x"
    rng = np.random.default_rng(0)
    for i in range(layers):
        w = f"w{i}" if i % weight_every == 0 else f"w{i - i % weight_every}"
        if i % weight_every == 0:
            inits.append(numpy_helper.from_array(rng.standard_normal((width, width), dtype=np.float32), w))
            inits.append(numpy_helper.from_array(np.zeros(width, np.float32), f"b{i}"))
        b = f"b{i - i % weight_every}"
        nodes += [helper.make_node("MatMul", [prev, w], [f"m{i}"]), helper.make_node("Add", [f"m{i}", b], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"])]
        prev = f"r{i}"
    y = helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)
    return name, helper.make_model(helper.make_graph(nodes, name, [x], [y], initializer=inits),
                                   opset_imports=[helper.make_opsetid("", 17)])


def models():
    return [
        chain(6, 16, "small (18 nodes, 6 KiB)"),
        chain(78, 32, "decoder-like (234 nodes, 0.3 MB)"),
        chain(2700, 16, "large graph (8,100 nodes, 3 MB)"),
        chain(12, 600, "large weights (36 nodes, 17 MB)"),
        chain(200, 64, "many 16 KiB weights (600 nodes, 3.3 MB)"),
        chain(12, 1024, "47 MB of weights (36 nodes)"),
        chain(2500, 64, "40 MB in 16 KiB weights (7,500 nodes)"),
    ]


# each mechanism: its name and the constants that switch it off
MECHANISMS = [
    ("inference beside the copy (_OVERLAP_FROM, _OVERLAP_BYTES)", {"_OVERLAP_FROM": 1 << 60, "_OVERLAP_BYTES": 1 << 60}),
    ("weights not serialized past 1 MB (_LIGHT_FROM)", {"_LIGHT_FROM": 1 << 60}),
    ("serialized whole when mostly nodes (_LIGHT_PER_ITEM)", {"_LIGHT_PER_ITEM": 0}),
    ("payloads of 1 KiB to 64 KiB copied with the rest (_LEFT_FROM)", {"_LEFT_FROM": 1 << 10}),
    ("C++ skips payloads of 1 KiB or more (_LEFT_OUT_FROM)", {"_LEFT_OUT_FROM": 64 << 10}),
]


def best(call, seconds):
    times, end = [], time.perf_counter() + seconds
    while len(times) < 5 or time.perf_counter() < end:
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
        if len(times) >= 2000:
            break
    return min(times)


def side_by_side(model, off, seconds):
    """The best time with the mechanism on and off, three rounds interleaved (`model` a ModelProto
    or its bytes)."""
    saved = {k: getattr(yo, k) for k in off}
    on_t, off_t = [], []
    try:
        for _ in range(3):
            for k, v in saved.items():
                setattr(yo, k, v)
            on_t.append(best(lambda: yo.infer_shapes(model), seconds))
            for k, v in off.items():
                setattr(yo, k, v)
            off_t.append(best(lambda: yo.infer_shapes(model), seconds))
    finally:
        for k, v in saved.items():
            setattr(yo, k, v)
    return min(on_t), min(off_t)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--only", help="the mechanisms whose name contains this")
    parser.add_argument("--bytes", action="store_true", help="also each model as its serialized bytes")
    args = parser.parse_args()
    todo = models() + [(os.path.basename(p), onnx.load(p)) for p in args.models]
    if args.bytes:
        todo += [(name + ", as bytes", m.SerializeToString()) for name, m in list(todo)]
    print(f"| mechanism | model | on | off | off / on |\n|---|---|---|---|---|")
    for mechanism, off in MECHANISMS:
        if args.only and args.only not in mechanism:
            continue
        for name, model in todo:
            on_s, off_s = side_by_side(model, off, args.seconds)
            print(f"| {mechanism} | {name} | {on_s * 1e3:.3f} ms | {off_s * 1e3:.3f} ms | {off_s / on_s:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
