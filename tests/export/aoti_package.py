"""Exports a model with the real torch.export from what yobx wrote (the
arguments of infer_export_arguments and the to_python() literal, as
check_export.py does) and compiles it into an AOTInductor package,
<directory>/<name>.pt2, that C++ loads back with yobx::libtorch::PackageRunner
(observe_scripted --package) and checks on every observed call.

    /usr/bin/python3 tests/export/aoti_package.py <bert|...> <directory>
"""
import os
import sys
import time

import torch

import models
from check_export import load_dynamic_shapes, split


def main(name, directory):
    path = lambda suffix: os.path.join(directory, f"{name}_{suffix}")  # noqa: E731
    args, kwargs = split(torch.load(path("export_args.pt")))
    program = torch.export.export(models.make(name), args, kwargs=kwargs,
                                  dynamic_shapes=load_dynamic_shapes(path("dynamic_shapes.py")))
    begin = time.perf_counter()
    package = torch._inductor.aoti_compile_and_package(program, package_path=os.path.join(directory, f"{name}.pt2"))
    print(f"packaged {name} into {package} in {time.perf_counter() - begin:.1f} s, torch {torch.__version__}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
