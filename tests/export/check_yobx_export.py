"""yobx-export's errors, each with its message, exit status 1 and nothing written.

    /usr/bin/python3 tests/export/check_yobx_export.py <tools/yobx_export.py> <bert observed dir> <work dir>

The observed directory is the one observe_scripted wrote for the BERT-like
encoder (save_observations' layout).
"""
import os
import re
import shutil
import subprocess
import sys

CASES = '''
import torch
from torch import nn


def scripted():
    return torch.jit.script(nn.Linear(2, 2))


def not_a_module():
    return 3


def broken():
    raise RuntimeError("no weights here")


class Noisy(nn.Module):
    """Takes the BERT-like encoder's inputs; its output is random, so no export reproduces it."""

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        return input_ids.float() + torch.rand(input_ids.shape)


def noisy():
    return Noisy()
'''


def main(tool, observed, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with open(os.path.join(work, "cases.py"), "w") as f:
        f.write(CASES)
    no_literal = os.path.join(work, "no_literal")
    shutil.copytree(observed, no_literal)
    with open(os.path.join(no_literal, "dynamic_shapes.py"), "w") as f:
        f.write("shapes = {}\n")
    refused = os.path.join(work, "refused")
    shutil.copytree(observed, refused)
    with open(os.path.join(refused, "dynamic_shapes.py"), "w") as f:
        f.write("dynamic_shapes = {'no_such_input': {0: 'batch'}}\n")
    out = os.path.join(work, "out.pt2")
    expected = [
        (["--model", "models", "--observed", observed],
         r"--model 'models': expected MODULE:FACTORY \(a module and a function building the eager model\)"),
        (["--model", "no_such_module:make", "--observed", observed],
         r"--model 'no_such_module:make': cannot import 'no_such_module': ModuleNotFoundError: No module named 'no_such_module'"),
        (["--model", "cases:nope", "--observed", observed], r"--model 'cases:nope': module 'cases' has no function 'nope'"),
        (["--model", "cases:broken", "--observed", observed], r"--model 'cases:broken': broken\(\) failed: RuntimeError: no weights here"),
        (["--model", "cases:scripted", "--observed", observed],
         r"--model 'cases:scripted': scripted\(\) returned a TorchScript module; torch.export needs the eager nn.Module"),
        (["--model", "cases:not_a_module", "--observed", observed],
         r"--model 'cases:not_a_module': not_a_module\(\) returned a int, not a torch.nn.Module"),
        (["--model", "cases:noisy", "--observed", os.path.join(work, "nowhere")],
         r"--observed '.*/nowhere': no export_args.pt \(yobx::libtorch::save_observations writes it\)"),
        (["--model", "cases:noisy", "--observed", no_literal], r".*/no_literal/dynamic_shapes.py defines no dynamic_shapes"),
        (["--model", "cases:noisy", "--observed", refused, "--aoti", out],
         r"torch.export.export failed with the arguments \[\[\d+, \d+\](, \[\d+, \d+\])*\] and dynamic_shapes: \w+Error: (.|\n)*"),
        (["--model", "cases:noisy", "--observed", observed, "--aoti", out],
         r"call 0 \[\[2, 5\](, \[2, 5\])*\]: the exported program differs from the eager model by [0-9.e+-]+ \(--atol 0.0001\)"),
    ]
    failures = 0
    for args, pattern in expected:
        run = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True, cwd=work,
                             env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.abspath(__file__))})
        message = run.stderr.strip()
        prefix = "yobx-export: "
        ok = run.returncode == 1 and message.startswith(prefix) and re.fullmatch(pattern, message[len(prefix):]) is not None
        if not ok:
            failures += 1
            print(f"FAILED {' '.join(args)}: status {run.returncode}, stderr:\n{run.stderr}")
        else:
            print(f"ok: {message.splitlines()[0]}")
    if os.path.exists(out) or [f for f in os.listdir(work) if f.startswith(".yobx-export-")]:
        failures += 1
        print(f"FAILED: a failing run left {out} or its work directory behind")
    print("yobx-export check ok" if failures == 0 else f"yobx-export check: {failures} FAILED")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main(*sys.argv[1:])
