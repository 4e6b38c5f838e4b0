#!/usr/bin/env python3
"""Exposed communication per step of a cohort-train --timeline trace (Note [Timeline]).

    scripts/timeline-summary.py FILE.json [FILE.rank1.json ...]

For each rank and step (a "step" span on the main thread that ran forward): the step's time, the
compute time (forward and backward spans of the device threads, merged), the communication time
(allreduce spans, merged) and the exposed communication: time inside the step when an allreduce
ran and no device computed. One JSON line per rank with the means, then per step lines with --steps.
"""
import json
import sys


def merge(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def length(intervals):
    return sum(end - start for start, end in intervals)


def minus(a, b):
    """Parts of merged intervals a not covered by merged intervals b."""
    out, j = [], 0
    for start, end in a:
        cur = start
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < end:
            if b[k][0] > cur:
                out.append([cur, b[k][0]])
            cur = max(cur, b[k][1])
            k += 1
        if cur < end:
            out.append([cur, end])
    return out


def clip(intervals, start, end):
    return [[max(s, start), min(e, end)] for s, e in intervals if e > start and s < end]


def summarize(path, per_step):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    pid = spans[0]["pid"] if spans else 0
    thread = lambda e: names.get((e["pid"], e["tid"]), "")
    steps = [e for e in spans if e["name"] == "step" and thread(e) == "main"]
    forwards = [e for e in spans if e["name"] == "forward" and thread(e) == "main"]
    compute = merge([[e["ts"], e["ts"] + e["dur"]] for e in spans
                     if e["name"] in ("forward", "backward") and thread(e).startswith("device")])
    comm = merge([[e["ts"], e["ts"] + e["dur"]] for e in spans if e["name"] == "allreduce"])
    rows = []
    for s in steps:
        start, end = s["ts"], s["ts"] + s["dur"]
        if not any(start <= f["ts"] < end for f in forwards):
            continue  # the end of an epoch: the iterator had no batch
        c, m = clip(compute, start, end), clip(comm, start, end)
        rows.append({"step_ms": (end - start) / 1e3, "compute_ms": length(c) / 1e3,
                     "comm_ms": length(m) / 1e3, "exposed_comm_ms": length(minus(m, c)) / 1e3})
    if per_step:
        for i, r in enumerate(rows):
            print(json.dumps({"rank": pid, "step": i, **{k: round(v, 3) for k, v in r.items()}}))
    mean = {k: round(sum(r[k] for r in rows) / max(len(rows), 1), 3) for k in
            ("step_ms", "compute_ms", "comm_ms", "exposed_comm_ms")}
    print(json.dumps({"file": path, "rank": pid, "steps": len(rows), **mean}))


def main():
    args = [a for a in sys.argv[1:] if a != "--steps"]
    if not args:
        sys.exit(__doc__)
    for path in args:
        summarize(path, "--steps" in sys.argv)


if __name__ == "__main__":
    main()
