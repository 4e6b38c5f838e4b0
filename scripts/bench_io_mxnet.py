#!/usr/bin/env python3
"""The peer side of scripts/bench-io.sh: MXNet 1.9.1's mx.io.MNISTIter over the same files
(uncompressed: MXNet's MNISTIter does not read gzip), batch 128, in order and shuffled.
Prints one JSON object per line, like bench/io_bench."""
import json
import sys
import time

import mxnet as mx


def measure(it, epochs):
    best = 0.0
    for _ in range(epochs):
        it.reset()
        start = time.perf_counter()
        samples = 0
        for batch in it:
            samples += 128 - batch.pad
        best = max(best, samples / (time.perf_counter() - start))
    return best


def main():
    images, labels, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for shuffle in (False, True):
        start = time.perf_counter()
        it = mx.io.MNISTIter(image=images, label=labels, batch_size=128, shuffle=shuffle,
                             flat=False, seed=1, silent=True)
        load = time.perf_counter() - start
        print(json.dumps({"bench": "mnist_iter", "impl": "mxnet-1.9.1", "prefetch": True,
                          "shuffle": shuffle, "batch_size": 128,
                          "samples_per_sec": round(measure(it, epochs)),
                          "load_seconds": round(load, 3)}))


if __name__ == "__main__":
    main()
