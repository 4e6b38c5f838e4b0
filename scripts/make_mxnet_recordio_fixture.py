#!/usr/bin/env python3
"""Writes records with MXNet 1.9.1's own RecordIO writer (mx.recordio.MXIndexedRecordIO and
recordio.pack, which call dmlc-core's RecordIOWriter) to tests/data/recordio/mxnet.rec and
mxnet.idx, for tests/io/recordio_test.cc: Cohort must read each record back and, writing the
same records, produce the same bytes.

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_recordio_fixture.py

The records (key i = record i), each an IRHeader and a payload; tests/io/recordio_test.cc
builds the same list (FixtureRecords), so keep the two in step:
  0: label 3.0, id 0, payload b"hello" (5 bytes: padded to 8)
  1: labels [1.5, 2.5, 7.0] (flag 3), id 1, id2 42, payload b"12345678"
  2: label 1.0, id 2, payload MAGIC + b"abcd" + MAGIC: the magic word at 4-byte aligned
     offsets of the record, so the writer splits it into continuation parts
  3: label 0.0, id 3, empty payload
  4: label 9.0, id 4, id2 7, 1003 bytes (i * 37 + 11) % 256 (3 bytes of padding)"""
import os
import struct

import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "recordio")
MAGIC = struct.pack("<I", 0xCED7230A)


def records():
    h = mx.recordio.IRHeader
    return [
        (h(0, 3.0, 0, 0), b"hello"),
        (h(0, [1.5, 2.5, 7.0], 1, 42), b"12345678"),
        (h(0, 1.0, 2, 0), MAGIC + b"abcd" + MAGIC),
        (h(0, 0.0, 3, 0), b""),
        (h(0, 9.0, 4, 7), bytes((i * 37 + 11) % 256 for i in range(1003))),
    ]


def main():
    os.makedirs(OUT, exist_ok=True)
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "mxnet.idx"),
                                        os.path.join(OUT, "mxnet.rec"), "w")
    for i, (header, payload) in enumerate(records()):
        rec.write_idx(i, mx.recordio.pack(header, payload))
    rec.close()
    # Read back through MXNet, as a check of the list above.
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "mxnet.idx"),
                                        os.path.join(OUT, "mxnet.rec"), "r")
    for i, (header, payload) in enumerate(records()):
        got_header, got_payload = mx.recordio.unpack(rec.read_idx(i))
        assert got_payload == payload and got_header.id == header.id, i
    print(open(os.path.join(OUT, "mxnet.idx")).read(), end="")


if __name__ == "__main__":
    main()
