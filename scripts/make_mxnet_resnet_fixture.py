#!/usr/bin/env python3
"""Writes MXNet 1.9.1's ResNet-20 for CIFAR-10 (the pre-activation network of MXNet's
example/image-classification/symbols/resnet.py, num_layers=20, image_shape 3,32,32) as symbol
JSON to tests/data/symbols/resnet20-symbol.json, for tests/symbol/models_test.cc to compare the
zoo's resnet20 with: arguments, auxiliary states and their shapes.

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_resnet_fixture.py

Printed: the parameter count for a batch of 1."""
import os

import mxnet as mx

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "symbols")
BN_MOM = 0.9


def residual_unit(data, num_filter, stride, dim_match, name):
    bn1 = mx.sym.BatchNorm(data, fix_gamma=False, eps=2e-5, momentum=BN_MOM, name=name + "_bn1")
    act1 = mx.sym.Activation(bn1, act_type="relu", name=name + "_relu1")
    conv1 = mx.sym.Convolution(act1, num_filter=num_filter, kernel=(3, 3), stride=stride,
                               pad=(1, 1), no_bias=True, name=name + "_conv1")
    bn2 = mx.sym.BatchNorm(conv1, fix_gamma=False, eps=2e-5, momentum=BN_MOM, name=name + "_bn2")
    act2 = mx.sym.Activation(bn2, act_type="relu", name=name + "_relu2")
    conv2 = mx.sym.Convolution(act2, num_filter=num_filter, kernel=(3, 3), stride=(1, 1),
                               pad=(1, 1), no_bias=True, name=name + "_conv2")
    if dim_match:
        shortcut = data
    else:
        shortcut = mx.sym.Convolution(act1, num_filter=num_filter, kernel=(1, 1), stride=stride,
                                      no_bias=True, name=name + "_sc")
    return conv2 + shortcut


def resnet(num_layers=20, num_classes=10):
    units = (num_layers - 2) // 6
    filters = [16, 16, 32, 64]
    data = mx.sym.var("data")
    data = mx.sym.BatchNorm(data, fix_gamma=True, eps=2e-5, momentum=BN_MOM, name="bn_data")
    body = mx.sym.Convolution(data, num_filter=filters[0], kernel=(3, 3), stride=(1, 1),
                              pad=(1, 1), no_bias=True, name="conv0")
    for i in range(3):
        stride = (1, 1) if i == 0 else (2, 2)
        body = residual_unit(body, filters[i + 1], stride, False, "stage%d_unit1" % (i + 1))
        for j in range(units - 1):
            body = residual_unit(body, filters[i + 1], (1, 1), True,
                                 "stage%d_unit%d" % (i + 1, j + 2))
    return head(body, num_classes)


def head(body, num_classes):
    """resnet.py's end, for CIFAR and ImageNet alike: BN-relu, global pooling, the classifier."""
    bn1 = mx.sym.BatchNorm(body, fix_gamma=False, eps=2e-5, momentum=BN_MOM, name="bn1")
    relu1 = mx.sym.Activation(bn1, act_type="relu", name="relu1")
    pool1 = mx.sym.Pooling(relu1, global_pool=True, kernel=(7, 7), pool_type="avg", name="pool1")
    flat = mx.sym.Flatten(pool1)
    fc1 = mx.sym.FullyConnected(flat, num_hidden=num_classes, name="fc1")
    return mx.sym.SoftmaxOutput(fc1, name="softmax")


def main():
    net = resnet()
    net.save(os.path.join(OUT, "resnet20-symbol.json"))
    shapes, _, _ = net.infer_shape(data=(1, 3, 32, 32))
    params = sum(int(mx.nd.zeros(s).size) for n, s in zip(net.list_arguments(), shapes)
                 if n not in ("data", "softmax_label"))
    print("resnet20 parameters:", params)


if __name__ == "__main__":
    main()
