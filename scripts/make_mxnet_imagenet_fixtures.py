#!/usr/bin/env python3
"""Writes MXNet 1.9.1's ImageNet networks as its example/image-classification/symbols define them
(resnet.py with num_layers 50 and 101 on 3x224x224, vgg.py with num_layers 16, inception-v3.py
on 3x299x299; float32, 1000 classes) as symbol JSON to tests/data/symbols/, for
tests/symbol/json_test.cc to compare the zoo's resnet50, resnet101, vgg16 and inceptionv3 with:
ops, names, attributes, arguments, auxiliary states and their shapes. resnet.py's float32
`identity` node is left out, as in make_mxnet_resnet_fixture.py.

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_imagenet_fixtures.py

Printed: each network's parameter count (arguments other than data and label) and auxiliary
state count, which the test asserts."""
import os

import mxnet as mx

from make_mxnet_resnet_fixture import head

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "symbols")
BN_MOM = 0.9


def bottleneck_unit(data, num_filter, stride, dim_match, name):
    def bn_relu(x, suffix):
        bn = mx.sym.BatchNorm(x, fix_gamma=False, eps=2e-5, momentum=BN_MOM,
                              name=name + "_bn" + suffix)
        return mx.sym.Activation(bn, act_type="relu", name=name + "_relu" + suffix)

    act1 = bn_relu(data, "1")
    conv1 = mx.sym.Convolution(act1, num_filter=num_filter // 4, kernel=(1, 1), stride=(1, 1),
                               pad=(0, 0), no_bias=True, name=name + "_conv1")
    conv2 = mx.sym.Convolution(bn_relu(conv1, "2"), num_filter=num_filter // 4, kernel=(3, 3),
                               stride=stride, pad=(1, 1), no_bias=True, name=name + "_conv2")
    conv3 = mx.sym.Convolution(bn_relu(conv2, "3"), num_filter=num_filter, kernel=(1, 1),
                               stride=(1, 1), pad=(0, 0), no_bias=True, name=name + "_conv3")
    if dim_match:
        shortcut = data
    else:
        shortcut = mx.sym.Convolution(act1, num_filter=num_filter, kernel=(1, 1), stride=stride,
                                      no_bias=True, name=name + "_sc")
    return conv3 + shortcut


def resnet(num_layers, num_classes=1000):
    units = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3]}[num_layers]
    filters = [64, 256, 512, 1024, 2048]
    data = mx.sym.var("data")
    data = mx.sym.BatchNorm(data, fix_gamma=True, eps=2e-5, momentum=BN_MOM, name="bn_data")
    body = mx.sym.Convolution(data, num_filter=filters[0], kernel=(7, 7), stride=(2, 2),
                              pad=(3, 3), no_bias=True, name="conv0")
    body = mx.sym.BatchNorm(body, fix_gamma=False, eps=2e-5, momentum=BN_MOM, name="bn0")
    body = mx.sym.Activation(body, act_type="relu", name="relu0")
    body = mx.sym.Pooling(body, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    for i in range(4):
        stride = (1, 1) if i == 0 else (2, 2)
        body = bottleneck_unit(body, filters[i + 1], stride, False, "stage%d_unit1" % (i + 1))
        for j in range(units[i] - 1):
            body = bottleneck_unit(body, filters[i + 1], (1, 1), True,
                                   "stage%d_unit%d" % (i + 1, j + 2))
    return head(body, num_classes)


def vgg16(num_classes=1000):
    x = mx.sym.var("data")
    for i, (count, filters) in enumerate(zip([2, 2, 3, 3, 3], [64, 128, 256, 512, 512])):
        for j in range(count):
            x = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=filters,
                                   name="conv%d_%d" % (i + 1, j + 1))
            x = mx.sym.Activation(x, act_type="relu", name="relu%d_%d" % (i + 1, j + 1))
        x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool%d" % (i + 1))
    x = mx.sym.Flatten(x, name="flatten")
    for n in (6, 7):
        x = mx.sym.FullyConnected(x, num_hidden=4096, name="fc%d" % n)
        x = mx.sym.Activation(x, act_type="relu", name="relu%d" % n)
        x = mx.sym.Dropout(x, p=0.5, name="drop%d" % n)
    x = mx.sym.FullyConnected(x, num_hidden=num_classes, name="fc8")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def conv(data, num_filter, kernel=(1, 1), stride=(1, 1), pad=(0, 0), name=None, suffix=""):
    c = mx.sym.Convolution(data, num_filter=num_filter, kernel=kernel, stride=stride, pad=pad,
                           no_bias=True, name="%s%s_conv2d" % (name, suffix))
    bn = mx.sym.BatchNorm(c, name="%s%s_batchnorm" % (name, suffix), fix_gamma=True)
    return mx.sym.Activation(bn, act_type="relu", name="%s%s_relu" % (name, suffix))


def pool(data, kind, stride, pad, name):
    return mx.sym.Pooling(data, kernel=(3, 3), stride=stride, pad=pad, pool_type=kind, name=name)


def block_a(data, n1, n3r, n31, n32, n5r, n5, kind, proj, name):
    t1 = conv(data, n1, name=name + "_conv")
    t5 = conv(data, n5r, name=name + "_tower", suffix="_conv")
    t5 = conv(t5, n5, kernel=(5, 5), pad=(2, 2), name=name + "_tower", suffix="_conv_1")
    t3 = conv(data, n3r, name=name + "_tower_1", suffix="_conv")
    t3 = conv(t3, n31, kernel=(3, 3), pad=(1, 1), name=name + "_tower_1", suffix="_conv_1")
    t3 = conv(t3, n32, kernel=(3, 3), pad=(1, 1), name=name + "_tower_1", suffix="_conv_2")
    p = pool(data, kind, (1, 1), (1, 1), "%s_pool_%s_pool" % (kind, name))
    cp = conv(p, proj, name=name + "_tower_2", suffix="_conv")
    return mx.sym.Concat(t1, t5, t3, cp, name="ch_concat_%s_chconcat" % name)


def block_b(data, n3, nd3r, nd31, nd32, name):
    t3 = conv(data, n3, kernel=(3, 3), pad=(0, 0), stride=(2, 2), name=name + "_conv")
    td = conv(data, nd3r, name=name + "_tower", suffix="_conv")
    td = conv(td, nd31, kernel=(3, 3), pad=(1, 1), stride=(1, 1), name=name + "_tower",
              suffix="_conv_1")
    td = conv(td, nd32, kernel=(3, 3), pad=(0, 0), stride=(2, 2), name=name + "_tower",
              suffix="_conv_2")
    p = pool(data, "max", (2, 2), (0, 0), "max_pool_%s_pool" % name)
    return mx.sym.Concat(t3, td, p, name="ch_concat_%s_chconcat" % name)


def block_c(data, n1, nd7r, nd71, nd72, nq7r, nq71, nq72, nq73, nq74, kind, proj, name):
    t1 = conv(data, n1, kernel=(1, 1), name=name + "_conv")
    td = conv(data, nd7r, name=name + "_tower", suffix="_conv")
    td = conv(td, nd71, kernel=(1, 7), pad=(0, 3), name=name + "_tower", suffix="_conv_1")
    td = conv(td, nd72, kernel=(7, 1), pad=(3, 0), name=name + "_tower", suffix="_conv_2")
    tq = conv(data, nq7r, name=name + "_tower_1", suffix="_conv")
    tq = conv(tq, nq71, kernel=(7, 1), pad=(3, 0), name=name + "_tower_1", suffix="_conv_1")
    tq = conv(tq, nq72, kernel=(1, 7), pad=(0, 3), name=name + "_tower_1", suffix="_conv_2")
    tq = conv(tq, nq73, kernel=(7, 1), pad=(3, 0), name=name + "_tower_1", suffix="_conv_3")
    tq = conv(tq, nq74, kernel=(1, 7), pad=(0, 3), name=name + "_tower_1", suffix="_conv_4")
    p = pool(data, kind, (1, 1), (1, 1), "%s_pool_%s_pool" % (kind, name))
    cp = conv(p, proj, kernel=(1, 1), name=name + "_tower_2", suffix="_conv")
    return mx.sym.Concat(t1, td, tq, cp, name="ch_concat_%s_chconcat" % name)


def block_d(data, n3r, n3, nd7r, nd71, nd72, nd73, kind, name):
    t3 = conv(data, n3r, name=name + "_tower", suffix="_conv")
    t3 = conv(t3, n3, kernel=(3, 3), pad=(0, 0), stride=(2, 2), name=name + "_tower",
              suffix="_conv_1")
    td = conv(data, nd7r, name=name + "_tower_1", suffix="_conv")
    td = conv(td, nd71, kernel=(1, 7), pad=(0, 3), name=name + "_tower_1", suffix="_conv_1")
    td = conv(td, nd72, kernel=(7, 1), pad=(3, 0), name=name + "_tower_1", suffix="_conv_2")
    td = conv(td, nd73, kernel=(3, 3), stride=(2, 2), name=name + "_tower_1", suffix="_conv_3")
    p = mx.sym.Pooling(data, kernel=(3, 3), stride=(2, 2), pool_type=kind,
                       name="%s_pool_%s_pool" % (kind, name))
    return mx.sym.Concat(t3, td, p, name="ch_concat_%s_chconcat" % name)


def block_e(data, n1, nd3r, nd31, nd32, n3d3r, n3, n3d31, n3d32, kind, proj, name):
    t1 = conv(data, n1, kernel=(1, 1), name=name + "_conv")
    td = conv(data, nd3r, name=name + "_tower", suffix="_conv")
    td_a = conv(td, nd31, kernel=(1, 3), pad=(0, 1), name=name + "_tower", suffix="_mixed_conv")
    td_b = conv(td, nd32, kernel=(3, 1), pad=(1, 0), name=name + "_tower", suffix="_mixed_conv_1")
    t3 = conv(data, n3d3r, name=name + "_tower_1", suffix="_conv")
    t3 = conv(t3, n3, kernel=(3, 3), pad=(1, 1), name=name + "_tower_1", suffix="_conv_1")
    t3_a = conv(t3, n3d31, kernel=(1, 3), pad=(0, 1), name=name + "_tower_1", suffix="_mixed_conv")
    t3_b = conv(t3, n3d32, kernel=(3, 1), pad=(1, 0), name=name + "_tower_1",
                suffix="_mixed_conv_1")
    p = pool(data, kind, (1, 1), (1, 1), "%s_pool_%s_pool" % (kind, name))
    cp = conv(p, proj, kernel=(1, 1), name=name + "_tower_2", suffix="_conv")
    return mx.sym.Concat(t1, td_a, td_b, t3_a, t3_b, cp, name="ch_concat_%s_chconcat" % name)


def inception_v3(num_classes=1000):
    data = mx.sym.var("data")
    x = conv(data, 32, kernel=(3, 3), stride=(2, 2), name="conv")
    x = conv(x, 32, kernel=(3, 3), name="conv_1")
    x = conv(x, 64, kernel=(3, 3), pad=(1, 1), name="conv_2")
    x = mx.sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="max", name="pool")
    x = conv(x, 80, kernel=(1, 1), name="conv_3")
    x = conv(x, 192, kernel=(3, 3), name="conv_4")
    x = mx.sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="max", name="pool1")
    x = block_a(x, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed")
    x = block_a(x, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1")
    x = block_a(x, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2")
    x = block_b(x, 384, 64, 96, 96, "mixed_3")
    x = block_c(x, 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192, "mixed_4")
    x = block_c(x, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_5")
    x = block_c(x, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, "mixed_6")
    x = block_c(x, 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192, "mixed_7")
    x = block_d(x, 192, 320, 192, 192, 192, 192, "max", "mixed_8")
    x = block_e(x, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9")
    x = block_e(x, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10")
    x = mx.sym.Pooling(x, kernel=(8, 8), stride=(1, 1), pool_type="avg", name="global_pool")
    x = mx.sym.Flatten(x, name="flatten")
    x = mx.sym.FullyConnected(x, num_hidden=num_classes, name="fc1")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def main():
    # ResNet-101's JSON is not kept: it is ResNet-50 with more units, checked by its counts.
    nets = [("resnet50", lambda: resnet(50), 224, True),
            ("resnet101", lambda: resnet(101), 224, False),
            ("vgg16", vgg16, 224, True), ("inceptionv3", inception_v3, 299, True)]
    for name, build, side, keep in nets:
        with mx.name.NameManager():  # auto-names count from 0 in each network, as in a new process
            net = build()
        if keep:
            net.save(os.path.join(OUT, name + "-symbol.json"))
        args, outs, aux = net.infer_shape(data=(1, 3, side, side))
        size = lambda s: int(mx.nd.zeros(s).size)
        params = sum(size(s) for n, s in zip(net.list_arguments(), args)
                     if n not in ("data", "softmax_label"))
        print("%s: %d parameters, %d auxiliary, output %s" %
              (name, params, sum(size(s) for s in aux), outs[0]))


if __name__ == "__main__":
    main()
