#!/usr/bin/env python3
"""Writes MXNet 1.9.1's MobileNet v1 (the network of MXNet's
example/image-classification/symbols/mobilenet.py, get_symbol) as symbol JSON for
tests/symbol/json_test.cc to compare the zoo's mobilenet with: ops, names, attributes,
arguments, auxiliary states and their shapes.

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_mobilenet_fixture.py

Writes tests/data/symbols/mobilenet-symbol.json (multiplier 1, resolution 224, 1000 classes)
and mobilenet0.25-r64-symbol.json (multiplier 0.25, resolution 64, 10 classes); prints each
one's parameter count."""
import os

import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "symbols")


def conv(data, num_filter, kernel, stride, pad, name, num_group=1):
    x = mx.sym.Convolution(data=data, num_filter=num_filter, kernel=kernel, num_group=num_group,
                           stride=stride, pad=pad, no_bias=True, name=name + "_conv2d")
    x = mx.sym.BatchNorm(data=x, name=name + "_batchnorm", fix_gamma=True)
    return mx.sym.Activation(data=x, act_type="relu", name=name + "_relu")


def mobilenet(num_classes, alpha, resolution):
    """MXNet's get_symbol: a 3x3 stride-2 convolution, then 13 depthwise 3x3 + pointwise 1x1
    pairs, each convolution followed by BatchNorm and relu; average pooling, a dense layer."""
    base = int(32 * alpha)
    # (depthwise channels, stride, pointwise filters) of conv_2 .. conv_14
    layers = [(1, 1, 2), (2, 2, 4), (4, 1, 4), (4, 2, 8), (8, 1, 8), (8, 2, 16)]
    layers += [(16, 1, 16)] * 5 + [(16, 2, 32), (32, 1, 32)]
    x = conv(mx.sym.Variable("data"), base, (3, 3), (2, 2), (1, 1), "conv_1")
    for i, (depth, stride, filters) in enumerate(layers):
        name = "conv_%d" % (i + 2)
        x = conv(x, base * depth, (3, 3), (stride, stride), (1, 1), name + "_dw",
                 num_group=base * depth)
        x = conv(x, base * filters, (1, 1), (1, 1), (0, 0), name)
    pool = resolution // 32
    x = mx.sym.Pooling(data=x, kernel=(pool, pool), stride=(1, 1), pool_type="avg",
                       name="global_pool")
    x = mx.sym.Flatten(data=x, name="flatten")
    x = mx.sym.FullyConnected(data=x, num_hidden=num_classes, name="fc")
    return mx.sym.SoftmaxOutput(data=x, name="softmax")


def count(net, resolution):
    shapes, _, _ = net.infer_shape(data=(1, 3, resolution, resolution))
    return sum(int(mx.nd.zeros(s).size) for n, s in zip(net.list_arguments(), shapes)
               if n not in ("data", "softmax_label"))


def main():
    for file, classes, alpha, resolution in [("mobilenet-symbol.json", 1000, 1.0, 224),
                                             ("mobilenet0.25-r64-symbol.json", 10, 0.25, 64)]:
        net = mobilenet(classes, alpha, resolution)
        net.save(os.path.join(OUT, file))
        print(file, "parameters:", count(net, resolution))


if __name__ == "__main__":
    main()
