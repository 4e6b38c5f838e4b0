#!/usr/bin/env python3
"""Counts the lines of GPU-only code: code that a CPU build never compiles, so no CPU test runs it.

GPU-only code is the body of every `__global__` function, every `__device__` function that is not
also `__host__` (COHORT_HOST_DEVICE functions in the op headers are compiled for the CPU too and
the CPU kernels call them), and every `__device__` lambda, in the .cu and .cuh files. Lines that
are blank, braces alone or comments are not counted.

  scripts/count-device-lines.py [--per-file] [ROOT]

Prints one JSON object: {"device_lines": N, "files": {...}} (files only with --per-file).
"""
import json
import pathlib
import re
import sys

# A token that starts GPU-only code; the code runs to the brace that closes the first '{' after it.
START = re.compile(r"__global__|(?<!__host__ )__device__(?!\s+__host__)")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def device_lines(text):
    """The numbers of the lines that hold GPU-only code."""
    code = strip_comments(text)
    lines = set()
    for m in START.finditer(code):
        # __host__ __device__ in either order is host code too.
        before = code[max(0, m.start() - 12):m.start()]
        after = code[m.end():m.end() + 12]
        if "__host__" in before or after.lstrip().startswith("__host__"):
            continue
        # A declaration (ends in ';' before any '{') or a __shared__ / variable is no body.
        brace = code.find("{", m.end())
        semi = code.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):
            continue
        depth, i = 0, brace
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        first = code.count("\n", 0, m.start())
        last = code.count("\n", 0, i)
        for n in range(first, last + 1):
            lines.add(n)
    src = code.split("\n")
    return {n for n in lines if src[n].strip() not in ("", "{", "}", "};", "});", "})")}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parent.parent)
    files = {}
    for path in sorted(list(root.rglob("*.cu")) + list(root.rglob("*.cuh"))):
        rel = path.relative_to(root)
        if rel.parts[0] in ("build", ".deps") or rel.parts[0].startswith("build"):
            continue
        n = len(device_lines(path.read_text()))
        if n:
            files[str(rel)] = n
    out = {"device_lines": sum(files.values())}
    if "--per-file" in sys.argv:
        out["files"] = files
    print(json.dumps(out, indent=None))


if __name__ == "__main__":
    main()
