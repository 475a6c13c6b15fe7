#!/usr/bin/env python3
"""Times yobx's pytree (bench_pytree, Google Benchmark) and torch.utils._pytree
on the same LLM keyword arguments (input_ids, attention_mask, position_ids and
a 32-layer DynamicCache: 67 tensors) in one invocation, and prints the ratios.

    python3 benchmarks/compare_pytree.py build/ci/benchmarks/bench_pytree

Use Debian's interpreter (/usr/bin/python3), the one python3-torch installs into.
"""
import json
import subprocess
import sys
import timeit

import torch
from torch.utils import _pytree as pytree


class DynamicCache:
    def __init__(self, key_cache, value_cache):
        self.key_cache, self.value_cache = key_cache, value_cache


# torch 1.13 spells it _register_pytree_node; later versions register_pytree_node.
register = getattr(pytree, "register_pytree_node", None) or pytree._register_pytree_node
register(DynamicCache,
         lambda c: ([c.key_cache, c.value_cache], ["key_cache", "value_cache"]),
         lambda values, ctx: DynamicCache(*values))


# Both sides report the best of this many repeats: the steady-state figure,
# with the same statistic for torch (timeit) and for yobx (Google Benchmark).
REPEATS = 5


def python_times():
    t = torch.zeros
    kwargs = dict(input_ids=t(1, 1), attention_mask=t(1, 1), position_ids=t(1, 1),
                  past_key_values=DynamicCache([t(1, 1, 1, 1) for _ in range(32)],
                                               [t(1, 1, 1, 1) for _ in range(32)]))
    leaves, spec = pytree.tree_flatten(kwargs)
    assert len(leaves) == 67
    out = {}
    for name, fn in [("flatten", lambda: pytree.tree_flatten(kwargs)),
                     ("unflatten", lambda: pytree.tree_unflatten(leaves, spec))]:
        n = 2000
        out[name] = min(timeit.repeat(fn, number=n, repeat=REPEATS)) / n * 1e9
    return out


def cpp_times(binary):
    res = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=0.2",
                          f"--benchmark_repetitions={REPEATS}"],
                         check=True, capture_output=True, text=True)
    out = {}
    for b in json.loads(res.stdout)["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue  # the mean, median and deviation Google Benchmark adds
        # Benchmarks timed by hand carry a "/manual_time" suffix.
        name = b["name"].split("/")[0]
        out[name] = min(out.get(name, b["real_time"]), b["real_time"])
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cpp = cpp_times(sys.argv[1])
    py = python_times()
    rows = [
        ("flatten", "dynamic_flatten", "Value<T>, leaf copies", 200),
        ("flatten", "dynamic_flatten_ptrs", "Value<T>, leaf addresses", 200),
        ("flatten", "dynamic_leaves", "Value<T>, leaves, no spec", None),
        ("flatten", "dynamic_flatten_kept_flat", "Value<T> kept flat, copies", None),
        ("flatten", "static_flatten", "typed struct", None),
        ("unflatten", "dynamic_unflatten", "Value<T>, leaf copies", 100),
        ("unflatten", "dynamic_unflatten_moved", "Value<T>, leaves moved", 100),
        ("unflatten", "dynamic_unflatten_look", "Value<T>, copies, 1 look", None),
        ("unflatten", "static_unflatten", "typed struct", None),
        ("unflatten", "hand_written_unflatten", "hand-written struct", None),
        ("unflatten", "hand_written_unflatten_moved", "hand-written, moved", None),
        ("unflatten", "leaves_vector_copy", "one vector of leaf copies", None),
        ("unflatten", "leaves_copy_no_allocation", "leaf copies, no allocation", None),
    ]
    print(f"torch {torch.__version__}, 67 tensors")
    print(f"{'operation':<10} {'yobx form':<27} {'yobx ns':>9} {'torch ns':>10} {'ratio':>8}  target")
    for op, bench, form, target in rows:
        ratio = py[op] / cpp[bench]
        goal = f">= {target}x: {'met' if ratio >= target else 'not met'}" if target else ""
        print(f"{op:<10} {form:<27} {cpp[bench]:>9.0f} {py[op]:>10.0f} {ratio:>7.1f}x  {goal}")
    print(f"Value<T> unflatten / hand-written struct: {cpp['dynamic_unflatten'] / cpp['hand_written_unflatten']:.2f}x"
          f" (copies), {cpp['dynamic_unflatten_moved'] / cpp['hand_written_unflatten_moved']:.2f}x (moved)")
    for bench in ("fixed_leaf_ptrs", "fixed_leaves_copies", "fixed_hand_written"):
        print(f"{bench:<24} {cpp[bench]:>7.1f} ns  {cpp[bench] / 67:.2f} ns per leaf")
    print(f"fixed_leaf_ptrs / hand-written loop: {cpp['fixed_leaf_ptrs'] / cpp['fixed_hand_written']:.2f}x")


if __name__ == "__main__":
    main()
