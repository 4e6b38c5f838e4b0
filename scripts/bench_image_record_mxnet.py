#!/usr/bin/env python3
"""The peer side of scripts/bench-image-record.sh: MXNet 1.9.1's mx.io.ImageRecordIter over the
same records with the same work (shuffle, random crop, random mirror, mean/std), one JSON line
like bench/image_record_bench.
    python3 scripts/bench_image_record_mxnet.py REC IDX C H W THREADS EPOCHS BATCH"""
import json
import sys
import time

import mxnet as mx


def main():
    rec, idx = sys.argv[1], sys.argv[2]
    shape = tuple(int(v) for v in sys.argv[3:6])
    threads, epochs, batch = (int(v) for v in sys.argv[6:9])
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=shape,
                               batch_size=batch, shuffle=True, rand_crop=True, rand_mirror=True,
                               mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395,
                               std_g=57.12, std_b=57.375, preprocess_threads=threads, seed=1)
    best = 0.0
    for _ in range(epochs):
        it.reset()
        start = time.perf_counter()
        samples = 0
        for b in it:
            b.data[0].wait_to_read()
            samples += batch - b.pad
        best = max(best, samples / (time.perf_counter() - start))
    print(json.dumps({"bench": "image_record_iter", "impl": "mxnet-1.9.1", "threads": threads,
                      "batch_size": batch, "samples_per_sec": round(best)}))


if __name__ == "__main__":
    main()
