#!/usr/bin/env python3
"""Writes tests/data/mxnet/*.params with MXNet 1.9.1 itself (mx.nd.save), for tests/ndarray.

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_params_fixtures.py

The values follow simple rules that tests/ndarray/params_mxnet_test.cc states again by hand, so
the tests need no Python. Each file is then loaded back with mx.nd.load as a self-check.
"""
import os
import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mxnet")

# One (2,3) array per dtype; the values are exact in every float format, bf16 included.
FLOAT_VALUES = [-2.5, -1.0, 0.0, 0.5, 1.25, 3.0]
SIGNED_VALUES = [-2, -1, 0, 1, 2, 3]
UINT8_VALUES = [0, 1, 2, 3, 250, 255]
BOOL_VALUES = [True, False, False, True, True, False]


def values_for(dtype):
    if dtype in ("float32", "float64", "float16", "bfloat16"):
        return FLOAT_VALUES
    if dtype == "uint8":
        return UINT8_VALUES
    if dtype == "bool":
        return BOOL_VALUES
    return SIGNED_VALUES


def array(dtype, shape=(2, 3)):
    values = np.array(values_for(dtype)).reshape(shape)
    if dtype == "bfloat16":  # numpy has no bfloat16: make float32 in MXNet and cast there
        return mx.nd.array(values, dtype="float32").astype(np.dtype([("bfloat16", np.uint16)]))
    return mx.nd.array(values, dtype=dtype)


def save(name, data):
    path = os.path.join(OUT, name)
    mx.nd.save(path, data)
    back = mx.nd.load(path)
    assert len(back) == len(data), name
    print("wrote", path, os.path.getsize(path), "bytes")


def main():
    os.makedirs(OUT, exist_ok=True)
    dtypes = ["float32", "float64", "float16", "uint8", "int32", "int8", "int64", "bool",
              "bfloat16"]
    save("all_dtypes_v2.params", {"arg:" + d: array(d) for d in dtypes})

    # A checkpoint-like file: arg:/aux: names, several ranks, a large array. (Zero-size arrays
    # exist only under numpy shape semantics, below.)
    fc_w = mx.nd.arange(0, 24, dtype="float32").reshape((6, 4)) / 8.0 - 1.0
    conv_w = mx.nd.arange(0, 2 * 3 * 3 * 3, dtype="float32").reshape((2, 3, 3, 3)) * 0.25
    save("checkpoint_v2.params", {
        "arg:fc1_weight": fc_w,
        "arg:fc1_bias": mx.nd.array([1, 4, 4, 4, 5, 6]),
        "arg:conv0_weight": conv_w,
        "aux:bn_moving_mean": mx.nd.zeros((3,)),
        "aux:bn_moving_var": mx.nd.ones((3,)),
        "arg:big": mx.nd.arange(0, 10000, dtype="float32"),
    })

    # An unnamed list.
    save("list_v2.params", [mx.nd.array([1, 2, 3]), mx.nd.array([[7]], dtype="int32")])

    # numpy shape semantics write V3 arrays; only then can a scalar (shape ()) be saved.
    with mx.util.np_shape(True):
        save("numpy_v3.params", {
            "scalar": mx.nd.array([42.5]).reshape(()),
            "matrix": mx.nd.array([[1, 2], [3, 4]], dtype="float64"),
            "empty": mx.nd.zeros((2, 0)),
        })


if __name__ == "__main__":
    main()
