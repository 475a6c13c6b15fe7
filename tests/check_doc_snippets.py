#!/usr/bin/env python3
"""Every ```cpp block in docs/*.md and README.md must appear, line for line, in a
file under examples/ or tests/, which ctest builds and runs: documentation
code cannot drift from code that compiles."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
sources = {p: [l.strip() for l in p.read_text().splitlines()]
           for d in ("examples", "tests") for p in (root / d).rglob("*") if p.suffix in (".cpp", ".hpp")}

def found(block):
    lines = [l.strip() for l in block.splitlines() if l.strip()]
    for text in sources.values():
        flat = [l for l in text if l]
        for i in range(len(flat) - len(lines) + 1):
            if flat[i:i + len(lines)] == lines:
                return True
    return False

missing = 0
count = 0
for md in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
    if not md.exists():
        continue
    for m in re.finditer(r"```cpp\n(.*?)```", md.read_text(), re.S):
        count += 1
        if not found(m.group(1)):
            missing += 1
            line = md.read_text()[:m.start()].count("\n") + 1
            print(f"{md.relative_to(root)}:{line}: this C++ block is not taken from examples/ or tests/")
print(f"{count - missing} passed, {missing} failed")
sys.exit(1 if missing else 0)
