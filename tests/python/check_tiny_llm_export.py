"""Checks, in Python, what examples/tiny_llm_generate saved.

    /usr/bin/python3 tests/python/check_tiny_llm_export.py <directory>

- tiny_llm_args.pt (torch::pickle_save) loads with torch.load: the argument
  names, shapes and dtypes are the demo's;
- tiny_llm_dynamic_shapes.py evaluates (torch 1.13 has no torch.export: a
  minimal Dim stand-in is provided when it is missing) and its structure
  matches the arguments': same keys, same nesting, and each tensor's dynamic
  dimensions are dimensions it has.
Use Debian's interpreter (/usr/bin/python3), the one python3-torch installs into.
"""
import os
import sys
import types

import torch

EXPECTED = {
    "input_ids": ([2, 1], torch.int64),
    "attention_mask": ([2, 6], torch.int64),
    "position_ids": ([2, 1], torch.int64),
}
CACHE = ([2, 4, 5, 8], torch.float32)
LAYERS = 2


def provide_dim_stand_in():
    """torch.export.Dim with the DYNAMIC marker, when torch is too old to have it."""
    if hasattr(torch, "export") and hasattr(torch.export, "Dim"):
        return
    export = types.ModuleType("torch.export")

    class Dim:
        DYNAMIC = "DYNAMIC"

        def __init__(self, name, min=None, max=None):
            self.name, self.min, self.max = name, min, max

    export.Dim = Dim
    torch.export = export
    sys.modules["torch.export"] = export


def check_structure(spec, arg, where):
    """spec mirrors arg: a dict of dim -> label for a tensor, lists for lists."""
    if isinstance(arg, torch.Tensor):
        assert isinstance(spec, dict), f"{where}: a tensor needs a dict of dimensions, got {spec!r}"
        for dim, label in spec.items():
            assert isinstance(dim, int) and 0 <= dim < arg.dim(), f"{where}: no dimension {dim!r} in shape {list(arg.shape)}"
            assert isinstance(label, str) or label == torch.export.Dim.DYNAMIC, f"{where}: label {label!r}"
    elif isinstance(arg, (list, tuple)):
        assert isinstance(spec, (list, tuple)) and len(spec) == len(arg), f"{where}: {spec!r} does not match {len(arg)} items"
        for i, (s, a) in enumerate(zip(spec, arg)):
            check_structure(s, a, f"{where}[{i}]")
    elif isinstance(arg, dict):
        assert isinstance(spec, dict) and list(spec) == list(arg), f"{where}: keys {list(spec)} != {list(arg)}"
        for k in arg:
            check_structure(spec[k], arg[k], f"{where}[{k!r}]")
    else:
        assert spec is None, f"{where}: a constant needs None, got {spec!r}"


def main(directory):
    args = torch.load(os.path.join(directory, "tiny_llm_args.pt"))
    assert list(args) == [*EXPECTED, "past_key_values"], f"argument names {list(args)}"
    for name, (shape, dtype) in EXPECTED.items():
        t = args[name]
        assert list(t.shape) == shape and t.dtype == dtype, f"{name}: {list(t.shape)} {t.dtype}"
    cache = args["past_key_values"]
    assert len(cache) == 2 and all(len(c) == LAYERS for c in cache), "past_key_values: [key_cache, value_cache]"
    for t in cache[0] + cache[1]:
        assert (list(t.shape), t.dtype) == CACHE, f"past_key_values: {list(t.shape)} {t.dtype}"

    provide_dim_stand_in()
    scope = {}
    with open(os.path.join(directory, "tiny_llm_dynamic_shapes.py")) as f:
        exec(compile(f.read(), "tiny_llm_dynamic_shapes.py", "exec"), scope)
    dynamic_shapes = scope["dynamic_shapes"]
    check_structure(dynamic_shapes, args, "dynamic_shapes")
    assert dynamic_shapes["past_key_values"][0][0] == {0: "batch_size", 2: "past_sequence_length"}
    assert dynamic_shapes["attention_mask"] == {0: "batch_size", 1: "total_sequence_length"}
    print(f"python check ok: torch {torch.__version__}, {len(args)} arguments, dynamic shapes match")


if __name__ == "__main__":
    main(sys.argv[1])
