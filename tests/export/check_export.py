"""Exports a model with the real torch.export (torch >= 2.6) from what yobx
wrote, then runs the exported program on the inputs of every observed call.

    /usr/bin/python3 tests/export/check_export.py <tiny_llm|resnet18|encoder|bert> <directory>

The directory holds, written by C++, either <name>/ as
yobx::libtorch::save_observations writes it (export_args.pt, dynamic_shapes.py,
calls.pt, made.pt: the layout yobx-export reads) or the demo's files
<name>_export_args.pt, <name>_dynamic_shapes.py, <name>_calls.pt; and, when present,
<name>_derived_shapes.py: to_python() with derived_dims (Python code
ending in `dynamic_shapes = ...`). The model is exported with each literal.
- export_args: InputObserver::infer_export_arguments, saved with
  yobx::libtorch::save_value (a tuple of positional arguments or a dict of
  keyword arguments);
- dynamic_shapes.py: `dynamic_shapes = ` followed by
  DynamicShapes::to_python(), exactly as printed;
- calls: the list of every observed call's arguments,
  infer_arguments(i) for each call i, in the same form (absent inputs filled);
- made, when present: every call as it was made, (args, kwargs)
  with None or no key for an absent input. The eager model's outputs on the
  call as made are what the exported program, given the filled call, must
  give: a fill that changes the call's meaning fails here.
torch.load reads them with its default weights_only=True. The export starts
from the eager model of models.py (the same weights as the script C++
observed); each call's outputs from the exported program must equal the
eager model's within 1e-5. Gradients stay enabled: in eval mode under
torch.no_grad(), nn.TransformerEncoder takes its fused fast path
(aten._transformer_encoder_layer_fwd), which torch.export (2.6) cannot trace.
"""
import os
import sys

import torch

import models

TOLERANCE = 1e-5


# split, shapes and max_difference are yobx-export's own (tools/yobx_export.py), so that the
# tests compare outputs exactly as the shipped script does.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from yobx_export import shapes, split  # noqa: E402
from yobx_export import max_difference as difference  # noqa: E402


def max_difference(expected, got):
    """yobx-export's difference; a structure or shape that differs is an AssertionError here."""
    d = difference(expected, got)
    assert not isinstance(d, str), d
    return d


def load_dynamic_shapes(path):
    scope = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), scope)
    return scope["dynamic_shapes"]


def main(name, directory):
    observed = os.path.join(directory, name)
    if os.path.isdir(observed):  # save_observations' layout, the derived literal beside it
        path = lambda suffix: os.path.join(observed, suffix) if suffix != "derived_shapes.py" else \
            os.path.join(directory, f"{name}_{suffix}")  # noqa: E731
    else:
        path = lambda suffix: os.path.join(directory, f"{name}_{suffix}")  # noqa: E731
    export_args = torch.load(path("export_args.pt"))
    calls = torch.load(path("calls.pt"))
    made = torch.load(path("made.pt")) if os.path.exists(path("made.pt")) else None
    literals = [s for s in ("dynamic_shapes.py", "derived_shapes.py") if os.path.exists(path(s))]
    assert literals[0] == "dynamic_shapes.py", f"no {path('dynamic_shapes.py')}"
    model = models.make(name)
    worst = 0.0
    for literal in literals:
        args, kwargs = split(export_args)
        program = torch.export.export(model, args, kwargs=kwargs, dynamic_shapes=load_dynamic_shapes(path(literal)))
        module = program.module()
        for i, call in enumerate(calls):  # in the order they were observed, on one module, as a user would
            args, kwargs = split(call)
            expected = model(*made[i][0], **made[i][1]) if made is not None else model(*args, **kwargs)
            got = module(*args, **kwargs)
            diff = max_difference(expected, got)
            assert diff <= TOLERANCE, f"{literal}, call {i} {shapes(call)}: the exported program differs from eager by {diff}"
            worst = max(worst, diff)
    print(f"export check ok: {name}, torch {torch.__version__}, exported with {shapes(export_args)} and "
          f"{' then '.join(literals)}, {len(calls)} calls reproduced{" as made" if made is not None else ""} (max difference {worst:.1e})")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
