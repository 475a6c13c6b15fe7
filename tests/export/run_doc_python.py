"""Runs every ```python block of README.md and docs/*.md as shown (the blocks of
one file in one namespace, as a reader runs them in one session), in the
directory of the demo's files (examples/tiny_llm_generate's output), with
tests/export on the import path, the way the docs say to run them. With
--only, it runs only the blocks whose first line is that text (torch.export
not needed for those: ctest runs one on Debian 12 too).

    /usr/bin/python3 tests/export/run_doc_python.py <source root> <directory> [--only <first line>]
"""
import linecache
import os
import pathlib
import re
import sys
import traceback


def main(root, directory, only=None):
    root = pathlib.Path(root).resolve()
    sys.path.insert(0, str(root / "tests" / "export"))
    os.chdir(directory)
    passed = failed = 0
    for md in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = md.read_text()
        scope = {"__name__": "__snippet__"}  # the blocks of one file share their names, as in one session
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            block = m.group(1)
            if only is not None and block.split("\n", 1)[0] != only:
                continue
            line = text[:m.start()].count("\n") + 1
            try:
                # torch.jit.script reads the source of the methods it compiles: linecache holds the block's.
                name = f"<{md.relative_to(root)}:{line}>"
                linecache.cache[name] = (len(block), None, block.splitlines(True), name)
                exec(compile(block, name, "exec"), scope)
                passed += 1
            except Exception:
                failed += 1
                print(f"{md.relative_to(root)}:{line}: this Python block fails")
                traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    if len(sys.argv) not in (3, 5) or (len(sys.argv) == 5 and sys.argv[3] != "--only"):
        print(__doc__.strip().splitlines()[-1].strip())
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[4] if len(sys.argv) == 5 else None))
