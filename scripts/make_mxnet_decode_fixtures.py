#!/usr/bin/env python3
"""Writes images MXNet 1.9.1 decodes in its own way, with what it decodes them to, for
tests/io/image_codec_test.cc (issue: a CMYK JPEG was refused, 16-bit PNGs came out
gamma-encoded):

    tests/data/image_decode/cmyk.jpg     a CMYK JPEG (Adobe's inverted convention, as Pillow
                                         writes it)
    tests/data/image_decode/rgb16.png    an RGB PNG of 16-bit samples
    tests/data/image_decode/gray16.png   a gray PNG of 16-bit samples
    tests/data/image_decode/expected.params
                                         "<file>:color" and "<file>:gray": mx.image.imdecode's
                                         output (HWC uint8, RGB) with flag 1 and flag 0

    pip install mxnet==1.9.1 'numpy<1.24' pillow   (in a venv; run this with that venv's python)
    python scripts/make_mxnet_decode_fixtures.py"""
import io
import os
import struct
import zlib

import mxnet as mx
import numpy as np
from PIL import Image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data',
                   'image_decode')


def png16(samples):
    """A PNG of 16-bit samples, (h, w) gray or (h, w, 3) RGB."""
    h, w = samples.shape[:2]
    color_type = 2 if samples.ndim == 3 else 0
    rows = samples.reshape(h, -1).astype('>u2').tobytes()
    stride = len(rows) // h
    raw = b''.join(b'\x00' + rows[y * stride:(y + 1) * stride] for y in range(h))

    def chunk(kind, data):
        return (struct.pack('>I', len(data)) + kind + data +
                struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff))
    header = struct.pack('>IIBBBBB', w, h, 16, color_type, 0, 0, 0)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(raw)) +
            chunk(b'IEND', b''))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(3)
    cmyk = rng.randint(0, 256, size=(6, 8, 4)).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(cmyk, mode='CMYK').save(buffer, format='JPEG', quality=95)
    files = {'cmyk.jpg': buffer.getvalue()}
    rgb = rng.randint(0, 65536, size=(5, 7, 3)).astype(np.uint16)
    rgb[0, 0] = (4000, 255, 65535)  # 4000 / 256 = 15 (libpng's sRGB encoding gave 71)
    files['rgb16.png'] = png16(rgb)
    gray = rng.randint(0, 65536, size=(4, 9)).astype(np.uint16)
    gray[0, 0] = 4000
    files['gray16.png'] = png16(gray)
    expected = {}
    for name, data in files.items():
        with open(os.path.join(OUT, name), 'wb') as f:
            f.write(data)
        for flag, kind in ((1, 'color'), (0, 'gray')):
            expected['%s:%s' % (name, kind)] = mx.image.imdecode(data, flag=flag)
    mx.nd.save(os.path.join(OUT, 'expected.params'), expected)
    for key, value in sorted(expected.items()):
        print(key, value.shape, value.asnumpy().ravel()[:6])


if __name__ == '__main__':
    main()
