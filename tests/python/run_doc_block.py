"""Runs the one ```python block of a Markdown file whose first line is the
given text, as shown, in the current directory.

    /usr/bin/python3 run_doc_block.py docs/libtorch.md "# Python: script the model and save it"
"""
import linecache
import re
import sys


def main(path, first_line):
    text = open(path).read()
    blocks = [m.group(1) for m in re.finditer(r"```python\n(.*?)```", text, re.S)
              if m.group(1).split("\n", 1)[0] == first_line]
    if len(blocks) != 1:
        print(f"{path}: {len(blocks)} python blocks start with {first_line!r}, expected 1")
        return 1
    # torch.jit.script reads the source of the methods it compiles: linecache holds the block's.
    name = f"<{path}: {first_line}>"
    linecache.cache[name] = (len(blocks[0]), None, blocks[0].splitlines(True), name)
    exec(compile(blocks[0], name, "exec"), {"__name__": "__snippet__"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
