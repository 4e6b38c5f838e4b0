#!/usr/bin/env python3
"""Writes the seed inputs of the states and pattern fuzz targets (tests/fuzz/corpus/{states,
pattern}): a valid Adam and SGD-momentum .states for fuzz_states.cc's network (key 0 of shape
(2, 3), key 1 of shape (3,)), and as regress-* files the reproducers of issue 39's crashes and
silent acceptances (a state smaller or larger than its weight, float16/int8/float64 states, empty
count and optimizer arrays, a key the network lacks, malformed names), and the patterns that hung
or overflowed std::regex. Plain struct packing of MXNet's NDArray list format (Note [MXNet .params
format]), so no MXNet is needed.
    python3 scripts/make_fuzz_seeds_states_pattern.py
"""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz", "corpus")
TYPES = {"float32": (0, "f"), "float64": (1, "d"), "float16": (2, "e"), "int8": (5, "b"),
         "int64": (6, "q")}


def array(shape, dtype="float32", value=0.5):
    flag, fmt = TYPES[dtype]
    out = struct.pack("<Iii", 0xF993FAC9, 0, len(shape))
    out += b"".join(struct.pack("<q", d) for d in shape)
    out += struct.pack("<iii", 1, 0, flag)
    n = 1
    for d in shape:
        n *= d
    cast = int if dtype.startswith("int") else float
    return out + struct.pack("<" + fmt * n, *([cast(value)] * n))


def params(entries):
    out = struct.pack("<QQQ", 0x112, 0, len(entries))
    out += b"".join(a for _, a in entries)
    out += struct.pack("<Q", len(entries))
    for name, _ in entries:
        out += struct.pack("<Q", len(name)) + name.encode()
    return out


def adam(**changes):
    entries = {"state:0:0": array([2, 3]), "state:0:1": array([2, 3]), "state:1:0": array([3]),
               "state:1:1": array([3]), "count:0": array([1], "int64", 2),
               "count:1": array([1], "int64", 2), "optimizer:adam": array([1], "int64", 2)}
    for name, value in changes.items():
        name = name.replace("__", ":")
        if value is None:
            entries.pop(name)
        else:
            entries[name] = value
    return params(list(entries.items()))


def write(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


write("states", "seed-adam", adam())
write("states", "seed-sgd-momentum", params([
    ("state:0:0", array([2, 3])), ("state:1:0", array([3])), ("count:0", array([1], "int64", 1)),
    ("count:1", array([1], "int64", 1)), ("optimizer:sgd", array([1], "int64", 1))]))
write("states", "regress-smaller-state", adam(state__0__0=array([1, 3])))
write("states", "regress-larger-state", adam(state__1__1=array([30])))
write("states", "regress-float16-state", adam(state__0__1=array([2, 3], "float16")))
write("states", "regress-int8-state", adam(state__0__0=array([2, 3], "int8", 1)))
write("states", "regress-float64-state", adam(state__1__0=array([3], "float64")))
write("states", "regress-empty-count", adam(count__0=array([0], "int64")))
write("states", "regress-empty-optimizer", adam(optimizer__adam=array([0], "int64")))
write("states", "regress-unknown-key", adam(**{"state__9__0": array([3])}))
write("states", "regress-malformed-name", adam(**{"state__x__0": array([3])}))
write("states", "regress-missing-index", adam(**{"state__0": array([3])}))
write("states", "regress-huge-key", adam(**{"count__99999999999999999999": array([1], "int64")}))
write("pattern", "seed-prefix", "fc1_.*")
write("pattern", "seed-alternatives", "(fc|conv)[0-9]+_(weight|bias)")
write("pattern", "regress-nested-quantifiers", "(a*)*b")
write("pattern", "regress-nested-alternation", "(a|aa)*!x")
write("pattern", "regress-100k-characters", "(" * 100000)
write("pattern", "regress-deep-nesting", "(" * 1500 + "a" + ")" * 1500)
write("pattern", "regress-backreference", "(a)\\1")
