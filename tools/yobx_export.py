#!/usr/bin/env python3
"""yobx-export: torch.export, and optionally an AOTInductor package, from the calls
a C++ program observed with yobx.

    yobx-export --model MODULE:FACTORY --observed DIR [--aoti OUT.pt2] [--atol 1e-4]

DIR holds what yobx::libtorch::save_observations writes (docs/aoti.md):
export_args.pt (the arguments to export with), dynamic_shapes.py (the
`dynamic_shapes = ...` literal, as printed), calls.pt (every observed call,
absent inputs filled) and made.pt (every call as it was made), and dynamic_axes.py (yobx's labels of the
dynamic dimensions, which name the package's symbols in its errors). FACTORY, a
function of MODULE (imported from the current directory or sys.path) called
without arguments, builds the eager model: torch.export does not take a
TorchScript module.

The model is exported with torch.export.export; the exported program is run on
every observed call and its outputs compared with the eager model's on the
call as made. With --aoti, the program is compiled with
torch._inductor.aoti_compile_and_package, the package loaded and checked on
every call the same way, and only then written to OUT.pt2, with the metadata
`yobx.inputs` (each tensor input's dtype and shape, its dynamic dimensions as
the program's symbols) that yobx::libtorch::PackageRunner checks a call
against before it runs. Any failure (the import, the export, a call: its index,
its shapes and torch's message) is one message on stderr and exit status 1,
and nothing is written. Needs torch >= 2.6 (and, for --aoti, a C++ compiler,
python3-dev, python3-setuptools and libomp-dev on Debian 13).
"""
import argparse
import importlib
import json
import os
import sys
import tempfile
import time


class Failure(Exception):
    """What yobx-export prints before exiting with status 1."""


def first_lines(error, n=6):
    text = f"{type(error).__name__}: {error}".strip()
    lines = text.splitlines()
    return "\n".join(lines[:n]) + ("\n  ..." if len(lines) > n else "")


def load_factory(spec):
    module_name, sep, factory_name = spec.partition(":")
    if not sep or not module_name or not factory_name:
        raise Failure(f"--model '{spec}': expected MODULE:FACTORY (a module and a function building the eager model)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as e:
        raise Failure(f"--model '{spec}': cannot import '{module_name}': {first_lines(e, 2)}")
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise Failure(f"--model '{spec}': module '{module_name}' has no function '{factory_name}'")
    try:
        model = factory()
    except Exception as e:
        raise Failure(f"--model '{spec}': {factory_name}() failed: {first_lines(e, 3)}")
    import torch
    if isinstance(model, torch.jit.ScriptModule):
        raise Failure(f"--model '{spec}': {factory_name}() returned a TorchScript module; torch.export needs the eager nn.Module")
    if not isinstance(model, torch.nn.Module):
        raise Failure(f"--model '{spec}': {factory_name}() returned a {type(model).__name__}, not a torch.nn.Module")
    return model.eval()


def read_observed(directory):
    import torch
    files = {}
    for name in ("export_args.pt", "dynamic_shapes.py", "calls.pt"):
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            raise Failure(f"--observed '{directory}': no {name} (yobx::libtorch::save_observations writes it)")
        files[name] = path
    try:
        export_args = torch.load(files["export_args.pt"])
        calls = torch.load(files["calls.pt"])
        made_path = os.path.join(directory, "made.pt")
        made = torch.load(made_path) if os.path.isfile(made_path) else None
    except Exception as e:
        raise Failure(f"--observed '{directory}': cannot read the saved arguments: {first_lines(e, 2)}")
    scope = {}
    try:
        with open(files["dynamic_shapes.py"]) as f:
            exec(compile(f.read(), files["dynamic_shapes.py"], "exec"), scope)
    except Exception as e:
        raise Failure(f"{files['dynamic_shapes.py']}: {first_lines(e, 2)}")
    if "dynamic_shapes" not in scope:
        raise Failure(f"{files['dynamic_shapes.py']} defines no dynamic_shapes")
    axes = None
    axes_path = os.path.join(directory, "dynamic_axes.py")
    if os.path.isfile(axes_path):  # yobx's labels, for the package's messages
        axes_scope = {}
        try:
            with open(axes_path) as f:
                exec(compile(f.read(), axes_path, "exec"), axes_scope)
        except Exception as e:
            raise Failure(f"{axes_path}: {first_lines(e, 2)}")
        axes = axes_scope.get("dynamic_axes")
    if made is not None and len(made) != len(calls):
        raise Failure(f"--observed '{directory}': made.pt has {len(made)} calls, calls.pt {len(calls)}")
    return export_args, scope["dynamic_shapes"], calls, made, axes


def split(arguments):
    """(args, kwargs) of a saved tuple or dict, or of an (args, kwargs) pair as made.pt holds."""
    if isinstance(arguments, dict):
        return (), arguments
    if isinstance(arguments, (tuple, list)):
        return tuple(arguments), {}
    raise Failure(f"saved arguments must be a tuple or a dict, got {type(arguments).__name__}")


def shapes(arguments):
    import torch
    import torch.utils._pytree as pytree
    return [list(t.shape) for t in pytree.tree_leaves(arguments) if isinstance(t, torch.Tensor)]


def max_difference(expected, got):
    """The largest absolute difference; NaN on both sides agrees, NaN against a number is infinite."""
    import torch
    import torch.utils._pytree as pytree
    e, g = pytree.tree_leaves(expected), pytree.tree_leaves(got)
    if len(e) != len(g):
        return f"{len(g)} outputs, the eager model gives {len(e)}"
    worst = 0.0
    for a, b in zip(e, g):
        if not isinstance(a, torch.Tensor):
            if a != b:
                return f"output {b!r}, the eager model gives {a!r}"
            continue
        if tuple(a.shape) != tuple(b.shape):
            return f"an output of shape {list(b.shape)}, the eager model's is {list(a.shape)}"
        if a.numel():
            a, b = a.detach().double(), b.detach().double()
            d = (a - b).abs()
            d[torch.isnan(a) & torch.isnan(b)] = 0
            d[torch.isnan(d)] = float("inf")
            worst = max(worst, d.max().item())
    return worst


def check_calls(what, run, calls, expected, atol):
    """Runs `run` on every call; returns the largest difference or raises Failure."""
    worst = 0.0
    for i, call in enumerate(calls):
        args, kwargs = split(call)
        try:
            got = run(*args, **kwargs)
        except Exception as e:
            raise Failure(f"call {i} {shapes(call)}: {what} failed: {first_lines(e)}")
        diff = max_difference(expected[i], got)
        if isinstance(diff, str):
            raise Failure(f"call {i} {shapes(call)}: {what} gives {diff}")
        if not diff <= atol:
            raise Failure(f"call {i} {shapes(call)}: {what} differs from the eager model by {diff:.3g} (--atol {atol:g})")
        worst = max(worst, diff)
    return worst


def labels_of(program, model, axes):
    """The program's symbols named by yobx's labels: {"s1": "sequence_length", ...}. `axes` is
    dynamic_axes.py's structure ({input: {axis: label}}, lists and dicts of them); a program
    input is matched by its placeholder name, which torch.export makes of the argument's path
    (past_key_values[0][1] is past_key_values_0_1)."""
    import inspect
    import torch
    by_name = {}

    def walk(prefix, node):
        if isinstance(node, dict) and all(isinstance(k, int) for k in node):
            by_name[prefix] = node
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(f"{prefix}_{k}" if prefix else str(k), v)
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                walk(f"{prefix}_{i}", v)
    if isinstance(axes, (list, tuple)):  # positional: the forward's parameters name them
        parameters = list(inspect.signature(model.forward).parameters)
        axes = dict(zip(parameters, axes))
    walk("", axes or {})
    labels = {}
    values = {n.name: n.meta["val"] for n in program.graph.nodes if n.op == "placeholder"}
    for spec in program.graph_signature.input_specs:
        node_axes = by_name.get(getattr(spec.arg, "name", None))
        value = values.get(getattr(spec.arg, "name", None))
        if not node_axes or not isinstance(value, torch.Tensor):
            continue
        for axis, label in node_axes.items():
            if isinstance(label, str) and axis < value.dim() and not isinstance(value.shape[axis], int):
                symbol = str(value.shape[axis])
                if symbol.isidentifier():
                    labels.setdefault(symbol, label)
    return labels


def placeholder_values(program):
    """The fake value of each user input of the program, in the order of the flat call."""
    from torch.export.graph_signature import InputKind
    values = {n.name: n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder"}
    return [values[s.arg.name] for s in program.graph_signature.input_specs
            if s.kind == InputKind.USER_INPUT and getattr(s.arg, "name", None) in values]


def runtime_asserts(program):
    """The conditions the program asserts at run time (sympy expressions): its graph's
    _assert_scalar nodes and its shape env's deferred runtime asserts, as torch 2.6 records them."""
    import torch
    found = []
    for n in program.graph.nodes:
        if n.op == "call_function" and n.target is torch.ops.aten._assert_scalar.default and n.args:
            value = n.args[0].meta.get("val") if isinstance(n.args[0], torch.fx.Node) else None
            if hasattr(value, "node"):
                found.append(value.node.expr)
    for value in placeholder_values(program):
        shape_env = getattr(getattr(value, "fake_mode", None), "shape_env", None)
        if shape_env is not None:
            for asserts in shape_env.deferred_runtime_asserts.values():
                found.extend(a.expr for a in asserts)
            break
    return found


def dims_text(dims):
    return [d if isinstance(d, int) else str(d) for d in dims]


def tensor_inputs(program, decomposed):
    """What yobx::libtorch::PackageRunner checks a call against (ProgramInputs): each tensor
    input of the program, in the order of the flat call, its dtype, shape (a dynamic dimension
    as the program's symbol or expression: s0, s1 + s11) and strides (those of the export
    argument: channels last, for one), the program's range constraints ([min, max], None for
    no maximum) and the conditions it asserts over its input symbols (`Eq(Mod(s1, 8), 0)`,
    `Ne(s0, s2)`, `s1 <= s3`).

    Read from the program AOTInductor compiles, `decomposed`, the program after its
    decompositions: an equality a decomposition finds (scaled_dot_product_attention's between
    a layer's key and value lengths) is a replacement there (both shapes carry s3), absent
    before; an assertion of the program as exported, over a symbol replaced since, is
    rewritten in the replacement."""
    import torch
    import sympy
    before, after = placeholder_values(program), placeholder_values(decomposed)
    replaced, symbols = {}, set()
    for b, a in zip(before, after):
        if not (isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor)) or b.dim() != a.dim():
            continue
        for x, y in zip(b.shape, a.shape):
            if isinstance(y, torch.SymInt):
                symbols |= y.node.expr.free_symbols
            if isinstance(x, torch.SymInt) and isinstance(x.node.expr, sympy.Symbol) and str(x) != str(y):
                replaced[x.node.expr] = y.node.expr if isinstance(y, torch.SymInt) else sympy.Integer(y)
    inputs = [{"dtype": str(v.dtype).removeprefix("torch."), "shape": dims_text(v.shape), "strides": dims_text(v.stride())}
              for v in after if isinstance(v, torch.Tensor)]

    def bound(v):  # int_oo, oo: unbounded
        return None if "oo" in str(v) else int(v)
    ranges = {str(k): [bound(r.lower) or 0, bound(r.upper)] for k, r in decomposed.range_constraints.items()
              if k not in replaced}
    constraints = []
    for expr in runtime_asserts(program) + runtime_asserts(decomposed):
        expr = expr.xreplace(replaced)
        # over the input symbols only: a data-dependent one (u0, from .item()) is the program's to check
        if expr in (sympy.true, True) or not expr.free_symbols or not expr.free_symbols <= symbols:
            continue
        if str(expr) not in constraints:
            constraints.append(str(expr))
    return {"inputs": inputs, "ranges": ranges, "constraints": constraints}


def flat_call(program, call):
    """The call's tensors in the order of the program's tensor inputs, each with the program's
    fake value of that input, and a function giving the call back with others in their place;
    (None, None) when the call does not flatten to the program's inputs."""
    import torch
    import torch.utils._pytree as pytree
    spec = program.call_spec.in_spec
    values = [v for v in placeholder_values(program) if isinstance(v, torch.Tensor)]
    args, kwargs = split(call)
    if spec is not None and spec.num_children == 2 and spec.children_specs[1].type is dict:
        keys = spec.children_specs[1].context
        kwargs = {k: kwargs[k] for k in keys if k in kwargs} | {k: v for k, v in kwargs.items() if k not in keys}
    leaves, tree = pytree.tree_flatten((args, kwargs))
    where = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    if len(where) != len(values) or any(leaves[i].dim() != v.dim() for i, v in zip(where, values)):
        return None, None

    def rebuild(tensors):
        new = list(leaves)
        for i, t in zip(where, tensors):
            new[i] = t
        a, k = pytree.tree_unflatten(new, tree)
        return k if isinstance(call, dict) else tuple(a)
    return [(leaves[i], v) for i, v in zip(where, values)], rebuild


def observed_ranges(program, calls, labels):
    """What the observed calls say of each of yobx's labels, read where the program's inputs
    have a label's symbol: {label: {"min": .., "max": .., "tied": whether its dimensions were
    equal in every call}}, what PackageRunner's as_observed option checks. Empty when a call
    does not flatten to the program's inputs."""
    observed = {}
    for call in calls:
        flat, _ = flat_call(program, call)
        if flat is None:
            return {}
        sizes = {}
        for t, v in flat:
            for size, dim in zip(t.shape, v.shape):
                if labels.get(str(dim)) is not None:
                    sizes.setdefault(labels[str(dim)], set()).add(int(size))
        for label, seen in sizes.items():
            entry = observed.setdefault(label, {"min": min(seen), "max": max(seen), "tied": True})
            entry["min"], entry["max"] = min(entry["min"], *seen), max(entry["max"], *seen)
            entry["tied"] = entry["tied"] and len(seen) == 1
    return observed


def laid_out(decomposed, call):
    """The call as PackageRunner gives it to the package: each tensor with the strides the
    program was compiled for (the export arguments': contiguous, or channels last), which
    AOTInductor assumes and does not check; contiguous where they cannot be evaluated."""
    import sympy
    import torch
    flat, rebuild = flat_call(decomposed, call)
    if flat is None:
        return contiguous(call)
    sizes = {}
    for t, v in flat:
        for d, n in zip(v.shape, t.shape):
            if isinstance(d, torch.SymInt) and isinstance(d.node.expr, sympy.Symbol):
                sizes[d.node.expr] = int(n)
    out = []
    for t, v in flat:
        try:
            strides = [s if isinstance(s, int) else int(s.node.expr.xreplace(sizes)) for s in v.stride()]
        except TypeError:  # a symbol without a value
            out.append(t.contiguous())
            continue
        out.append(t if list(t.stride()) == strides else torch.empty_strided(t.shape, strides, dtype=t.dtype, device=t.device).copy_(t))
    return rebuild(out)


def contiguous(call):
    """The call with every tensor contiguous."""
    import torch
    import torch.utils._pytree as pytree
    return pytree.tree_map(lambda t: t.contiguous() if isinstance(t, torch.Tensor) else t, call)


def run(argv):
    parser = argparse.ArgumentParser(prog="yobx-export", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="MODULE:FACTORY, a function building the eager model")
    parser.add_argument("--observed", required=True, help="the directory save_observations wrote")
    parser.add_argument("--aoti", help="compile an AOTInductor package into this .pt2 file")
    parser.add_argument("--atol", type=float, default=1e-4, help="largest difference allowed with the eager model (1e-4)")
    options = parser.parse_args(argv)
    import torch
    if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 6):
        raise Failure(f"torch >= 2.6 is needed (torch.export.Dim.DYNAMIC, AOTInductor packages), this is {torch.__version__}")
    model = load_factory(options.model)
    export_args, dynamic_shapes, calls, made, axes = read_observed(options.observed)
    # Gradients stay enabled: under no_grad, nn.TransformerEncoder's fused fast path cannot be traced.
    expected = []
    for i, call in enumerate(made if made is not None else calls):
        args, kwargs = split(call) if made is None else (tuple(call[0]), dict(call[1]))
        try:
            expected.append(model(*args, **kwargs))
        except Exception as e:
            raise Failure(f"call {i} {shapes(call)}: the eager model failed: {first_lines(e)}")
    args, kwargs = split(export_args)
    begin = time.perf_counter()
    try:
        program = torch.export.export(model, args, kwargs=kwargs, dynamic_shapes=dynamic_shapes)
    except Exception as e:
        raise Failure(f"torch.export.export failed with the arguments {shapes(export_args)} and dynamic_shapes: {first_lines(e, 12)}")
    exported = time.perf_counter() - begin
    worst = check_calls("the exported program", program.module(), calls, expected, options.atol)
    print(f"yobx-export: exported in {exported:.1f} s (torch {torch.__version__}), {len(calls)} calls reproduced "
          f"(max difference {worst:.1e})")
    if not options.aoti:
        return
    out = os.path.abspath(options.aoti)
    # read from the program before compiling: an error here is not the compiler's
    labels = labels_of(program, model, axes)
    decomposed = program.run_decompositions()  # what AOTInductor compiles
    observed = observed_ranges(program, calls, labels)
    if labels and not observed:
        print("yobx-export: the observed calls do not flatten to the program's inputs: the package holds no observed "
              "sizes (PackageRunner's as_observed refuses to run without them)")
    metadata = json.dumps({**tensor_inputs(program, decomposed), "labels": labels, "observed": observed})
    with tempfile.TemporaryDirectory(dir=os.path.dirname(out), prefix=".yobx-export-") as work:
        package_path = os.path.join(work, os.path.basename(out) if out.endswith(".pt2") else "package.pt2")
        begin = time.perf_counter()
        try:
            # layout_optimization off: torch 2.6's channels-last rewrite of convolutions gave
            # resnet18 packages 0.18 off the eager model (on an AVX-512 AMD EPYC, static and
            # dynamic shapes alike), which the check below caught; without it they agree to 1e-6
            torch._inductor.aoti_compile_and_package(
                program, package_path=package_path,
                inductor_configs={"layout_optimization": False, "aot_inductor.metadata": {"yobx.inputs": metadata}})
            package = torch._inductor.aoti_load_package(package_path)
        except Exception as e:
            raise Failure(f"aoti_compile_and_package failed: {first_lines(e, 12)}")
        compiled = time.perf_counter() - begin
        worst = check_calls("the package", package, [laid_out(decomposed, c) for c in calls], expected, options.atol)
        os.replace(package_path, out)
    print(f"yobx-export: packaged into {out} in {compiled:.1f} s, {len(calls)} calls reproduced (max difference {worst:.1e})")


def main():
    try:
        run(sys.argv[1:])
    except Failure as e:
        print(f"yobx-export: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
