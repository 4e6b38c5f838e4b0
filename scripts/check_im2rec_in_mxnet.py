#!/usr/bin/env python3
"""Checks that MXNet 1.9.1 reads what cohort-im2rec packs: every record of PREFIX.rec/.idx
through mx.io.ImageRecordIter (center crop of data_shape), its labels equal to PREFIX.lst's in
record order, and its pixels within 4 levels of Pillow's decoding of the same record (the JPEG
decoders differ in rounding). Prints one JSON line; exit 1 on a mismatch.

    /tmp/mxvenv/bin/python scripts/check_im2rec_in_mxnet.py PREFIX C H W"""
import io
import json
import sys

import mxnet as mx
import numpy as np
from PIL import Image


def main():
    prefix, shape = sys.argv[1], tuple(int(v) for v in sys.argv[2:5])
    listed = [line.split("\t") for line in open(prefix + ".lst").read().splitlines()]
    reader = mx.recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    it = mx.io.ImageRecordIter(path_imgrec=prefix + ".rec", data_shape=shape, batch_size=1,
                               shuffle=False, round_batch=False, preprocess_threads=1)
    worst, count = 0.0, 0
    for i, batch in enumerate(it):
        header, payload = mx.recordio.unpack(reader.read_idx(int(listed[i][0])))
        img = np.asarray(Image.open(io.BytesIO(payload)).convert("RGB"), dtype=np.float32)
        h, w = img.shape[:2]
        y, x = (h - shape[1]) // 2, (w - shape[2]) // 2
        want = img[y:y + shape[1], x:x + shape[2]].transpose(2, 0, 1)
        worst = max(worst, float(np.abs(batch.data[0][0].asnumpy() - want).max()))
        if float(batch.label[0].asnumpy()[0]) != float(listed[i][1]):
            sys.exit("record %d: MXNet's label %s, the list's %s" % (i, batch.label[0], listed[i][1]))
        count += 1
    print(json.dumps({"records": count, "listed": len(listed), "max_pixel_diff": worst}))
    sys.exit(0 if count == len(listed) and worst <= 4 else 1)


if __name__ == "__main__":
    main()
