#!/usr/bin/env python3
"""Checks by hand that a checkpoint Cohort wrote loads and runs in MXNet 1.9.1: loads
PREFIX-symbol.json and PREFIX-NNNN.params with mx.model.load_checkpoint, runs the Fashion-MNIST
test images (scaled to [0, 1], as Cohort's MNISTIter does) through mx.mod.Module, and compares the
outputs with the CSV cohort-predict wrote for the same checkpoint (class, then the outputs).
Prints one JSON line; exits 1 when an output differs by more than 1e-4 or a class differs.

    pip install mxnet==1.9.1 'numpy<1.24'
    build/apps/cohort-train --config configs/fmnist_lenet.yaml --set epochs=1 \\
        --set checkpoint.prefix=/tmp/ck/lenet
    build/apps/cohort-predict --config configs/fmnist_lenet.yaml \\
        --symbol /tmp/ck/lenet-symbol.json --params /tmp/ck/lenet-0001.params --out /tmp/ck/preds.csv
    python3 scripts/check_checkpoint_in_mxnet.py /tmp/ck/lenet 1 /tmp/ck/preds.csv"""
import gzip
import json
import sys

import mxnet as mx
import numpy as np

IMAGES = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"


def main():
    prefix, epoch, csv = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with gzip.open(IMAGES) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    x = x.astype(np.float32) / 255
    sym, args, aux = mx.model.load_checkpoint(prefix, epoch)
    mod = mx.mod.Module(sym, data_names=["data"], label_names=["softmax_label"], context=mx.cpu())
    mod.bind(data_shapes=[("data", (100, 1, 28, 28))], label_shapes=[("softmax_label", (100,))],
             for_training=False)
    mod.set_params(args, aux)
    ours = np.loadtxt(csv, delimiter=",", ndmin=2)
    theirs = mod.predict(mx.io.NDArrayIter(x, batch_size=100)).asnumpy()
    n = min(len(ours), len(theirs))
    max_diff = float(np.abs(ours[:n, 1:] - theirs[:n]).max())
    same_class = int((ours[:n, 0].astype(int) == theirs[:n].argmax(axis=1)).sum())
    print(json.dumps({"samples": n, "max_abs_output_diff": max_diff, "same_class": same_class}))
    sys.exit(0 if max_diff <= 1e-4 and same_class == n else 1)


if __name__ == "__main__":
    main()
