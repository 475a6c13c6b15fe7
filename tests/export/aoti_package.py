"""Exports a model with the real torch.export from what yobx wrote (the
arguments of infer_export_arguments and the to_python() literal, as
check_export.py does) and compiles it into an AOTInductor package,
<directory>/<name>.pt2, that C++ loads back with yobx::libtorch::PackageRunner
(observe_scripted --package) and checks on every observed call. The
package's metadata `yobx.inputs` describes its tensor inputs (dtype, and
shape with the symbols of its dynamic dimensions) so that the runner refuses
a call that breaks them before it runs.

    /usr/bin/python3 tests/export/aoti_package.py <bert|...> <directory>
"""
import json
import os
import sys
import time

import torch
from torch.export.graph_signature import InputKind, TensorArgument

import models
from check_export import load_dynamic_shapes, split


def main(name, directory):
    path = lambda suffix: os.path.join(directory, f"{name}_{suffix}")  # noqa: E731
    args, kwargs = split(torch.load(path("export_args.pt")))
    program = torch.export.export(models.make(name), args, kwargs=kwargs,
                                  dynamic_shapes=load_dynamic_shapes(path("dynamic_shapes.py")))
    # The tensor inputs, in the order of the flat call, for yobx::libtorch::PackageRunner to check a
    # call before it runs (AOTInductor runs an input of another rank).
    values = {n.name: n.meta["val"] for n in program.graph.nodes if n.op == "placeholder"}
    inputs = [{"dtype": str(values[s.arg.name].dtype).removeprefix("torch."),
               "shape": [d if isinstance(d, int) else str(d) for d in values[s.arg.name].shape]}
              for s in program.graph_signature.input_specs
              if s.kind == InputKind.USER_INPUT and isinstance(s.arg, TensorArgument)]
    begin = time.perf_counter()
    package = torch._inductor.aoti_compile_and_package(
        program, package_path=os.path.join(directory, f"{name}.pt2"),
        inductor_configs={"aot_inductor.metadata": {"yobx.inputs": json.dumps(inputs)}})
    print(f"packaged {name} into {package} in {time.perf_counter() - begin:.1f} s, torch {torch.__version__}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
