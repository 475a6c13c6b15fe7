"""A drop-in for onnxruntime's symbolic shape inference, and its patch into onnxruntime's tools.

``SymbolicShapeInference`` and ``SymbolicShapeInferenceHelper`` keep the contract
of onnxruntime's classes (``onnxruntime/tools/symbolic_shape_infer.py`` and
``onnxruntime/transformers/shape_infer_helper.py``, onnxruntime 1.21) with yobx's
inference behind them::

    from yobx.onnx.ort import SymbolicShapeInference
    shaped = SymbolicShapeInference.infer_shapes(model, auto_merge=True)

``patched()`` puts them in place of onnxruntime's own for the duration of a
``with`` block, under every name onnxruntime's tools bind them to (its
transformer optimizer, quantization pre-processing and float16 conversion), and
puts onnxruntime's back after::

    from onnxruntime.transformers.optimizer import optimize_model
    with yobx.onnx.ort.patched():
        optimized = optimize_model("bert.onnx", model_type="bert", num_heads=12, hidden_size=768)
"""
import contextlib
import importlib
import logging
import sys
import threading

from . import infer_shapes

__all__ = ["SymbolicShapeInference", "SymbolicShapeInferenceHelper", "patched", "last_report"]

logger = logging.getLogger(__name__)
_local = threading.local()


def last_report():
    """The report (a dict, as ``yobx.onnx.infer_shapes(..., with_report=True)`` gives it)
    of this thread's last inference through this module, or None: what auto_merge
    assumed is in its ``assumptions``, each with its node."""
    return getattr(_local, "report", None)


def _opset(model):
    """onnxruntime's get_opset: the version of the default domain the model imports."""
    for o in model.opset_import:
        if o.domain in ("", "onnx", "ai.onnx"):
            return o.version
    return None


def _shape_of(type_proto):
    """onnxruntime's get_shape_from_type_proto: dims as ints or dim_param strings, None without a shape."""
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param if d.HasField("dim_param") else None)
            for d in type_proto.tensor_type.shape.dim]


class SymbolicShapeInference:
    """onnxruntime's ``SymbolicShapeInference`` with yobx's inference.

    ``infer_shapes(in_mp, int_max, auto_merge, guess_output_rank, verbose)`` is a
    static method that returns a new ModelProto with every value's shape (the input
    is not changed), ``None`` for a model that imports no default-domain opset or
    one below 7, and raises where onnxruntime's tool does: a graph that is not a
    DAG (``ValueError``), a value of the main graph whose element type is left
    unknown (``Exception("Incomplete symbolic shape inference")``); a value of known
    element type and unknown rank is written without a shape, as onnxruntime's tool
    writes it.

    - ``auto_merge``: two dims a broadcast cannot tell apart are taken equal instead
      of given a fresh symbol; each such equality is an assumption of the report
      (``last_report()``).
    - ``guess_output_rank``: an operator no rule (nor ONNX's inference) covers gives
      its outputs the rank of its first input.
    - ``int_max``: accepted for onnxruntime's signature; yobx decides slice bounds
      from the dims' ranges, with no threshold.
    - ``verbose``: above 0, the report's summary and assumptions are logged.
    """

    def __init__(self, int_max=2**31 - 1, auto_merge=False, guess_output_rank=False, verbose=0, prefix=""):
        self.int_max_ = int_max
        self.auto_merge_ = auto_merge
        self.guess_output_rank_ = guess_output_rank
        self.verbose_ = verbose
        self.prefix_ = prefix

    @staticmethod
    def _run(in_mp, auto_merge, guess_output_rank, verbose):
        """(shaped model, report dict, whether every value has a rank), or None below opset 7."""
        opset = _opset(in_mp)
        if not opset or opset < 7:
            logger.warning("Only support models of onnx opset 7 and above.")
            return None
        out, report = infer_shapes(in_mp, with_report=True, guess_output_rank=guess_output_rank, auto_merge=auto_merge)
        _local.report = report
        if verbose > 0:
            logger.info("yobx: %d values, %d dims: %d constant, %d symbolic, %d fresh, %d unknown rank", report["values"],
                        report["dims"], report["constant"], report["symbolic"], report["fresh"], report["unknown_rank"])
            for a in report["assumptions"]:
                logger.warning("yobx: %s assumed %s at node %s", a["question"], a["answer"], a["node"])
        return out, report, report["unknown_type"] == 0

    @staticmethod
    def infer_shapes(in_mp, int_max=2**31 - 1, auto_merge=False, guess_output_rank=False, verbose=0):
        result = SymbolicShapeInference._run(in_mp, auto_merge, guess_output_rank, verbose)
        if result is None:
            return None
        out, report, complete = result
        if not complete:
            raise Exception(f"Incomplete symbolic shape inference: {report['unknown_type']} values of unknown element type "
                            f"(operators not covered: {', '.join(x['op'] for x in report['not_covered']) or 'none'})")
        return out


def _renamed(model, report):
    """The report's name_mapping as {symbol: the input dim_param it renames}, the dim_param as
    protobuf gives it (bytes when not UTF-8: the report has it as surrogateescape decodes it)."""
    symbols = {m["dim_param"]: m["symbol"] for m in report["name_mapping"]}
    out = {}
    for vi in model.graph.input:
        for d in vi.type.tensor_type.shape.dim if vi.type.HasField("tensor_type") else ():
            if d.HasField("dim_param"):
                text = d.dim_param.decode("utf-8", "surrogateescape") if isinstance(d.dim_param, bytes) else d.dim_param
                if text in symbols:
                    out[symbols[text]] = d.dim_param
    return out


class SymbolicShapeInferenceHelper(SymbolicShapeInference):
    """onnxruntime's ``SymbolicShapeInferenceHelper`` (what the transformer fusions ask
    shapes of) with yobx's inference: ``infer(dynamic_axis_mapping)`` once, then
    ``get_edge_shape(name)`` and ``compare_shape(a, b)``, with the dims named in the
    mapping replaced by their values (an expression of mapped dims is evaluated:
    ``batch*seq`` at ``{"batch": 4, "seq_len": 7}``... when all its dims are mapped),
    and ``known_vi_``, every value's ValueInfoProto by name. An input dim whose
    dim_param is not a symbol name (``"batch size"``), which yobx writes as a symbol
    (``batch_size``), is given by the model's name, as onnxruntime's tool names it."""

    def __init__(self, model, verbose=0, int_max=2**31 - 1, auto_merge=True, guess_output_rank=False):
        super().__init__(int_max, auto_merge, guess_output_rank, verbose)
        self.model_ = model
        self.all_shapes_inferred_ = False
        self.is_inferred_ = False
        self.dynamic_axis_mapping_ = {}
        self.known_vi_ = {}
        self.out_mp_ = None
        self.renamed_ = {}  # a symbol yobx named an input dim whose dim_param is not a symbol name -> that dim_param

    def infer(self, dynamic_axis_mapping, max_runs=200):
        """Infers every shape (once: ``max_runs`` is onnxruntime's bound on its passes,
        yobx needs one). Returns whether every value's rank is known."""
        assert dynamic_axis_mapping is not None
        if self.is_inferred_ and self.dynamic_axis_mapping_ == dynamic_axis_mapping:
            return self.all_shapes_inferred_
        self.dynamic_axis_mapping_ = dynamic_axis_mapping
        if not self.is_inferred_:
            result = self._run(self.model_, self.auto_merge_, self.guess_output_rank_, self.verbose_)
            if result is None:
                self.all_shapes_inferred_ = False
            else:
                self.out_mp_, report, self.all_shapes_inferred_ = result
                self.renamed_ = _renamed(self.model_, report)
                import onnx

                g = self.out_mp_.graph
                known = {i.name: onnx.helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)) for i in g.initializer}
                for vi in list(g.input) + list(g.value_info) + list(g.output):
                    known[vi.name] = vi
                self.known_vi_ = known
        self.is_inferred_ = True
        return self.all_shapes_inferred_

    def get_edge_shape(self, edge):
        """The shape of a value: ints, and dim_param strings for dims not in the mapping;
        None when unknown."""
        assert self.all_shapes_inferred_
        if edge not in self.known_vi_:
            print("Cannot retrieve the shape of " + str(edge))
            return None
        shape = _shape_of(self.known_vi_[edge].type)
        if shape is None:
            return None
        # the mapping's values by symbol too: a dim the model names "batch size" is batch_size in what yobx wrote
        values = dict(self.dynamic_axis_mapping_)
        for symbol, written in self.renamed_.items():
            if written in values and symbol not in values:
                values[symbol] = values[written]
        from .. import sym

        for i, dim in enumerate(shape):
            if not isinstance(dim, (str, bytes)):
                continue
            if dim in self.renamed_:  # the model's name for it, as onnxruntime's tool keeps it: equal shapes compare equal
                shape[i] = dim = self.renamed_[dim]
            if dim in values:
                shape[i] = values[dim]
                continue
            if not values or isinstance(dim, bytes):
                continue
            try:
                e = sym.parse(dim)
                if e.free_symbols and all(s in values for s in e.free_symbols):
                    shape[i] = e.evaluate({s: values[s] for s in e.free_symbols})
            except ValueError:
                pass  # a dim_param that is not an expression: kept as it is
        return shape

    def compare_shape(self, edge, edge_other):
        """Whether two values have the same shape; an exception when either is unknown."""
        assert self.all_shapes_inferred_
        shape = self.get_edge_shape(edge)
        shape_other = self.get_edge_shape(edge_other)
        if shape is None or shape_other is None:
            raise Exception("At least one shape is missed for edges to compare")
        return shape == shape_other


# Where onnxruntime's tools find the two classes: onnxruntime.tools.symbolic_shape_infer and
# the quantization's shape_inference (bound at import); the transformers package puts its own
# directory and ../tools on sys.path and imports the same files again as top-level modules
# (shape_infer_helper, symbolic_shape_infer), whose names onnx_model and convert_to_packing_mode
# bind at import. patched() imports these, then replaces every binding it finds in sys.modules.
_IMPORTED = ["onnxruntime.tools.symbolic_shape_infer", "onnxruntime.transformers", "shape_infer_helper", "symbolic_shape_infer",
             "onnx_model", "convert_to_packing_mode", "onnxruntime.quantization.shape_inference"]
_NAMES = {"SymbolicShapeInference": SymbolicShapeInference, "SymbolicShapeInferenceHelper": SymbolicShapeInferenceHelper}
_lock = threading.Lock()
_depth = 0
_originals = {}  # name -> onnxruntime's classes bound to it


def _bindings(accept):
    """(module, name, value) for each module attribute among _NAMES whose value `accept` takes."""
    found = []
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", None) == __name__:
            continue  # this module's own names are yobx's classes, always
        d = getattr(module, "__dict__", None)
        if not isinstance(d, dict):
            continue
        for name in _NAMES:
            v = d.get(name)
            if v is not None and accept(name, v):
                found.append((module, name, v))
    return found


@contextlib.contextmanager
def patched():
    """yobx's ``SymbolicShapeInference`` and ``SymbolicShapeInferenceHelper`` in place of
    onnxruntime's in every module that binds them, for the ``with`` block; yields the
    patched names (``module.name``). At the end, every binding is onnxruntime's again,
    those of modules first imported inside the block included. Nested blocks patch once.
    """
    global _depth
    with _lock:
        if _depth == 0:
            if "onnxruntime" not in sys.modules:
                # onnxruntime.quantization imports onnx.reference, which fails once onnxruntime has added
                # its own schemas to ONNX's registry (Debian 13 shares it): first, then
                importlib.import_module("onnx.reference")
            for m in _IMPORTED:
                try:
                    importlib.import_module(m)
                except ImportError as e:
                    raise ImportError(f"yobx.onnx.ort.patched() needs onnxruntime's Python tools (Debian: python3-onnxruntime): {e}") from e
                except NotImplementedError as e:
                    raise ImportError(f"yobx.onnx.ort.patched(): {m} cannot be imported: import onnx.reference before onnxruntime "
                                      f"(Debian 13's onnxruntime adds its schemas to ONNX's registry, which onnx.reference, "
                                      f"imported by onnxruntime.quantization, then refuses): {e}") from e
            _originals.clear()
            for _, name, v in _bindings(lambda name, v: isinstance(v, type) and v is not _NAMES[name] and
                                        v.__module__ in ("symbolic_shape_infer", "shape_infer_helper",
                                                         "onnxruntime.tools.symbolic_shape_infer",
                                                         "onnxruntime.transformers.shape_infer_helper")):
                _originals.setdefault(name, [])
                if v not in _originals[name]:
                    _originals[name].append(v)
        replaced = _bindings(lambda name, v: any(v is o for o in _originals.get(name, ())))
        for module, name, _ in replaced:
            setattr(module, name, _NAMES[name])
        _depth += 1
    try:
        yield sorted(f"{m.__name__}.{name}" for m, name, _ in replaced)
    finally:
        with _lock:
            _depth -= 1
            for module, name, original in reversed(replaced):
                setattr(module, name, original)
            if _depth == 0:
                # bound inside the block (a module imported there): onnxruntime's class of that module's
                # own import, the one defined where the module imports from
                for module, name, _ in _bindings(lambda name, v: v is _NAMES[name]):
                    setattr(module, name, _original_for(module, name))


def _original_for(module, name):
    """onnxruntime's class a module would have bound: the one from the same import path."""
    candidates = _originals.get(name, [])
    top_level = "." not in module.__name__
    for c in candidates:
        if ("." not in c.__module__) == top_level:
            return c
    return candidates[0]
