"""yobx-onnx-shapes beside ONNX's infer_shapes and onnxruntime's symbolic_shape_infer.py.

Usage (Debian 13): python3 benchmarks/compare_onnx.py YOBX_ONNX_SHAPES WORKDIR [MODEL...]
       python3 benchmarks/compare_onnx.py --in-process WORKDIR [MODEL...]   (PYTHONPATH: the build's python/)

--in-process: the three tools called as Python calls them, in one process, on the
same ModelProto: yobx.onnx.infer_shapes (the Python module), onnxruntime's
SymbolicShapeInference.infer_shapes(auto_merge=True) and ONNX's
infer_shapes(strict_mode=True, data_prop=True); each the best of 5 calls or more (as
many as 0.5 s holds, up to 200; onnxruntime's tool, the slowest by far, of 3), the
models exported first and torch on one thread, with the peak memory one call adds to the process
(VmHWM after resetting it, less VmRSS before: the model's copies, the work space).
Per model the ratio of onnxruntime's time to yobx's (target: 20 or more on every
model), and beside it the copy every tool that returns a new model makes (the model's
CopyFrom into a new ModelProto, freed after, as the tools' results are): onnxruntime's
tool makes it first, yobx makes it too, so onnxruntime's time over the copy's is the
highest ratio such a tool can reach in that process; then yobx in place
(infer_shapes(model, inplace=True) on a fresh copy made outside the time: no copy) and
onnxruntime's time over it. Then the scale series, where the target is half of ONNX's
time at 96 layers.

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
    yobx = check_models.run_yobx(tool, path, workdir, name, memory=False)
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


DEFAULT_MODELS = ["resnet18", "mobilenet_v3_small", "squeezenet1_0", "lraspp", "encoder", "tiny_llm", "lstm", "audio",
                  "scripted_control", "ssdlite", "swin_t", "hf_bert", "tiny_llm+fused", "hf_bert+fused", "hf_bert+mha",
                  "hf_bert_tanh+fused", "tiny_llm+qdynamic", "resnet18+qdq", "tiny_llm+q4"]


def main():
    tool, workdir = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or DEFAULT_MODELS
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
        t_yobx = min(check_models.run_yobx(tool, path, workdir, name, memory=False)[2] for _ in range(3))
        print(f"{layers:>3} layers, {len(model.graph.node):>5} nodes: yobx (whole process) {t_yobx * 1e3:8.1f} ms, "
              f"onnx {t_onnx * 1e3:8.1f} ms, ort {t_ort * 1e3:8.1f} ms; yobx/onnx {t_yobx / t_onnx:.2f}, ort/yobx {t_ort / t_yobx:.1f}")


def peak_memory(f):
    """The memory f() adds at its peak, in MiB: Linux's VmHWM reset (clear_refs 5), f run, VmHWM less VmRSS before."""
    def status(key):
        with open("/proc/self/status") as st:
            for line in st:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
        return float("nan")
    with open("/proc/self/clear_refs", "w") as c:
        c.write("5")
    before = status("VmRSS")
    result = f()
    peak = status("VmHWM") - before
    del result
    return peak


def in_process(workdir, names):
    import yobx.onnx

    def best(f, n, setup=None):
        # at least n calls, and as many as 0.5 s holds (up to 200): a call of a millisecond is noisy;
        # with setup, each call is f(setup()), setup outside the time
        times = []
        while len(times) < n or (sum(times) < 0.5 and len(times) < 200):
            argument = setup() if setup else None
            start = time.perf_counter()
            f(argument) if setup else f()
            times.append(time.perf_counter() - start)
            del argument
        return min(times)

    def measure_tools(model):
        calls = {"yobx": (lambda: yobx.onnx.infer_shapes(model), 5),
                 "onnx": (lambda: onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True), 5),
                 "ort": (lambda: SymbolicShapeInference.infer_shapes(model, auto_merge=True), 3)}
        out = {}
        for tool_name, (f, n) in calls.items():
            try:
                out[tool_name] = (best(f, n), peak_memory(f))
            except Exception as e:  # onnxruntime's tool stops on what it cannot do
                out[tool_name] = (None, None)
                print(f"  {tool_name} fails: {str(e)[:90]}")
        return out

    os.makedirs(workdir, exist_ok=True)
    # every model exported first, torch on one thread: its OpenMP workers, which spin a while after
    # each parallel region, would otherwise take the second core from the calls measured
    import torch
    torch.set_num_threads(1)
    paths = {name: check_models.export(name, workdir)[0] for name in list(names) + [f"gpt{n}" for n in (2, 8, 32, 96)]}

    def copy_of(model):
        out = onnx.ModelProto()
        out.CopyFrom(model)
        return out

    print(f"{'model':<22} {'nodes':>6} {'MB':>6} {'yobx ms':>9} {'(MiB)':>7} {'onnx ms':>9} {'(MiB)':>7} {'ort ms':>9} {'(MiB)':>7} "
          f"{'ort/yobx':>9} {'onnx/yobx':>9} {'copy ms':>9} {'ort/copy':>9} {'in place':>9} {'ort/inpl':>9}")
    worst = worst_in_place = None
    for name in names:
        model = onnx.load(paths[name])
        r = measure_tools(model)
        t_c = best(lambda: copy_of(model), 5)
        # in place, each call on a fresh copy of the model made (and freed) outside the time
        t_i = best(lambda fresh: yobx.onnx.infer_shapes(fresh, inplace=True), 5, setup=lambda: copy_of(model))
        t_y, m_y = r["yobx"]
        t_o, m_o = r["onnx"]
        t_r, m_r = r["ort"]
        ratio = t_r / t_y if t_r is not None else None
        if ratio is not None:
            worst = ratio if worst is None else min(worst, ratio)
        fmt = lambda v, scale=1e3, w=9: f"{v * scale:>{w}.2f}" if v is not None else f"{'fails':>{w}}"  # noqa: E731
        print(f"{name:<22} {len(model.graph.node):>6} {model.ByteSize() / 1e6:>6.1f} {fmt(t_y)} {fmt(m_y, 1, 7)} {fmt(t_o)} "
              f"{fmt(m_o, 1, 7)} {fmt(t_r)} {fmt(m_r, 1, 7)} {fmt(ratio, 1)} {fmt(t_o / t_y if t_o else None, 1)} {fmt(t_c)} "
              f"{fmt(t_r / t_c if t_r is not None else None, 1)} {fmt(t_i)} {fmt(t_r / t_i if t_r is not None else None, 1)}"
              f"{'' if ratio is None or ratio >= 20 else '   < 20'}")
        if t_r is not None:
            worst_in_place = t_r / t_i if worst_in_place is None else min(worst_in_place, t_r / t_i)
    print(f"\nthe smallest ratio of onnxruntime's tool to yobx over the models: {worst:.1f} (target 20); "
          f"in place: {worst_in_place:.1f}")
    print("(copy: the model copied into a new ModelProto, as every tool here returns one; ort/copy: the highest ratio\n"
          " a tool that makes that copy can reach against onnxruntime's tool, which makes it too; in place:\n"
          " yobx.onnx.infer_shapes(model, inplace=True), the types written into the model given, no copy)")
    print("\nscale series: the GPT-style decoder with a KV cache, in-process")
    for layers in (2, 8, 32, 96):
        model = onnx.load(paths[f"gpt{layers}"])
        r = measure_tools(model)
        (t_y, m_y), (t_o, m_o), (t_r, _) = r["yobx"], r["onnx"], r["ort"]
        # yobx on the caller's thread alone, for comparison (from 1,000 nodes or 1 MB, inference runs on
        # yobx's thread while Python copies the model)
        saved = yobx.onnx._OVERLAP_FROM, yobx.onnx._OVERLAP_BYTES
        yobx.onnx._OVERLAP_FROM = yobx.onnx._OVERLAP_BYTES = float("inf")
        t_1 = best(lambda: yobx.onnx.infer_shapes(model), 5)
        yobx.onnx._OVERLAP_FROM, yobx.onnx._OVERLAP_BYTES = saved
        print(f"{layers:>3} layers, {len(model.graph.node):>5} nodes: yobx {t_y * 1e3:8.1f} ms ({m_y:5.1f} MiB; {t_1 * 1e3:.1f} ms on one "
              f"thread), onnx {t_o * 1e3:8.1f} ms ({m_o:5.1f} MiB), ort {t_r * 1e3:8.1f} ms; yobx/onnx {t_y / t_o:.2f} "
              f"(target 0.5 at 96 layers), ort/yobx {t_r / t_y:.1f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--in-process":
        in_process(sys.argv[2], sys.argv[3:] or DEFAULT_MODELS)
    else:
        main()
