"""yobx's memory from shapes beside the peak resident memory onnxruntime takes (informational).

Usage (Debian 13): python3 benchmarks/memory_peak.py WORKDIR   (PYTHONPATH: the build's python/)

For a GPT-style decoder with a KV cache (tests/onnx/check_models.py's gpt8, 8 layers, positions up to 128)
and a vision model (resnet18), each at two sizes: yobx.onnx.memory's peak activations
plus weights, computed from the shapes alone, next to onnxruntime's measured peak: a
fresh process imports onnxruntime and numpy, reads its resident memory (VmRSS), makes a
CPU session of the model and runs it once at that size, and reads its peak resident
memory (VmHWM); the measured figure is the difference. Prints both and their ratio.

They differ, and the ratio says by how much: onnxruntime fuses operators (a fused value
is never allocated), reuses buffers (its planner shares one buffer between values whose
lives do not overlap, as yobx's liveness assumes, but with its own order), rounds and
keeps allocations in its arena, holds its kernels' workspace (im2col buffers, packed
weights: a second copy of a MatMul's or convolution's weights), and the process's own
libraries and heap grow. yobx counts exactly what the graph's values need, in the
model's node order, and the weights once.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "onnx"))
import check_models  # noqa: E402
import onnx  # noqa: E402
import yobx.onnx  # noqa: E402

RUN = r'''
import json, sys
import numpy as np
import onnxruntime

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024

path, shapes = sys.argv[1], json.loads(sys.argv[2])
base = status("VmRSS")
session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
types = {"tensor(float)": np.float32, "tensor(int64)": np.int64}
feed = {}
for i in session.get_inputs():
    shape = shapes[i.name]
    feed[i.name] = np.ones(shape, dtype=types[i.type]) if i.type != "tensor(float)" else np.random.rand(*shape).astype(np.float32)
session.run(None, feed)
print(json.dumps({"peak": status("VmHWM") - base}))
'''

CASES = [("gpt8", [{"batch": 4, "seq": 128, "past": 0, "total": 128}, {"batch": 64, "seq": 32, "past": 96, "total": 128}]),
         ("resnet18", [{"x_dim_0": 1, "x_dim_2": 224, "x_dim_3": 224}, {"x_dim_0": 16, "x_dim_2": 224, "x_dim_3": 224}])]


def mib(b):
    return f"{b / 2**20:8.1f} MiB"


def main():
    workdir = sys.argv[1]
    os.makedirs(workdir, exist_ok=True)
    print(f"{'model':10} {'sizes':44} {'activations':>12} {'weights':>12} {'yobx':>12} {'onnxruntime':>12} {'ratio':>6}")
    for name, sizes_list in CASES:
        path, _ = check_models.export(name, workdir)
        for sizes in sizes_list:
            memory = yobx.onnx.memory(onnx.load(path), at=sizes)
            shapes = yobx.onnx.evaluate_shapes(onnx.load(path), sizes)
            inputs = {i.name: list(shapes[i.name]) for i in onnx.load(path, load_external_data=False).graph.input}
            out = subprocess.run([sys.executable, "-c", RUN, path, json.dumps(inputs)], capture_output=True, text=True)
            if out.returncode != 0:
                print(f"{name}: onnxruntime failed: {out.stderr.strip()[-300:]}")
                continue
            measured = json.loads(out.stdout.strip().splitlines()[-1])["peak"]
            at = memory["at"]
            predicted = at["peak"] + at["weights"]
            label = ", ".join(f"{k}={v}" for k, v in sizes.items())
            print(f"{name:10} {label:44} {mib(at['peak']):>12} {mib(at['weights']):>12} {mib(predicted):>12} {mib(measured):>12} "
                  f"{measured / predicted:6.2f}")
    print("ratio: onnxruntime's measured peak over yobx's figure. They differ: onnxruntime's session, the model's protobuf\n"
          "(a second copy of the weights while it loads), packed weights and kernels' workspace, thread pools and its arena\n"
          "are not values of the graph; its fusions and buffer sharing remove some values yobx counts. yobx counts the\n"
          "graph's values in the model's node order and the weights once: the fixed part dominates small runs.")


if __name__ == "__main__":
    main()
