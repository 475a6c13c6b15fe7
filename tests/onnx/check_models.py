"""Real models through yobx-onnx-shapes, checked against onnxruntime's execution.

Usage: python3 check_models.py YOBX_ONNX_SHAPES WORKDIR [--observed DIR] [--python] [MODEL...]
Each model is exported by torch.onnx.export (TorchScript exporter, opset 17)
with dynamic axes named as the observer labels them (observed_resnet18 and
observed_encoder: the labels and the calls yobx's InputObserver inferred in
C++, read from --observed DIR, which tests/export writes), given to yobx's tool,
then run by onnxruntime at several input sizes with every intermediate value
made an output. Every dimension yobx writes is evaluated at the inputs' sizes
(dim_params are Python expressions: //, Max, Min, Mod) and compared with the
size onnxruntime computes. Prints per model the dims right, wrong and not
known; exits 1 on any wrong dim or on a dim known by neither. With --python, the
Python module's yobx.onnx.infer_shapes must write and report what the command does. Needs Debian 13
(python3-torch 2.6, python3-torchvision, python3-onnx, python3-onnxruntime).
"""
import json
import math
import os
import subprocess
import sys
import time

import onnx
import onnx.reference  # noqa: F401 -- before onnxruntime: Debian's build shares ONNX's schema registry
import onnxruntime
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
import models  # noqa: E402


class Audio(nn.Module):
    """A 1-D convolutional front end and a GRU, as in keyword spotting."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(1, 8, 9, stride=4, padding=4), nn.ReLU(), nn.Conv1d(8, 16, 5, stride=2), nn.ReLU(),
                                  nn.MaxPool1d(3, ceil_mode=True))
        self.gru = nn.GRU(16, 24, batch_first=True, bidirectional=True)
        self.head = nn.Linear(48, 5)

    def forward(self, wave):
        x = self.conv(wave).transpose(1, 2)
        y, _ = self.gru(x)
        return self.head(y.mean(1))


class Interpolate(nn.Module):
    """Resizes by scale factors, their sizes computed through float32 as torch exports them
    (Cast, Mul, Cast, Floor): the nearest by 0.7, then bilinear by 1/3 and 1.5."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = nn.functional.interpolate(self.conv(x), scale_factor=0.7, mode="nearest", recompute_scale_factor=True)
        return nn.functional.interpolate(y, scale_factor=(1 / 3, 1.5), mode="bilinear", recompute_scale_factor=True)


class ScriptedControl(nn.Module):
    """Data-dependent control flow, scripted: an If on a size and a loop."""

    def forward(self, x):
        if x.shape[1] > 4:
            y = x[:, :4] * 2
        else:
            y = torch.cat([x, x], 1)[:, :4]
        for _ in range(x.shape[0]):
            y = y + 1
        return y.sum(0, keepdim=True)


class Boxes(nn.Module):
    """A torchvision detector on one image: its boxes, scores and labels as outputs."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        out = self.m([x[0]])[0]
        return out["boxes"], out["scores"], out["labels"]


class SegmentationOut(nn.Module):
    """A torchvision segmenter's "out" alone."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


class RmsNorm(nn.Module):
    """T5's and LLaMA's RMS normalization, which onnxruntime fuses into SimplifiedLayerNormalization."""

    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + 1e-6))


class RmsBlocks(nn.Module):
    """Pre-norm residual blocks with RMS normalization: SkipSimplifiedLayerNormalization where
    a residual meets the next normalization."""

    def __init__(self, hidden=32, layers=2):
        super().__init__()
        self.norms = nn.ModuleList(RmsNorm(hidden) for _ in range(layers + 1))
        self.mlps = nn.ModuleList(nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.SiLU(), nn.Linear(2 * hidden, hidden)) for _ in range(layers))

    def forward(self, x):
        for norm, mlp in zip(self.norms, self.mlps):
            x = x + mlp(norm(x))
        return self.norms[-1](x)


OBSERVED = None  # --observed DIR: where tests/export/observe_scripted wrote what yobx's observer inferred
PYTHON = False  # --python: yobx.onnx.infer_shapes (the Python module) must give what the command gives


def observed(base):
    """A model of tests/export as C++ observed it: yobx's labels (to_python_strings) as the
    dynamic axes, the observed calls (infer_arguments, absent inputs filled) as the inputs."""
    path = lambda suffix: os.path.join(OBSERVED, f"{base}_{suffix}")  # noqa: E731
    scope = {}
    exec(open(path("dynamic_axes.py")).read(), scope)
    labels = scope["dynamic_shapes"]
    calls = torch.load(os.path.join(OBSERVED, base, "calls.pt"))  # save_observations' layout
    model = models.make(base)
    by_name = isinstance(calls[0], dict)
    if by_name:
        names = [k for k, v in calls[0].items() if isinstance(v, torch.Tensor)]
        inputs = [tuple(call[n] for n in names) for call in calls]
    else:  # positional: the labels are a tuple in the same order
        names = [f"arg{i}" for i in range(len(calls[0]))]
        inputs = [tuple(call) for call in calls]
        labels = dict(zip(names, labels))

    class ByName(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, *tensors):
            return self.m(**dict(zip(names, tensors))) if by_name else self.m(*tensors)
    dynamic = {}
    for n in names:
        for axis, label in (labels.get(n) or {}).items():
            dynamic.setdefault(n, {})[axis] = label if isinstance(label, str) else f"{n}_dim_{axis}"
    return ByName(model).eval(), names, dynamic, inputs


class HfSelfAttention(nn.Module):
    """Self-attention written as Hugging Face's BertSelfAttention is: the layout
    onnxruntime's transformer optimizer recognises and fuses into com.microsoft
    Attention (or MultiHeadAttention)."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)

    def split(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        context = torch.matmul(nn.functional.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size()[:-2] + (self.heads * self.head_dim,))


class HfLayer(nn.Module):
    def __init__(self, hidden, heads, gelu="none"):
        super().__init__()
        self.gelu = gelu  # "tanh": GPT-2's approximation, which onnxruntime fuses into FastGelu
        self.attention = HfSelfAttention(hidden, heads)
        self.dense, self.ln1 = nn.Linear(hidden, hidden), nn.LayerNorm(hidden, eps=1e-12)
        self.up, self.down, self.ln2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden), nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        a = self.ln1(self.dense(self.attention(x, mask)) + x)
        return self.ln2(self.down(nn.functional.gelu(self.up(a), approximate=self.gelu)) + a)


class HfBert(nn.Module):
    """BERT in Hugging Face's layout (embeddings summed then normalized, the mask made
    additive): fused by onnxruntime into EmbedLayerNormalization, Attention,
    SkipLayerNormalization and BiasGelu."""

    def __init__(self, vocab=64, hidden=32, heads=4, layers=2, positions=64, gelu="none"):
        super().__init__()
        self.word, self.position, self.token_type = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden), nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(positions).expand((1, -1)))
        self.layers = nn.ModuleList(HfLayer(hidden, heads, gelu) for _ in range(layers))

    def forward(self, input_ids, attention_mask, token_type_ids):
        positions = self.position_ids[:, :input_ids.size(1)]
        x = self.norm(self.word(input_ids) + self.token_type(token_type_ids) + self.position(positions))
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        return x


def build(name):
    """(model, input names, dynamic axes, a list of input tuples at several sizes)."""
    torch.manual_seed(0)
    if name.startswith("observed_"):
        if name == "observed_encoder":
            torch.backends.mha.set_fastpath_enabled(False)  # the fused kernel has no ONNX export
        return observed(name[len("observed_"):])
    if name.startswith("gpt"):  # the decoder with a KV cache at N layers: gpt8
        torch.manual_seed(0)
        layers = int(name[3:])
        model = models.TinyLLM(num_layers=layers)

        class Flat(nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, *past):
                logits, (keys, values) = self.m(input_ids, attention_mask, None, [list(past[:layers]), list(past[layers:])])
                return logits, *keys, *values
        names = ["input_ids", "attention_mask"] + [f"past_key_{i}" for i in range(layers)] + [f"past_value_{i}" for i in range(layers)]
        dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"}}
        for n in names[2:]:
            dyn[n] = {0: "batch", 2: "past"}
        calls = [(torch.randint(0, 64, (b, s)), torch.ones(b, p + s, dtype=torch.long), *[torch.randn(b, 4, p, 8) for _ in range(2 * layers)])
                 for b, s, p in [(2, 3, 5), (1, 1, 8)]]
        return Flat(model).eval(), names, dyn, calls
    if name == "lraspp":
        import torchvision
        model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=4).eval()
        sizes = [(1, 128, 128), (2, 96, 160)]
        return SegmentationOut(model).eval(), ["x"], {"x": {0: "x_dim_0", 2: "x_dim_2", 3: "x_dim_3"}}, [(torch.randn(b, 3, h, w),) for b, h, w in sizes]
    if name == "encoder":
        torch.backends.mha.set_fastpath_enabled(False)  # the fused kernel has no ONNX export
        model = models.make("encoder")
        return model, ["src"], {"src": {0: "src_dim_0", 1: "src_dim_1"}}, [(torch.randn(b, s, 32),) for b, s in [(2, 7), (1, 12), (3, 5)]]
    if name == "tiny_llm":
        model = models.make("tiny_llm")

        class Flat(nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, pk0, pk1, pv0, pv1):
                logits, (keys, values) = self.m(input_ids, attention_mask, None, [[pk0, pk1], [pv0, pv1]])
                return logits, keys[0], keys[1], values[0], values[1]
        names = ["input_ids", "attention_mask", "pk0", "pk1", "pv0", "pv1"]
        dyn = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"}}
        for n in names[2:]:
            dyn[n] = {0: "batch", 2: "past"}
        calls = []
        for b, s, p in [(2, 3, 5), (1, 1, 8), (3, 4, 2)]:
            past = [torch.randn(b, 4, p, 8) for _ in range(4)]
            calls.append((torch.randint(0, 64, (b, s)), torch.ones(b, p + s, dtype=torch.long), *past))
        return Flat(model).eval(), names, dyn, calls
    if name in ("hf_bert", "hf_bert_tanh"):
        names = ["input_ids", "attention_mask", "token_type_ids"]
        calls = []
        for b, n in [(2, 7), (1, 12), (3, 5)]:
            mask = torch.ones(b, n, dtype=torch.long)
            mask[0, n - 2:] = 0
            calls.append((torch.randint(0, 64, (b, n)), mask, torch.randint(0, 2, (b, n))))
        model = HfBert(gelu="tanh" if name == "hf_bert_tanh" else "none")
        return model.eval(), names, {k: {0: "batch", 1: "sequence"} for k in names}, calls
    if name == "rms_blocks":
        return RmsBlocks().eval(), ["x"], {"x": {0: "batch", 1: "sequence"}}, [(torch.randn(b, n, 32),) for b, n in [(2, 7), (1, 12), (3, 5)]]
    if name == "lstm":
        model = models.make("lstm")

        class Out(nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)[0]
        return Out(model).eval(), ["x"], {"x": {0: "x_dim_0", 1: "x_dim_1"}}, [(torch.randn(b, s, 4),) for b, s in [(2, 5), (1, 9), (4, 3)]]
    if name == "small_swin":  # torchvision's Swin at a small size: windows of 4, shifted by 2, dynamic height and width
        from torchvision.models.swin_transformer import SwinTransformer
        torch.manual_seed(0)
        model = SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4], num_classes=10)
        return model.eval(), ["x"], {"x": {0: "batch", 2: "height", 3: "width"}}, \
            [(torch.randn(b, 3, h, w),) for b, h, w in [(1, 64, 64), (2, 96, 80), (1, 40, 56)]]
    if name == "audio":
        return Audio().eval(), ["wave"], {"wave": {0: "wave_dim_0", 2: "wave_dim_2"}}, [(torch.randn(b, 1, n),) for b, n in [(2, 400), (1, 517), (3, 263)]]
    if name in ("fasterrcnn", "ssdlite", "retinanet"):  # torchvision's defaults: ssdlite and retinanet keep 300 boxes at most
        import torchvision
        d = torchvision.models.detection
        sizes = [(160, 176), (128, 192), (192, 144)]
        if name == "fasterrcnn":
            model = models.make("fasterrcnn")
        elif name == "ssdlite":  # 1,544 nodes
            model = d.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5)
            sizes = [(320, 320), (256, 300), (300, 280)]
        else:
            model = d.retinanet_resnet50_fpn(weights=None, weights_backbone=None, num_classes=5, min_size=160, max_size=224)
            sizes = [(320, 320), (256, 300), (300, 280)]
        return Boxes(model.eval()).eval(), ["x"], {"x": {2: "x_dim_2", 3: "x_dim_3"}}, [(torch.rand(1, 3, h, w),) for h, w in sizes]
    if name == "interpolate":  # at h = 10 the float32 product 10 * 0.7f rounds to 7: floor 7, not 6
        return Interpolate().eval(), ["x"], {"x": {0: "x_dim_0", 2: "x_dim_2", 3: "x_dim_3"}}, \
            [(torch.randn(b, 3, h, w),) for b, h, w in [(2, 20, 30), (1, 10, 17), (3, 33, 41)]]
    if name == "scripted_control":
        return torch.jit.script(ScriptedControl()), ["x"], {"x": {0: "x_dim_0", 1: "x_dim_1"}}, [(torch.randn(b, n),) for b, n in [(2, 6), (3, 3), (1, 5)]]
    return torchvision_model(name)


def torchvision_model(name):
    """Any other torchvision model by its builder's name (weights=None): a classifier with dynamic batch,
    height and width (the batch alone for the vision transformers of a fixed size), a segmenter's "out", a
    video classifier (batch, frames, height, width), a detector on one image, RAFT's flow after 2 updates."""
    import torchvision
    tv = torchvision.models
    images = [(2, 224, 224), (1, 160, 192), (3, 97, 131)]
    dyn = {"x": {0: "x_dim_0", 2: "x_dim_2", 3: "x_dim_3"}}
    if name in ("vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14", "maxvit_t", "swin_v2_t", "swin_v2_s", "swin_v2_b"):
        return getattr(tv, name)(weights=None).eval(), ["x"], {"x": {0: "x_dim_0"}}, [(torch.randn(b, 3, 224, 224),) for b in (2, 1)]
    if name == "inception_v3":
        return tv.inception_v3(weights=None, aux_logits=True, init_weights=False).eval(), ["x"], dyn, \
            [(torch.randn(b, 3, h, w),) for b, h, w in [(2, 299, 299), (1, 160, 192)]]
    if name in tv.list_models(module=tv.segmentation):
        model = tv.get_model(name, weights=None, weights_backbone=None, num_classes=3).eval()
        return SegmentationOut(model).eval(), ["x"], dyn, [(torch.randn(b, 3, h, w),) for b, h, w in [(1, 128, 128), (2, 96, 160)]]
    if name in tv.list_models(module=tv.video):
        return tv.get_model(name, weights=None).eval(), ["x"], {"x": {0: "b", 2: "t", 3: "h", 4: "w"}}, \
            [(torch.randn(b, 3, t, h, w),) for b, t, h, w in [(1, 8, 112, 112), (2, 4, 96, 128)]]
    if name in tv.list_models(module=tv.detection):
        model = tv.get_model(name, weights=None, weights_backbone=None, num_classes=5, min_size=160, max_size=224)
        return Boxes(model.eval()).eval(), ["x"], {"x": {2: "x_dim_2", 3: "x_dim_3"}}, [(torch.rand(1, 3, h, w),) for h, w in [(160, 176), (128, 192), (192, 144)]]
    if name in ("raft_small", "raft_large"):
        class Flow(nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, a, b):
                return self.m(a, b, num_flow_updates=2)[-1]
        dims = {0: "b", 2: "h", 3: "w"}  # RAFT needs h and w multiples of 8
        return Flow(tv.get_model(name, weights=None).eval()).eval(), ["a", "b"], {"a": dims, "b": dims}, \
            [(torch.randn(n, 3, h, w), torch.randn(n, 3, h, w)) for n, h, w in [(1, 128, 128), (2, 96, 160)]]
    if name in tv.list_models(module=tv):
        return tv.get_model(name, weights=None).eval(), ["x"], dyn, [(torch.randn(b, 3, h, w),) for b, h, w in images]
    raise ValueError(name)


def symbols(expr):
    """The symbol names of a dim_param (fresh ones included)."""
    import re
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)) - {"Max", "Min", "Mod"}


def evaluate(expr, values):
    return eval(expr, {"__builtins__": {}}, {**values, "Max": max, "Min": min, "Mod": lambda a, b: a % b})


def rewrite(variant, path, out, names=(), calls=()):
    """onnxruntime's own tools on an exported model: its transformer optimizer's fusions
    (com.microsoft Attention, SkipLayerNormalization, FastGelu...) and its quantizers."""
    if variant in ("fused", "mha"):
        from onnxruntime.transformers.fusion_options import FusionOptions
        from onnxruntime.transformers.optimizer import optimize_model
        options = FusionOptions("bert")
        options.use_multi_head_attention = variant == "mha"
        optimize_model(path, model_type="bert", num_heads=4, hidden_size=32, opt_level=1,
                       optimization_options=options).save_model_to_file(out)
    elif variant == "t5":  # T5's fusions, RMS normalizations among them (opt_level 0: onnxruntime's graph passes off)
        from onnxruntime.transformers.optimizer import optimize_model
        optimize_model(path, model_type="t5", num_heads=4, hidden_size=32, opt_level=0).save_model_to_file(out)
    elif variant == "qdynamic":
        from onnxruntime.quantization import quantize_dynamic
        quantize_dynamic(path, out)
    elif variant == "qdq":
        from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

        class Reader(CalibrationDataReader):
            def __init__(self):
                self.items = iter([{n: t.numpy() for n, t in zip(names, call)} for call in calls])

            def get_next(self):
                return next(self.items, None)
        quantize_static(path, out, Reader(), quant_format=QuantFormat.QDQ)
    elif variant == "q4":
        from onnxruntime.quantization.matmul_4bits_quantizer import MatMul4BitsQuantizer
        q = MatMul4BitsQuantizer(onnx.load(path), block_size=16, is_symmetric=True)
        q.process()
        q.model.save_model_to_file(out)
    else:
        raise ValueError(variant)


def export(name, workdir):
    """Exports model `name` (a variant after '+': rewritten by onnxruntime's tools); returns (path, calls)."""
    base, _, variant = name.partition("+")
    model, names, dynamic, calls = build(base)
    path = os.path.join(workdir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, calls[0], path, input_names=names, dynamic_axes=dynamic, opset_version=17, dynamo=False)
    if variant:
        rewrite(variant, path, path, names, calls)
    return path, calls


def execute(path, names, calls):
    """onnxruntime's run of the model at each call with every value in `names` made an output:
    a list of (input dim values by dim_param, {value name: shape}); a call it refuses is left out."""
    probe = onnx.load(path)
    graph_inputs = {i.name: i for i in probe.graph.input}
    known = {o.name for o in probe.graph.output}
    for n in names:
        if n not in known:
            probe.graph.output.append(onnx.helper.make_value_info(n, onnx.TypeProto()))
    session = onnxruntime.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    out_names = [o.name for o in session.get_outputs()]
    runs, refused = [], []
    for call in calls:
        feed = {n: t.numpy() for n, t in zip([i.name for i in session.get_inputs()], call)}
        values = {}
        for n, arr in feed.items():
            for j, d in enumerate(graph_inputs[n].type.tensor_type.shape.dim):
                if d.dim_param:
                    values[d.dim_param] = arr.shape[j]
        try:
            results = session.run(out_names, feed)
        except Exception as e:  # the exporter baked a size: the model runs only at the export's sizes
            refused.append(str(e).split("Status Message:")[-1].strip()[:120])
            continue
        shapes = {n: tuple(getattr(r, "shape", ())) for n, r in zip(out_names, results)}
        sizes = {n: r.nbytes for n, r in zip(out_names, results) if hasattr(r, "nbytes")}
        sizes.update({n: a.nbytes for n, a in feed.items()})
        runs.append((values, shapes, sizes))
    return runs, refused


def score(typed, runs, dim_value):
    """Each written dim against execution: (right, wrong, unknown, wrong list). `typed` maps a
    value's name to its TypeProto; `dim_value(dim, values)` is the dim's value, or None if unknown."""
    right = wrong = unknown = 0
    wrong_list = []
    for values, shapes, _ in runs:
        for n, shape in shapes.items():
            t = typed.get(n)
            if t is None or not t.tensor_type.HasField("shape"):
                unknown += len(shape)
                continue
            dims = t.tensor_type.shape.dim
            if len(dims) != len(shape):
                wrong += 1
                wrong_list.append(f"{n}: rank {len(dims)} vs {len(shape)}")
                continue
            for j, d in enumerate(dims):
                got = dim_value(d, values)
                if got is None:
                    unknown += 1
                elif got == shape[j]:
                    right += 1
                else:
                    wrong += 1
                    wrong_list.append(f"{n}[{j}] = {d.dim_param or d.dim_value} = {got}, onnxruntime {shape[j]} at {values}")
    return right, wrong, unknown, wrong_list


def yobx_dim(d, values):
    """A dim yobx wrote: dim_value, or a dim_param whose symbols are all input dims."""
    if d.HasField("dim_value"):
        return d.dim_value
    if d.dim_param and all(s in values for s in symbols(d.dim_param)):
        return evaluate(d.dim_param, values)
    return None


# The com.microsoft operators each rewritten model must hold: onnxruntime's fusions of them
# are what the model is in the list for.
FUSED_OPS = {
    "hf_bert+fused": {"com.microsoft.Attention", "com.microsoft.EmbedLayerNormalization", "com.microsoft.SkipLayerNormalization",
                      "com.microsoft.BiasGelu"},
    "hf_bert+mha": {"com.microsoft.MultiHeadAttention", "com.microsoft.EmbedLayerNormalization"},
    "hf_bert_tanh+fused": {"com.microsoft.Attention", "com.microsoft.FastGelu", "com.microsoft.SkipLayerNormalization"},
    "tiny_llm+fused": {"com.microsoft.SkipLayerNormalization"},
    "tiny_llm+q4": {"com.microsoft.MatMulNBits"},
    "rms_blocks+t5": {"SimplifiedLayerNormalization", "com.microsoft.SkipSimplifiedLayerNormalization"},
}


def outer_names(graph):
    """The names a subgraph reads from outside it."""
    local = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {o for n in graph.node for o in n.output}
    read = set()
    for n in graph.node:
        read |= set(n.input)
        for a in n.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                read |= outer_names(g)
    return read - local - {""}


def check_memory(name, m, memory, runs):
    """yobx's memory section against execution: every value's bytes, the peak by the liveness rule
    (a value live from its producer, graph inputs from the first node, to its last consumer, graph
    outputs to the last node, in the model's node order; initializers and Constant outputs are
    weights), and the outputs' growth per unit of a dim. Returns the problems found."""
    problems = []
    if memory["order"] != "model":
        return [f"order {memory['order']}: the model's nodes are in order"]
    known = {v["name"]: v["bytes"] for v in memory["values"]}
    weights = {t.name for t in m.graph.initializer} | {o for n in m.graph.node if n.op_type == "Constant" and not n.domain for o in n.output}
    nodes = list(m.graph.node)
    steps = []
    for n in nodes:
        reads = set(n.input)
        for a in n.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                reads |= outer_names(g)
        steps.append((reads, [o for o in n.output if o and o not in weights]))
    first, last = {}, {}
    for i in (x.name for x in m.graph.input if x.name not in weights):
        first[i] = 0
    for k, (reads, made) in enumerate(steps):
        for o in made:
            first.setdefault(o, k)
        for r in reads:
            if r in first:
                last[r] = k
    for o in m.graph.output:
        last[o.name] = len(steps) - 1
    inner = {s["step"]: s["bytes"] for s in memory["subgraphs"]}
    counted = {n for n, e in known.items() if e is not None}
    # every kept step of the peak alone the largest at its witness, or counted unresolved
    unresolved = 0
    for kept in memory["peak_steps"]:
        w = kept["witness"]
        if w is None:
            unresolved += 1
            continue
        sums = [sum(evaluate(known[n], w) for n in first if n in counted and first[n] <= k <= last.get(n, first[n])) +
                (evaluate(inner[k], w) if k in inner else 0) for k in range(len(steps))]
        # the largest there, and alone among the Max's steps (a step left out may equal it: a twin, or one proven below)
        others = {s["step"] for s in memory["peak_steps"]} - {kept["step"]}
        if any(v > sums[kept["step"]] or (k in others and v == sums[kept["step"]]) for k, v in enumerate(sums) if k != kept["step"]):
            problems.append(f"step {kept['step']} is not alone the largest at its witness {w}")
    if unresolved != memory["unresolved"]:
        problems.append(f"{unresolved} kept steps without a witness, the report says {memory['unresolved']}")
    checked = 0
    for values, shapes, sizes in runs:
        values = dict(values)
        for v in list(m.graph.value_info) + list(m.graph.output):  # a fresh symbol's size, from where it stands alone
            if v.name in shapes and v.type.tensor_type.HasField("shape"):
                for j, d in enumerate(v.type.tensor_type.shape.dim):
                    if d.dim_param.isidentifier() and d.dim_param not in values and j < len(shapes[v.name]):
                        values[d.dim_param] = shapes[v.name][j]
        for n, expr in known.items():
            if expr is not None and n in sizes and symbols(expr) <= set(values):
                checked += 1
                if evaluate(expr, values) != sizes[n]:
                    problems.append(f"bytes of {n} = {expr} = {evaluate(expr, values)}, onnxruntime {sizes[n]} at {values}")
        # a data-dependent size inside a subgraph (a Loop's NonMaxSuppression) has no executed value
        # here: the peak is checked at several values of it, each subgraph's bytes at that value
        free = set().union(*(symbols(e) for e in inner.values())) - set(values) if inner else set()
        if not symbols(memory["peak"]) <= set(values) | free:
            problems.append(f"the peak {memory['peak'][:200]} has symbols without sizes at {values}")
            continue
        for guess in ([0, 7, 1000] if free else [None]):
            at = {**values, **{f: guess for f in free}}
            sums = []
            for k in range(len(steps)):
                live = [n for n in first if n in counted and first[n] <= k <= last.get(n, first[n])]
                if any(n not in sizes for n in live):
                    problems.append(f"step {k}: onnxruntime gave no size of {[n for n in live if n not in sizes][:3]}")
                    break
                sums.append(sum(sizes[n] for n in live) + (evaluate(inner[k], at) if k in inner else 0))
            else:
                executed = max(sums) if sums else sum(sizes[n] for n in first if n in counted)
                if evaluate(memory["peak"], at) != executed:
                    problems.append(f"peak {memory['peak'][:200]} = {evaluate(memory['peak'], at)}, executed sizes give {executed} "
                                    f"(step {sums.index(executed)}) at {at}")
        for g in memory["growth"]:
            grown = sum(sizes[o] for o in g["outputs"])
            if evaluate(g["bytes"], values) != grown:
                problems.append(f"outputs growing with {g['dim']}: {g['bytes']} = {evaluate(g['bytes'], values)}, onnxruntime {grown}")
            if g["dim"] in values:
                step = evaluate(g["bytes"], {**values, g["dim"]: values[g["dim"]] + 1}) - evaluate(g["bytes"], values)
                if evaluate(g["per_unit"], values) != step:
                    problems.append(f"growth per unit of {g['dim']}: {g['per_unit']} = {evaluate(g['per_unit'], values)}, not {step}")
    if not checked:
        problems.append("no value's bytes checked")
    return problems


def zero_dims(path, calls):
    """The input dims some call gives size 0 (a KV cache's first call): the memory's domain takes
    input dims from 1 unless told otherwise (--min)."""
    inputs = onnx.load(path).graph.input
    zero = set()
    for call in calls:
        for i, t in zip(inputs, call):
            for j, d in enumerate(i.type.tensor_type.shape.dim):
                if d.dim_param and j < len(t.shape) and t.shape[j] == 0:
                    zero.add(d.dim_param)
    return sorted(zero)


def run_yobx(tool, path, workdir, name, memory=True, zero=()):
    """yobx-onnx-shapes on the model, timed as a whole process: (shaped model, report, seconds) or None;
    with the memory report (--memory) unless memory is False (the benchmark times the inference alone),
    its domain from 0 for the input dims in `zero`."""
    shaped = os.path.join(workdir, name + ".shaped.onnx")
    report_path = os.path.join(workdir, name + ".report.json")
    start = time.perf_counter()
    minimum = [a for d in zero for a in ("--min", f"{d}=0")]
    out = subprocess.run([tool, path, shaped, "--report", report_path] + (["--memory"] + minimum if memory else []), capture_output=True,
                         text=True)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        print(f"{name}: yobx-onnx-shapes failed: {out.stderr.strip()}")
        return None
    return onnx.load(shaped), json.load(open(report_path)), elapsed


def check(name, tool, workdir):
    path, calls = export(name, workdir)
    result = run_yobx(tool, path, workdir, name, zero=zero_dims(path, calls))
    if result is None:
        return False
    m, report, elapsed = result
    # what yobx writes besides the types is the model as it was: its weights put back byte for byte
    original = onnx.load(path)
    kept = [t.SerializeToString() for t in original.graph.initializer] == [t.SerializeToString() for t in m.graph.initializer] and \
        [n.SerializeToString() for n in original.graph.node if not any(a.g.ByteSize() or a.graphs for a in n.attribute)] == \
        [n.SerializeToString() for n in m.graph.node if not any(a.g.ByteSize() or a.graphs for a in n.attribute)]
    if not kept:
        print(f"{name}: the shaped model's initializers or nodes differ from the model's")
        return False
    typed = {v.name: v.type for v in list(m.graph.value_info) + list(m.graph.output)}
    if PYTHON:  # the Python module in-process: what the command wrote, and what it reported
        import yobx.onnx
        shaped, py_report = yobx.onnx.infer_shapes(onnx.load(path), with_report=True)
        written = {v.name: v.type.SerializeToString() for v in list(shaped.graph.value_info) + list(shaped.graph.output)}
        if written != {k: t.SerializeToString() for k, t in typed.items()} or \
                {**py_report, "seconds": 0, "memory": None} != {**report, "seconds": 0, "memory": None}:
            print(f"{name}: yobx.onnx.infer_shapes writes or reports otherwise than yobx-onnx-shapes")
            return False
    runs, refused = execute(path, list(typed), calls)
    right, wrong, unknown, wrong_list = score(typed, runs, yobx_dim)
    ops = sorted({(n.domain + "." if n.domain else "") + n.op_type for n in m.graph.node if n.domain})
    missing = FUSED_OPS.get(name, set()) - {(n.domain + "." if n.domain else "") + n.op_type for n in m.graph.node}
    if missing:  # the optimizer did not fuse what this model is here to test
        print(f"{name}: onnxruntime's tools did not write {sorted(missing)}")
        return False
    memory_problems = check_memory(name, m, report["memory"], runs)
    print(f"{name}: {len(m.graph.node)} nodes{' (' + ', '.join(ops) + ')' if ops else ''}, {right} dims right, {wrong} wrong, "
          f"{unknown} not known (over {len(runs)} calls{'; onnxruntime refused ' + str(len(refused)) if refused else ''}); "
          f"fresh {report['fresh']}, not covered {report['not_covered']}; yobx {elapsed:.3f} s")
    print(f"  memory: weights {report['memory']['weights']['total']} bytes, peak {report['memory']['peak'][:160]}, "
          f"{len(report['memory']['peak_steps'])} steps in the Max ({report['memory']['unresolved']} unresolved), "
          f"{report['memory']['unknown']} values of unknown size; "
          f"{'bytes and peak equal to execution' if not memory_problems else 'MEMORY WRONG'}")
    for w in wrong_list[:20]:
        print("  WRONG", w)
    for p in memory_problems[:20]:
        print("  MEMORY", p)
    return wrong == 0 and not memory_problems


def main():
    global OBSERVED, PYTHON
    args = sys.argv[1:]
    if "--python" in args:
        args.remove("--python")
        PYTHON = True
    if "--observed" in args:
        i = args.index("--observed")
        OBSERVED = args[i + 1]
        del args[i:i + 2]
    tool, workdir = args[0], args[1]
    names = args[2:] or ["resnet18", "mobilenet_v3_small", "squeezenet1_0", "lraspp", "encoder", "tiny_llm", "lstm", "audio",
                             "scripted_control", "interpolate", "fasterrcnn", "ssdlite", "swin_t", "small_swin", "hf_bert", "tiny_llm+fused", "encoder+fused", "hf_bert+fused", "hf_bert+mha",
                             "hf_bert_tanh+fused",
                             "tiny_llm+qdynamic", "resnet18+qdq",
                             "tiny_llm+q4", "rms_blocks+t5"]
    os.makedirs(workdir, exist_ok=True)
    ok = all([check(n, tool, workdir) for n in names])
    print("models check ok" if ok else "models check FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
