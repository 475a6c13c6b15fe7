"""Checks, in Python, what examples/tiny_llm_generate saved.

    /usr/bin/python3 tests/python/check_tiny_llm_export.py <directory>

- tiny_llm_export_args.pt and tiny_llm_calls.pt (yobx::libtorch::save_value)
  load with torch.load, with its default weights_only (True since torch 2.6):
  the export arguments have the demo's names, shapes and dtypes (every
  dynamic dimension at least 2), and each of the 8 observed calls has the
  same structure, its absent cache filled with its own batch and 0 tokens;
- tiny_llm_dynamic_shapes.py evaluates (torch 1.13 has no torch.export: a
  minimal stand-in with Dim.DYNAMIC is provided when it is missing) and its
  structure matches the arguments': same keys, same nesting, each tensor's
  dynamic dimensions are dimensions it has, each is Dim.DYNAMIC.
On Debian 13 tests/export/check_export.py exports them with the real
torch.export. Use Debian's interpreter (/usr/bin/python3), the one
python3-torch installs into.
"""
import os
import sys
import types

import torch

EXPECTED = {
    "input_ids": ([2, 3], torch.int64),
    "attention_mask": ([2, 11], torch.int64),
    "position_ids": ([2, 3], torch.int64),
}
CACHE = ([2, 4, 8, 8], torch.float32)
LAYERS = 2
# Per call: (batch, sequence, past): a prefill call then three decode calls, for two prompts.
CALLS = [(2, 5, 0), (2, 1, 5), (2, 1, 6), (2, 1, 7), (3, 7, 0), (3, 1, 7), (3, 1, 8), (3, 1, 9)]


def provide_dim_stand_in():
    """torch.export.Dim with the DYNAMIC marker, when torch is too old to have it."""
    if hasattr(torch, "export") and hasattr(torch.export, "Dim"):
        return
    export = types.ModuleType("torch.export")

    class Dim:
        DYNAMIC = "DYNAMIC"

    export.Dim = Dim
    torch.export = export
    sys.modules["torch.export"] = export


def check_structure(spec, arg, where):
    """spec mirrors arg: a dict of dim -> Dim.DYNAMIC for a tensor, lists for lists."""
    if isinstance(arg, torch.Tensor):
        assert isinstance(spec, dict), f"{where}: a tensor needs a dict of dimensions, got {spec!r}"
        for dim, marker in spec.items():
            assert isinstance(dim, int) and 0 <= dim < arg.dim(), f"{where}: no dimension {dim!r} in shape {list(arg.shape)}"
            assert marker is torch.export.Dim.DYNAMIC, f"{where}: {marker!r} is not torch.export.Dim.DYNAMIC"
            assert arg.shape[dim] >= 2, f"{where}: dynamic dimension {dim} of {list(arg.shape)} is {arg.shape[dim]}"
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


def cache_shapes(cache):
    assert len(cache) == 2 and all(len(c) == LAYERS for c in cache), "past_key_values: [key_cache, value_cache]"
    return {(tuple(t.shape), t.dtype) for t in cache[0] + cache[1]}


def main(directory):
    args = torch.load(os.path.join(directory, "tiny_llm_export_args.pt"))
    assert list(args) == [*EXPECTED, "past_key_values"], f"argument names {list(args)}"
    for name, (shape, dtype) in EXPECTED.items():
        t = args[name]
        assert list(t.shape) == shape and t.dtype == dtype, f"{name}: {list(t.shape)} {t.dtype}"
    assert cache_shapes(args["past_key_values"]) == {(tuple(CACHE[0]), CACHE[1])}, "past_key_values"

    calls = torch.load(os.path.join(directory, "tiny_llm_calls.pt"))
    assert len(calls) == len(CALLS), f"{len(calls)} calls"
    for i, (call, (batch, seq, past)) in enumerate(zip(calls, CALLS)):
        assert list(call) == list(args), f"call {i}: names {list(call)}"
        assert list(call["input_ids"].shape) == [batch, seq], f"call {i}: input_ids {list(call['input_ids'].shape)}"
        assert list(call["attention_mask"].shape) == [batch, past + seq], f"call {i}: attention_mask"
        assert cache_shapes(call["past_key_values"]) == {((batch, 4, past, 8), torch.float32)}, f"call {i}: cache"

    provide_dim_stand_in()
    scope = {}
    with open(os.path.join(directory, "tiny_llm_dynamic_shapes.py")) as f:
        exec(compile(f.read(), "tiny_llm_dynamic_shapes.py", "exec"), scope)
    dynamic_shapes = scope["dynamic_shapes"]
    check_structure(dynamic_shapes, args, "dynamic_shapes")
    assert list(dynamic_shapes["past_key_values"][0][0]) == [0, 2]
    assert list(dynamic_shapes["attention_mask"]) == [0, 1]
    print(f"python check ok: torch {torch.__version__}, {len(args)} arguments, {len(calls)} calls, dynamic shapes match")


if __name__ == "__main__":
    main(sys.argv[1])
