"""onnxruntime's own pipelines with yobx's shape inference patched in (Debian 13).

Usage: python3 check_ort_pipelines.py WORKDIR   (PYTHONPATH: the build's python/)
Each pipeline runs twice on a model of tests/onnx/check_models.py: with onnxruntime's
symbolic shape inference, then inside yobx.onnx.ort.patched(). The model made with
yobx must hold every fused (com.microsoft) operator the other holds, at least as many
times (more are named), no more nodes in all (what a pipeline folds once the shapes are
known stays folded), and onnxruntime must run both with equal outputs, within
tolerance, on the models' own inputs at two sizes. The pipelines:
- onnxruntime.transformers.optimizer.optimize_model, model types bert (the BERT of
  Hugging Face's layout) and gpt2 (the GPT-style decoder with a KV cache), whose
  fusions ask the shape helper (SkipLayerNormalization, Attention, EmbedLayerNormalization);
- onnxruntime.quantization.shape_inference.quant_pre_process (also on a small Swin with dynamic
  height and width, where the shifted windows' mask folds only once its slices' sizes are known;
  there onnxruntime's own inference guesses the padded sizes equal, and onnxruntime refuses the
  model it shaped at 96x80: "Shape mismatch attempting to re-use buffer". Where it refuses a
  size, yobx's model is compared with the model as exported).
- OnnxModel.convert_float_to_float16 with symbolic shape inference on.
"""
import collections
import os
import sys

import numpy as np
import onnx
import onnx.reference  # noqa: F401 -- before onnxruntime: Debian 13's onnxruntime shares ONNX's schema registry
import onnxruntime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnx"))
import check_models  # noqa: E402

import yobx.onnx.ort  # noqa: E402


def fused(model):
    """The com.microsoft operators of a model and how many of each."""
    return collections.Counter(f"{n.domain}.{n.op_type}" for n in model.graph.node if n.domain == "com.microsoft")


def run(model, call, names):
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {}
    for i in session.get_inputs():
        value = call[names.index(i.name)].numpy()
        feeds[i.name] = value.astype(np.float16) if i.type == "tensor(float16)" else value
    return [np.asarray(o, dtype=np.float32) for o in session.run(None, feeds)]


def optimize(model_type):
    def pipeline(path, out):
        from onnxruntime.transformers.fusion_options import FusionOptions
        from onnxruntime.transformers.optimizer import optimize_model
        options = FusionOptions(model_type)
        return optimize_model(path, model_type=model_type, num_heads=4, hidden_size=32, opt_level=0,
                              optimization_options=options).model
    return pipeline


def quant_pre_process(auto_merge):
    def pipeline(path, out):
        from onnxruntime.quantization.shape_inference import quant_pre_process as pre
        pre(path, out, auto_merge=auto_merge)
        return onnx.load(out)
    return pipeline


def float16(path, out):
    from onnxruntime.transformers.onnx_model import OnnxModel
    m = OnnxModel(onnx.load(path))
    m.convert_float_to_float16(use_symbolic_shape_infer=True, keep_io_types=True)
    return m.model


PIPELINES = [("optimize_model bert", "hf_bert", optimize("bert"), 1e-4),
             ("optimize_model gpt2", "tiny_llm", optimize("gpt2"), 1e-4),
             ("quant_pre_process", "hf_bert", quant_pre_process(False), 1e-4),
             ("quant_pre_process auto_merge", "hf_bert", quant_pre_process(True), 1e-4),
             ("quant_pre_process", "mobilenet_v3_small", quant_pre_process(False), 1e-4),
             ("quant_pre_process", "tiny_llm", quant_pre_process(False), 1e-4),
             ("quant_pre_process auto_merge", "small_swin", quant_pre_process(True), 1e-4),
             ("convert_float_to_float16", "hf_bert", float16, 2e-2),
             ("convert_float_to_float16", "tiny_llm", float16, 2e-2)]


def main():
    workdir = sys.argv[1]
    os.makedirs(workdir, exist_ok=True)
    exported = {}
    ok = True
    for title, name, pipeline, tolerance in PIPELINES:
        if name not in exported:
            exported[name] = check_models.export(name, workdir)
            exported[name + ":names"] = check_models.build(name)[1]
        path, calls = exported[name]
        names = exported[name + ":names"]
        failure = ""
        try:
            theirs = pipeline(path, os.path.join(workdir, f"{name}.ort.onnx"))
        except Exception as e:  # onnxruntime's inference stops where it cannot go on: the model as exported is the reference
            failure = f"; onnxruntime's inference fails ({str(e)[:60]}): compared with the model as exported"
            theirs = onnx.load(path)
        yobx.onnx.ort._local.report = None  # set again only if the pipeline reached yobx
        with yobx.onnx.ort.patched():
            ours = pipeline(path, os.path.join(workdir, f"{name}.yobx.onnx"))
        report = yobx.onnx.ort.last_report()
        f_theirs, f_ours = fused(theirs), fused(ours)
        missing = {op: n for op, n in f_theirs.items() if f_ours[op] < n}
        extra = {op: f_ours[op] - f_theirs[op] for op in f_ours if f_ours[op] > f_theirs[op]}
        worst = 0.0
        broken = []  # the sizes at which onnxruntime refuses the model its own inference shaped
        for call in calls[:2]:
            mine = run(ours, call, names)
            try:
                reference = run(theirs, call, names)
            except Exception:  # a dim it guessed, which this size contradicts: the model as exported is the reference
                broken.append("x".join(str(d) for d in call[0].shape))
                reference = run(onnx.load(path), call, names)
            for a, b in zip(reference, mine):
                worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
        # what the pipeline folds and fuses once the shapes are known: no more nodes left with yobx
        more_nodes = len(ours.graph.node) - len(theirs.graph.node) if not failure else 0
        good = not missing and worst <= tolerance and report is not None and more_nodes <= 0
        ok = ok and good
        print(f"{title} on {name}: fused with onnxruntime's inference {dict(sorted(f_theirs.items()))}, with yobx's "
              f"{dict(sorted(f_ours.items()))}{'; more with yobx: ' + str(extra) if extra else ''}"
              f"{'; MISSING with yobx: ' + str(missing) if missing else ''}{failure}; nodes {len(theirs.graph.node)} and "
              f"{len(ours.graph.node)}{'' if more_nodes <= 0 else ' (MORE with yobx)'}"
              f"{'; onnxruntime refuses the model its inference shaped at ' + ', '.join(broken) + ' (compared with the model as exported)' if broken else ''}"
              f"; outputs differ by {worst:.2e} at 2 sizes "
              f"(tolerance {tolerance:g}){'' if good else ': FAILED'}")
    print("pipelines check ok" if ok else "pipelines check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
