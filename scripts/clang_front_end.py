#!/usr/bin/env python3
"""Every translation unit of a configured build tree through the compiler's front end alone.

Usage: python3 scripts/clang_front_end.py BUILD_DIR [JOBS] [--skip REGEX]

BUILD_DIR is configured with CMAKE_EXPORT_COMPILE_COMMANDS=ON (scripts/test.sh configures the
clang preset so on Debian 13). Each command of its compile_commands.json runs as written, with
-fsyntax-only instead of the object it would write: clang parses the file, instantiates the
templates and gives its warnings (all of them come from its front end; the build's -Werror makes
each an error), and generates no code, in about half the time of clang's -O0 build. The
compile-fail cases (tests/compile_fail, which fail on purpose) are left to their ctest tests, and
--skip leaves out the units whose object file (the path in the build tree) matches REGEX: those
another step compiles with the same compiler and warnings.
Prints each failing unit's command and output; exit status 1 if any failed.
"""
import json
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def syntax_only(entry):
    """The entry's compiler command without its output (-c, -o FILE), with -fsyntax-only."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != "-c":
            kept.append(arg)
    return kept + ["-fsyntax-only"]


def check(entry):
    command = syntax_only(entry)
    run = subprocess.run(command, cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], command, run.returncode, run.stdout + run.stderr


def main():
    args = sys.argv[1:]
    skip = None
    if "--skip" in args and args.index("--skip") + 1 < len(args):
        i = args.index("--skip")
        skip = re.compile(args[i + 1])
        del args[i:i + 2]
    if len(args) not in (1, 2) or not (len(args) == 1 or args[1].isdigit()):
        sys.exit(__doc__.strip().splitlines()[2])
    build = args[0]
    jobs = int(args[1]) if len(args) == 2 else os.cpu_count()
    database = os.path.join(build, "compile_commands.json")
    try:
        with open(database) as f:
            entries = json.load(f)
    except OSError as e:
        sys.exit(f"clang_front_end: cannot read {database} ({e.strerror}): configure with "
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
    compiler = os.path.basename(syntax_only(entries[0])[0]) if entries else "no compiler"
    entries = [e for e in entries if f"{os.sep}compile_fail{os.sep}" not in e["file"]]
    if skip:
        entries = [e for e in entries if not skip.search(e.get("output", ""))]
    # the unity batches (the longest units) first, so that the last ones to finish are shorter
    entries.sort(key=lambda e: ("Unity" not in e["file"], e["file"]))
    failed = 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for file, command, status, output in pool.map(check, entries):
            if status != 0 or output.strip():
                failed += 1
                print(f"clang_front_end: {os.path.relpath(file)}: exit status {status}\n{shlex.join(command)}\n{output}")
    if failed:
        sys.exit(f"clang_front_end: {failed} of {len(entries)} translation units failed ({compiler} -fsyntax-only)")
    print(f"clang_front_end: {len(entries)} translation units, no warning ({compiler} -fsyntax-only)")


if __name__ == "__main__":
    main()
