"""yobx's ONNX shape inference, in-process.

Every value of a model gets its type and shape, each dim a constant or an
expression of the inputs' dims as yobx prints it (``batch``, ``(height + 31)//32``,
``past + seq``), as the command ``yobx-onnx-shapes`` writes them::

    import onnx, yobx.onnx
    model = onnx.load("model.onnx")
    shaped = yobx.onnx.infer_shapes(model)          # a new ModelProto; model is not changed
    shaped, report = yobx.onnx.infer_shapes(model, with_report=True)
    yobx.onnx.infer_shapes(model, inplace=True)     # or into model itself, returned: no copy
    yobx.onnx.evaluate_shapes(shaped, {"batch": 2, "height": 224})["logits"]   # (2, 1000)

The model crosses into C++ as bytes and only what inference wrote comes back (the
graph's value_info and outputs): the shaped model is a copy of ``model`` with them put in.
Errors are ``ValueError`` (a malformed model, a cycle, an unknown opset, a
question strict mode cannot decide) with the messages ``yobx-onnx-shapes`` prints;
a file that cannot be opened or written is the ``OSError`` of its errno
(``FileNotFoundError``, ``IsADirectoryError``, ``PermissionError``) with that message.
:mod:`yobx.onnx.ort` is imported on first use (``yobx.onnx.ort.patched()`` after
``import yobx.onnx``).
"""
import importlib
import json
import os

import onnx

from .. import _yobx

__all__ = ["infer_shapes", "infer_shapes_path", "evaluate_shapes", "memory", "operator_table"]
_submodules = ("ort",)  # imported on first use, as yobx imports its own: `import yobx.onnx` then yobx.onnx.ort


def __getattr__(name):
    if name in _submodules:
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'yobx.onnx' has no attribute '{name}'")



def _name(name, what):
    """A dim's name as the model holds it, any bytes (a proto2 string): bytes as given, a str as
    UTF-8, where a lone surrogate of Python's "surrogateescape" decoding is the byte it stands for."""
    if isinstance(name, bytes):
        return name
    try:
        return name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise ValueError(f"{what} {name!r}: not a name a model can hold (a lone surrogate that stands for no byte)") from None


def _hints(hints):
    if hints is None:
        return {}
    if not isinstance(hints, dict):
        raise TypeError(f"hints must be a dict of dim names to sizes, not {type(hints).__name__}")
    for name, value in hints.items():
        if not isinstance(name, (str, bytes)) or not name:
            raise ValueError(f"hint {name!r}: the name must be a non-empty string")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"hint '{name}': expected a size (an integer >= 0), got {value!r}")
        _int64(value, f"hint '{name}'")
    return {_name(name, "hint"): value for name, value in hints.items()}


def _profiles(op_profiles):
    """draft export's op_profiles: a dict, or its JSON text."""
    if op_profiles is None:
        return ""
    if isinstance(op_profiles, str):
        return op_profiles
    if isinstance(op_profiles, dict):
        return json.dumps(op_profiles)
    raise TypeError(f"op_profiles must be a dict or its JSON text, not {type(op_profiles).__name__}")


# What crosses into C++, and how: the module's transport policy, in one place. Each mechanism
# below was measured on and off side by side (benchmarks/transport.py; docs/performance.md,
# "What crosses into C++") and is kept because it gains at least 10% on some model; a
# threshold that gained nothing (never serialized whole past 32 MB; payloads of 1 to 64 KiB
# skipped by C++ only for a ModelProto, not for bytes) was removed.
#
# TensorProto's payload fields: what inference never reads of a large initializer.
_PAYLOADS = {"float_data", "int32_data", "string_data", "int64_data", "raw_data", "double_data", "uint64_data"}
_TENSOR_FIELDS = [(f.name, f.label == f.LABEL_REPEATED, f.message_type is not None)
                  for f in onnx.TensorProto.DESCRIPTOR.fields if f.name not in _PAYLOADS]
# The payloads the light copy of a large model leaves out, neither serialized nor copied: 64 KiB
# or more each (payload_unread ones). A smaller payload costs less to copy with the rest field by
# field (10 to 17% of the call on models of 16 KiB to 1.4 MB weights, against 1 KiB).
_LEFT_FROM = 64 << 10
# The payloads C++ skips as it parses (payload_unread ones of 1 KiB or more): when only the written
# types come back (a ModelProto) none needs copying back; bytes come back whole with them put back
# (26% of the call on a model of 17 MB of weights, against 64 KiB).
_LEFT_OUT_FROM = 1 << 10
# From this many nodes or bytes, inference runs beside the copy of the model: handing it to
# yobx's thread and taking it back costs ~0.1 ms here; the copy of a 1,000-node graph ~1 ms
# (its inference ~2 ms), of a model with 10 MB of weights 1-2 ms (15 to 27% of the call).
_OVERLAP_FROM = 1000
_OVERLAP_BYTES = 1 << 20
# Below _LIGHT_FROM the model is serialized whole (C++ skips the payloads on its side); so is one
# whose bytes are mostly nodes and small tensors (less than _LIGHT_PER_ITEM a node or
# initializer): serializing them costs less than copying them field by field (the light copy
# takes 1.3 to 4.1 times less on models of large weights; serialized whole, a graph of 8,000
# nodes or 600 small weights 1.7 to 1.9 times less).
_LIGHT_FROM = 1 << 20
_LIGHT_PER_ITEM = 8 << 10


def _whole(model, size):
    """Whether to serialize the model whole (its size `size`) rather than without its weights."""
    if size < _LIGHT_FROM:
        return True
    graph = model.graph
    return size < _LIGHT_PER_ITEM * (len(graph.node) + len(graph.initializer))


def _light(model, size=None):
    """The model's bytes, and the positions of the initializers whose payloads they leave out.

    A large model is copied field by field without the payloads of its large initializers
    (what ModelFile leaves in a file, C++'s payload_unread, here of 64 KiB or more), which are neither serialized nor copied; a small one is serialized whole."""
    if _whole(model, model.ByteSize() if size is None else size):
        return model.SerializeToString(), []
    graph = model.graph
    left = [i for i, t in enumerate(graph.initializer)
            if t.ByteSize() >= _LEFT_FROM and _yobx.payload_unread(t.data_type, list(t.dims))]
    light = onnx.ModelProto()
    _copy_all_but_initializers(model, light)
    target = light.graph
    large = set(left)
    for i, t in enumerate(graph.initializer):
        copy = target.initializer.add()
        if i not in large:
            copy.CopyFrom(t)
            continue
        for name, repeated, message in _TENSOR_FIELDS:  # each field read by name: the payloads are never touched
            value = getattr(t, name)
            if repeated:
                if len(value):
                    getattr(copy, name).extend(value)
            elif message:
                if t.HasField(name):
                    getattr(copy, name).CopyFrom(value)
            elif value:
                setattr(copy, name, value)
    return light.SerializeToString(), left


def _copy_all_but_initializers(source, target):
    """Every field of the ModelProto `source` into `target`, but the graph's initializers."""
    for field, value in source.ListFields():
        if field.name != "graph":
            _copy_field(target, field, value)
    for field, value in source.graph.ListFields():
        if field.name != "initializer":
            _copy_field(target.graph, field, value)


def _replace_all_but_initializers(model, whole):
    for field in model.DESCRIPTOR.fields:
        if field.name != "graph":
            model.ClearField(field.name)
    for field in model.graph.DESCRIPTOR.fields:
        if field.name != "initializer":
            model.graph.ClearField(field.name)
    _copy_all_but_initializers(whole, model)


def _copy_field(target, field, value):
    if field.label == field.LABEL_REPEATED:
        getattr(target, field.name).extend(value)
    elif field.message_type is not None:
        getattr(target, field.name).CopyFrom(value)
    else:
        setattr(target, field.name, value)


def _bytes_of(model, function):
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString(), model
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), None
    raise TypeError(f"{function}: model must be an onnx.ModelProto or its serialized bytes, not {type(model).__name__}")


def _infer(model, strict, hints, op_profiles, onnx_fallback, guess_output_rank=False, auto_merge=False, with_report=True,
           inplace=False):
    """The shaped ModelProto and the report's JSON text (None without ``with_report``); with
    ``inplace``, the types are written into ``model`` itself, which is returned."""
    held = isinstance(model, onnx.ModelProto)
    if inplace and not held:
        raise TypeError(f"infer_shapes: inplace needs an onnx.ModelProto to write into, not {type(model).__name__}")
    size = model.ByteSize() if held else 0
    if held:
        data, left = _light(model, size)
    else:
        data, left = _bytes_of(model, "infer_shapes")[0], []
    # A ModelProto held here comes back as a copy with what inference wrote merged in: C++ sends
    # only the graph's value_info and outputs, and reads no payload of 1 KiB or more. A model
    # with subgraphs (types written inside its nodes) comes back whole, its large payloads left
    # out and copied over from `model`; bytes come back whole, the payloads put back.
    # a large graph: inference runs on yobx's thread (C++, the GIL free) while this one copies
    # the model, the two halves of the call at once (in place, there is no copy to overlap)
    overlap = held and not inplace and (len(model.graph.node) >= _OVERLAP_FROM or size >= _OVERLAP_BYTES)
    # by position (pybind11 takes a microsecond more to match eleven keywords, 2% of a small
    # model's call); an error leaves `model` as it was, in place too
    result = _yobx.infer_shapes(data, "none" if held else "put_back", _LEFT_OUT_FROM,  # payloads, left_from
                                bool(with_report), bool(strict), _hints(hints), _profiles(op_profiles), bool(onnx_fallback),
                                bool(guess_output_rank), bool(auto_merge), overlap)  # ..., auto_merge, on_worker
    out = model if inplace else onnx.ModelProto()
    if overlap:  # a Call, running: the copy meanwhile
        out.CopyFrom(model)
        result = result.result()
    shaped, left_out, graph_types, report = result
    if graph_types:
        if not overlap and not inplace:
            out.CopyFrom(model)  # the one copy of the weights, in C++ (protobuf's)
        graph = out.graph
        graph.ClearField("value_info")
        graph.ClearField("output")
        graph.MergeFromString(shaped)
        return out, report
    if inplace and (left or left_out):
        # the model back whole, its large payloads left out: every field but the graph's
        # initializers, which inference never changes, replaces the model's
        whole = onnx.ModelProto()
        whole.ParseFromString(shaped)
        _replace_all_but_initializers(model, whole)
        return model, report
    out.ParseFromString(shaped)  # (replaces the copy made meanwhile, if any; in place, the model: nothing was left out)
    if left or left_out:
        # the payloads inference did not need, copied from the model the caller holds: the one copy of the weights
        source, target = model.graph.initializer, out.graph.initializer
        for i in sorted(set(left) | set(left_out)):
            target[i].CopyFrom(source[i])
    return out, report


def infer_shapes(model, *, strict=False, hints=None, op_profiles=None, onnx_fallback=True, with_report=False, inplace=False,
                 guess_output_rank=False, auto_merge=False):
    """A new ModelProto with the type and shape of every value written in.

    ``model`` is an ``onnx.ModelProto`` (not changed) or its serialized bytes. The
    intermediate values go to ``graph.value_info``, the outputs' types are written,
    subgraphs (If, Loop, Scan) included. External data is not read: a model loaded
    without it infers from the dims alone (``infer_shapes_path`` reads it from the
    model's directory).

    - ``strict``: a question the dims cannot decide is a ``ValueError`` naming the
      node, instead of ONNX's rule (a fresh symbol, ``unk__N``).
    - ``hints``: sizes of input dims by name, ``{"batch": 2}``: a draft walk that
      takes the hints' answer and records each assumption in the report.
    - ``op_profiles``: draft export's op_profiles for custom operators (a dict or
      its JSON text).
    - ``onnx_fallback``: ask ONNX's own inference for operators yobx does not cover.
    - ``with_report``: return ``(model, report)``, the report a dict (the JSON
      report of ``yobx-onnx-shapes --report``).
    - ``inplace``: write the types into ``model`` (a ModelProto) and return it, the
      same object: no copy of the model, which is most of the call on a model of
      large weights (resnet18's 47 MB). On an error ``model`` is left as it was.
    - ``guess_output_rank``, ``auto_merge``: onnxruntime's tool's options of the same
      names (an operator no rule covers gets its first input's rank; two dims a
      broadcast must equate are taken equal, an assumption in the report), which
      the drop-in (``yobx.onnx.ort``) passes on.
    """
    out, report = _infer(model, strict, hints, op_profiles, onnx_fallback, guess_output_rank=guess_output_rank, auto_merge=auto_merge,
                         with_report=with_report, inplace=inplace)
    return (out, json.loads(report)) if with_report else out


def infer_shapes_path(in_path, out_path=None, *, strict=False, hints=None, op_profiles=None, onnx_fallback=True,
                      with_report=False):
    """``infer_shapes`` from file to file (``out_path`` defaults to ``in_path``), the
    weights left in the files (never copied through Python). External data is read
    from the model's directory only. Returns the report (a dict) with
    ``with_report``, else None.
    """
    # as the file system names them: any bytes (os.fsencode)
    in_path = os.fsencode(in_path)
    out_path = in_path if out_path is None else os.fsencode(out_path)
    report = _yobx.infer_shapes_path(in_path, out_path, strict=bool(strict), hints=_hints(hints), op_profiles=_profiles(op_profiles),
                                     onnx_fallback=bool(onnx_fallback), guess_output_rank=False, auto_merge=False)
    return json.loads(report) if with_report else None


def evaluate_shapes(model, sizes, *, infer=True, op_profiles=None, onnx_fallback=True):
    """The concrete shape of every value at the given sizes of the input dims.

    ``{"batch": 2, "height": 224}`` -> ``{value name: (2, 64, 56, 56), ...}``. With
    ``infer`` (the default) the model's shapes are inferred first; otherwise the
    dims already written are read (any dim_param ``yobx.sym.parse`` reads). A dim
    that depends on a size not given (a fresh ``unk__N``: a data-dependent size)
    is ``None``; a value of unknown rank is ``None``. A size that names no dim of
    the model is a ``ValueError``. A name that is not UTF-8 (ONNX's names may hold any bytes)
    is a ``bytes`` key, as protobuf gives that name (``value_info.name`` is then bytes).
    """
    sizes = _sizes(sizes, "sizes")
    data = _light(model)[0] if isinstance(model, onnx.ModelProto) else _bytes_of(model, "evaluate_shapes")[0]
    shapes = _yobx.evaluate_shapes(data, sizes, infer=bool(infer), strict=False, hints={}, op_profiles=_profiles(op_profiles),
                                   onnx_fallback=bool(onnx_fallback))
    return {name: None if shape is None else tuple(shape) for name, shape in shapes.items()}


def _int64(value, what):
    """A Python int past int64 would reach C++ as a TypeError of pybind11's, several lines long."""
    if value >= 2**63:
        raise ValueError(f"{what}: {value} is past int64 (at most {2**63 - 1})")
    if value < -2**63:
        raise ValueError(f"{what}: {value} is below int64 (at least {-2**63})")
    return value


def _sizes(sizes, what):
    if not isinstance(sizes, dict):
        raise TypeError(f"{what} must be a dict of dim names to sizes, not {type(sizes).__name__}")
    for name, value in sizes.items():
        if not isinstance(name, (str, bytes)) or isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"size {name!r}: expected a dim name and an integer, got {value!r}")
        _int64(value, f"size {name!r}")
    return {_name(name, "size"): value for name, value in sizes.items()}


def memory(model, at=None, *, minimum=None, plot=None, infer=True, hints=None, op_profiles=None, onnx_fallback=True):
    """What the model needs in memory, from its shapes alone, as a dict (the report's
    ``memory`` section of ``yobx-onnx-shapes --memory``).

    - ``values``: every value with its ``bytes`` as an expression of the input dims
      (``"4*batch*seq*768"``; ``None`` with ``why`` when a dim, the rank or the
      element size is not known), and the steps it is live in (``first``, ``last``);
    - ``weights``: the initializers' and constants' bytes (``total``, ``by_dtype``,
      ``external``), counted from their dims, never read;
    - ``peak``: the peak activation memory over the node order (``order``), one
      expression, the Max of the steps in ``peak_steps``, exact over the sizes the
      model runs at (every value's dims at least 0, the walk's requirements, each
      input dim at least 1 or its ``minimum``): each step with a ``witness``, sizes
      where it alone is the largest (``None``: unresolved, counted in
      ``unresolved``); ``large``: the step proven the peak once every size is at
      least ``from``; ``smallest``: each symbol's smallest size there;
    - ``growth``: per dim, the outputs whose bytes grow with it and ``per_unit``,
      the bytes one more unit adds (a KV cache's bytes per token); where that still
      depends on the dim (frames cut every 320 samples), ``step`` and ``period``:
      the bytes grow by ``step`` every ``period`` of it;
    - with ``at`` (``{"batch": 8, "seq": 4096}``): ``at`` (the peak, the step where
      it is, the largest values live there) and each value's ``bytes_at``.

    ``plot=("seq", 1, 4096)`` adds ``svg``: the peak activations, weights and total
    as functions of that dim, the other dims at ``at``. ``minimum={"height": 224}``
    narrows the sizes the peak is exact over (a size of ``at`` or the plot's low
    size below 1 widens it to 0). ``infer=False`` reads the
    dims already written (a model ``infer_shapes`` returned). A size that names no
    dim, or a dim of the peak without a size, is a ``ValueError``.
    """
    at = {} if at is None else _sizes(at, "at")
    minimum = {} if minimum is None else _sizes(minimum, "minimum")
    name, lo, hi = "", 0, 0
    if plot is not None:
        if not (isinstance(plot, (tuple, list)) and len(plot) == 3 and isinstance(plot[0], (str, bytes)) and
                all(isinstance(v, int) and not isinstance(v, bool) for v in plot[1:])):
            raise ValueError(f"plot must be (dim name, low size, high size), not {plot!r}")
        name, lo, hi = plot
        name = _name(name, "plot")
        lo, hi = _int64(lo, "plot"), _int64(hi, "plot")
    data = _light(model)[0] if isinstance(model, onnx.ModelProto) else _bytes_of(model, "memory")[0]
    report, svg = _yobx.memory(data, at, minimum, infer=bool(infer), plot=name, lo=lo, hi=hi, hints=_hints(hints),
                               op_profiles=_profiles(op_profiles), onnx_fallback=bool(onnx_fallback))
    out = json.loads(report)
    if plot is not None:
        out["svg"] = svg
    return out


def operator_table():
    """The operators yobx's rules cover, as the table of docs/onnx.md (Markdown)."""
    return _yobx.operator_table()
