#!/usr/bin/env python3
"""Packs small images with MXNet 1.9.1's recordio.pack (the images encoded by Pillow: MXNet's
pack_img needs Python's cv2, which its wheel lacks) and reads them back through MXNet's own
mx.io.ImageRecordIter, writing the batches it serves to tests/data/image_records/expected.params
for tests/io/image_record_iter_test.cc: Cohort's ImageRecordIter must serve the same batches
from the same records.

    python3 -m venv /tmp/mxvenv && /tmp/mxvenv/bin/pip install mxnet==1.9.1 'numpy<1.24' pillow
    /tmp/mxvenv/bin/python scripts/make_mxnet_image_record_fixture.py

Records: png.rec/.idx (six PNG images of different sizes, labels 0..5), jpeg.rec/.idx (the same
images as JPEG, quality 90), multi.rec/.idx (three PNGs with two labels each). The cases, each
saved as <case>_data, <case>_label and <case>_pad (one array per batch, suffixed _b<i>):
  center:  png, data_shape (3, 12, 12), batch 4, center crop, mean (10, 20, 30), std (2, 3, 4),
           scale 0.5 (6 records: the second batch pads 2)
  resize:  png, resize 14 then center crop (3, 12, 12), batch 3
  gray:    png, data_shape (1, 12, 12), batch 3
  jpeg:    jpeg, data_shape (3, 12, 12), batch 3
  multi:   multi, label_width 2, data_shape (3, 10, 10), batch 3"""
import io
import os

import mxnet as mx
import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                   "image_records")
SIZES = [(16, 16), (20, 14), (14, 18), (24, 20), (13, 13), (30, 16)]  # (width, height)


def image(i, width, height):
    """Smooth gradients with a little noise: realistic for JPEG, exact for PNG."""
    rng = np.random.RandomState(i)
    y, x = np.mgrid[0:height, 0:width]
    rgb = np.stack([x * 255 // max(width - 1, 1), y * 255 // max(height - 1, 1),
                    (x + y + 40 * i) % 256], axis=-1).astype(np.int32)
    rgb += rng.randint(-12, 13, size=rgb.shape)
    return Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8), "RGB")


def encode(img, fmt):
    buf = io.BytesIO()
    if fmt == "JPEG":
        img.save(buf, fmt, quality=90)
    else:
        img.save(buf, fmt)
    return buf.getvalue()


def pack(name, images, labels):
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, name + ".idx"),
                                        os.path.join(OUT, name + ".rec"), "w")
    for i, (payload, label) in enumerate(zip(images, labels)):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, label, i, 0), payload))
    rec.close()


def read(case, rec, expected, **kwargs):
    it = mx.io.ImageRecordIter(path_imgrec=os.path.join(OUT, rec + ".rec"), shuffle=False,
                               preprocess_threads=1, prefetch_buffer=1, **kwargs)
    for b, batch in enumerate(it):
        expected["%s_data_b%d" % (case, b)] = batch.data[0].copy()
        expected["%s_label_b%d" % (case, b)] = batch.label[0].copy()
        expected["%s_pad_b%d" % (case, b)] = mx.nd.array([batch.pad])


def main():
    os.makedirs(OUT, exist_ok=True)
    images = [image(i, w, h) for i, (w, h) in enumerate(SIZES)]
    pack("png", [encode(im, "PNG") for im in images], [float(i) for i in range(6)])
    pack("jpeg", [encode(im, "JPEG") for im in images], [float(i) for i in range(6)])
    pack("multi", [encode(im, "PNG") for im in images[:3]],
         [[float(i), 10.0 + i] for i in range(3)])
    expected = {}
    read("center", "png", expected, data_shape=(3, 12, 12), batch_size=4, mean_r=10, mean_g=20,
         mean_b=30, std_r=2, std_g=3, std_b=4, scale=0.5)
    read("resize", "png", expected, data_shape=(3, 12, 12), batch_size=3, resize=14)
    read("gray", "png", expected, data_shape=(1, 12, 12), batch_size=3)
    read("jpeg", "jpeg", expected, data_shape=(3, 12, 12), batch_size=3)
    read("multi", "multi", expected, data_shape=(3, 10, 10), batch_size=3, label_width=2)
    mx.nd.save(os.path.join(OUT, "expected.params"), expected)
    for k in sorted(expected):
        print(k, expected[k].shape)


if __name__ == "__main__":
    main()
