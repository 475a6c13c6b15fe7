"""Runs every ```python block of README.md and docs/*.md as shown (the blocks of
one file in one namespace, as a reader runs them in one session), in the
directory of the demo's files (examples/tiny_llm_generate's output), with
tests/export on the import path, the way the docs say to run them.

    /usr/bin/python3 tests/export/run_doc_python.py <source root> <demo's directory>
"""
import linecache
import os
import pathlib
import re
import sys
import traceback


def main(root, directory):
    root = pathlib.Path(root).resolve()
    sys.path.insert(0, str(root / "tests" / "export"))
    os.chdir(directory)
    passed = failed = 0
    for md in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = md.read_text()
        scope = {"__name__": "__snippet__"}  # the blocks of one file share their names, as in one session
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            line = text[:m.start()].count("\n") + 1
            try:
                # torch.jit.script reads the source of the methods it compiles: linecache holds the block's.
                name = f"<{md.relative_to(root)}:{line}>"
                linecache.cache[name] = (len(m.group(1)), None, m.group(1).splitlines(True), name)
                exec(compile(m.group(1), name, "exec"), scope)
                passed += 1
            except Exception:
                failed += 1
                print(f"{md.relative_to(root)}:{line}: this Python block fails")
                traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
