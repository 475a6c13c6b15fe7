"""yobx-onnx-shapes beside ONNX's infer_shapes and onnxruntime's symbolic_shape_infer.py.

Usage (Debian 13): python3 benchmarks/compare_onnx.py YOBX_ONNX_SHAPES WORKDIR [MODEL...]

For each model (tests/onnx/check_models.py builds and exports them), each tool
writes its shapes; every dimension is checked against onnxruntime's execution
at the observed inputs and counted as right, wrong or not known (a dim_param
that is a fresh name, unk__N or any symbol that is not an input dim, is not
known). Times: yobx's whole process (read, infer, write), ONNX's and
onnxruntime's inference in-process (their load and save not counted). Then
the scale series: the GPT-style decoder with a KV cache at 2, 8, 32 and 96
layers, where yobx's whole process is compared with ONNX's in-process time.
"""
import math
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "onnx"))
import check_models  # noqa: E402
import onnx  # noqa: E402
from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference  # noqa: E402


def onnx_dim(d, values):
    """ONNX writes input dim names or unk__N."""
    if d.HasField("dim_value"):
        return d.dim_value
    return values.get(d.dim_param)


def ort_dim(d, values):
    """onnxruntime's tool writes SymPy's printed expressions: floor, ceiling, Max, Min, Mod, /."""
    if d.HasField("dim_value"):
        return d.dim_value
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", d.dim_param)) - {"floor", "ceiling", "Max", "Min", "Mod"}
    if not d.dim_param or not names <= set(values):
        return None
    try:
        v = eval(d.dim_param, {"__builtins__": {}}, {**values, "floor": math.floor, "ceiling": math.ceil, "Max": max, "Min": min,
                                                      "Mod": lambda a, b: a % b})
    except Exception:
        return None
    return int(v) if float(v).is_integer() else None


def typed_of(model):
    return {v.name: v.type for v in list(model.graph.value_info) + list(model.graph.output)}


def measure(name, tool, workdir):
    path, calls = check_models.export(name, workdir)
    yobx = check_models.run_yobx(tool, path, workdir, name)
    model = onnx.load(path)
    start = time.perf_counter()
    onnx_model = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    t_onnx = time.perf_counter() - start
    start = time.perf_counter()
    try:
        ort_model = SymbolicShapeInference.infer_shapes(onnx.load(path), auto_merge=True, guess_output_rank=False)
    except Exception as e:  # the tool stops on what it cannot do
        print(f"  onnxruntime's tool failed on {name}: {str(e)[:100]}")
        ort_model = None
    t_ort = time.perf_counter() - start
    # the tool as its users run it: a process that reads and writes the model
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "onnxruntime.tools.symbolic_shape_infer", "--input", path, "--output",
                    os.path.join(workdir, name + ".ort.onnx"), "--auto_merge"], capture_output=True)
    t_ort_process = time.perf_counter() - start
    names = set(typed_of(yobx[0])) if yobx else set(typed_of(onnx_model))
    runs, _ = check_models.execute(path, sorted(names), calls)
    rows = []
    for tool_name, m, dim, t in [("yobx", yobx[0] if yobx else None, check_models.yobx_dim, yobx[2] if yobx else float("nan")),
                                 ("onnx", onnx_model, onnx_dim, t_onnx), ("ort", ort_model, ort_dim, t_ort)]:
        if m is None:
            rows.append((tool_name, 0, 0, 0, t))
            continue
        right, wrong, unknown, _ = check_models.score(typed_of(m), runs, dim)
        rows.append((tool_name, right, wrong, unknown, t))
    rows.append(("ort-process", None, None, None, t_ort_process))
    return len(model.graph.node), rows


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or ["resnet18", "mobilenet_v3_small", "squeezenet1_0", "lraspp", "encoder", "tiny_llm", "lstm", "audio",
                             "scripted_control", "ssdlite", "swin_t", "hf_bert", "tiny_llm+fused", "hf_bert+fused", "hf_bert+mha", "hf_bert_tanh+fused", "tiny_llm+qdynamic",
                             "resnet18+qdq", "tiny_llm+q4"]
    os.makedirs(workdir, exist_ok=True)
    total = {}
    print(f"{'model':<22} {'nodes':>6}  {'tool':<5} {'right':>6} {'wrong':>6} {'unknown':>8} {'seconds':>9}")
    for name in names:
        n, rows = measure(name, tool, workdir)
        for tool_name, right, wrong, unknown, t in rows:
            acc = total.setdefault(tool_name, [0, 0, 0, 0.0])
            if right is None:
                acc[3] += t
                continue
            print(f"{name:<22} {n:>6}  {tool_name:<5} {right:>6} {wrong:>6} {unknown:>8} {t:>9.4f}")
            for i, v in enumerate((right, wrong, unknown, t)):
                acc[i] += v
    print()
    for tool_name, (right, wrong, unknown, t) in total.items():
        if tool_name != "ort-process":
            print(f"all models: {tool_name:<5} {right} right, {wrong} wrong, {unknown} not known, {t:.3f} s")
    print(f"onnxruntime's tool as a process (python3 -m onnxruntime.tools.symbolic_shape_infer): {total['ort-process'][3]:.3f} s")
    print(f"yobx's whole process: {total['ort-process'][3] / total['yobx'][3]:.1f}x less time than onnxruntime's tool as a process, "
          f"{total['ort'][3] / total['yobx'][3]:.1f}x less than its inference alone (in-process, no load or save)")
    print("\nscale series: the GPT-style decoder with a KV cache (each time the best of 3 runs)")
    for layers in (2, 8, 32, 96):
        name = f"gpt{layers}"
        path, _ = check_models.export(name, workdir)
        model = onnx.load(path)

        def best(f):
            times = []
            for _ in range(3):
                start = time.perf_counter()
                f()
                times.append(time.perf_counter() - start)
            return min(times)
        t_onnx = best(lambda: onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True))
        t_ort = best(lambda: SymbolicShapeInference.infer_shapes(onnx.load(path), auto_merge=True))
        t_yobx = min(check_models.run_yobx(tool, path, workdir, name)[2] for _ in range(3))
        print(f"{layers:>3} layers, {len(model.graph.node):>5} nodes: yobx (whole process) {t_yobx * 1e3:8.1f} ms, "
              f"onnx {t_onnx * 1e3:8.1f} ms, ort {t_ort * 1e3:8.1f} ms; yobx/onnx {t_yobx / t_onnx:.2f}, ort/yobx {t_ort / t_yobx:.1f}")


if __name__ == "__main__":
    main()
