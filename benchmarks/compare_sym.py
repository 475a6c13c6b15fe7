#!/usr/bin/env python3
"""Times yobx (bench_sym, Google Benchmark) and SymPy on the same transformer
shape expressions (sym_corpus.txt) and expression pairs (sym_pairs.txt) in one
invocation, prints the ratios, and checks both verdicts on every pair against
the numeric truth (random integer assignments).

    python3 benchmarks/compare_sym.py build/ci/benchmarks/bench_sym

Use Debian's interpreter (/usr/bin/python3), the one python3-sympy installs into.
"""
import json
import pathlib
import random
import re
import subprocess
import sys
import timeit

import sympy

HERE = pathlib.Path(__file__).parent
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FUNCTIONS = {"Max", "Min", "Mod", "FloorDiv"}


def lines(name):
    return [l.strip() for l in (HERE / name).read_text().splitlines() if l.strip() and not l.startswith("#")]


def sympy_parse(text):
    # integer symbols: without the assumption SymPy cannot simplify floor or Mod
    local = {n: sympy.Symbol(n, integer=True) for n in NAME.findall(text) if n not in FUNCTIONS}
    local.update(Max=sympy.Max, Min=sympy.Min, Mod=sympy.Mod, FloorDiv=lambda a, b: sympy.floor(a / b))
    return sympy.parsing.sympy_parser.parse_expr(text, local_dict=local)


def sympy_equal(a, b):
    return sympy.simplify(sympy_parse(a) - sympy_parse(b)) == 0


def truly_equal(a, b):
    """Numeric truth: equal on 200 random assignments (those dividing by zero skipped)."""
    rng = random.Random(7)
    names = sorted({n for n in NAME.findall(a + " " + b) if n not in FUNCTIONS})
    py = {"Max": max, "Min": min, "Mod": lambda x, y: x % y, "FloorDiv": lambda x, y: x // y}
    for _ in range(200):
        env = dict(py, **{n: rng.randint(-20, 50) for n in names})
        try:
            if eval(a, {}, env) != eval(b, {}, env):
                return False
        except ZeroDivisionError:
            pass
    return True


def best_of(fn, repeat=3):
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    corpus, pairs = lines("sym_corpus.txt"), [tuple(s.strip() for s in l.split(";")) for l in lines("sym_pairs.txt")]

    res = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=0.5"],
                         check=True, capture_output=True, text=True)
    cpp = {b["name"]: b["real_time"] for b in json.loads(res.stdout)["benchmarks"]}  # ns per pass
    decided = subprocess.run([binary, "--decide"], check=True, capture_output=True, text=True).stdout.split("\n")
    yobx_verdicts = [l == "1" for l in decided[:len(pairs)]]

    py_simplify = best_of(lambda: [sympy.simplify(sympy_parse(t)) for t in corpus]) * 1e9
    py_equal = best_of(lambda: [sympy_equal(a, b) for a, b in pairs]) * 1e9
    sympy_verdicts = [sympy_equal(a, b) for a, b in pairs]
    truth = [truly_equal(a, b) for a, b in pairs]

    n, m = len(corpus), len(pairs)
    print(f"SymPy {sympy.__version__}: {n} expressions, {m} pairs ({sum(truth)} equal)")
    print(f"{'operation':<28} {'yobx':>12} {'SymPy':>12} {'ratio':>9}  target")
    rows = [("parse + simplify (per expr)", cpp["parse_simplify"] / n, py_simplify / n, ">= 1000x"),
            ("equality from text (per pair)", cpp["equality"] / m, py_equal / m, ">= 1000x"),
            ("equality, parsed (per pair)", cpp["equality_parsed"] / m, py_equal / m, "")]
    for name, ours, theirs, target in rows:
        print(f"{name:<28} {ours / 1e3:>9.2f} us {theirs / 1e3:>9.0f} us {theirs / ours:>8.0f}x  {target}")

    agree = sum(y == s for y, s in zip(yobx_verdicts, sympy_verdicts))
    print(f"yobx right on {sum(y == t for y, t in zip(yobx_verdicts, truth))}/{m} pairs, "
          f"SymPy right on {sum(s == t for s, t in zip(sympy_verdicts, truth))}/{m}; "
          f"they agree on {agree}/{m} ({100.0 * agree / m:.0f}%)")
    for (a, b), y, s, t in zip(pairs, yobx_verdicts, sympy_verdicts, truth):
        if y != t or s != t:
            who = " and ".join(w for w, v in (("yobx", y), ("SymPy", s)) if v != t)
            print(f"  not decisive: {who} on `{a}` vs `{b}` (truly {'equal' if t else 'different'})")
    sys.exit(0 if agree == m else 1)


if __name__ == "__main__":
    main()
