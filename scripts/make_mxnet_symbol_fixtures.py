#!/usr/bin/env python3
"""Writes MXNet 1.9.1 symbol JSON files of an MLP, LeNet and a small ResNet block (with
BatchNorm and a shortcut) to tests/data/symbols/, and a whole-graph check of the ResNet block:
its parameters, a batch, and MXNet's outputs, gradients and updated moving statistics after one
forward(is_train=True) and backward (resblock-check.params).

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_symbol_fixtures.py

Printed: parameter counts and output shapes, which tests/symbol/json_test.cc states by hand."""
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "symbols")


def mlp():
    x = mx.sym.Flatten(mx.sym.var("data"), name="flatten")
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=128, name="fc1"), act_type="relu",
                          name="relu1")
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=64, name="fc2"), act_type="relu",
                          name="relu2")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def lenet():
    x = mx.sym.Convolution(mx.sym.var("data"), kernel=(5, 5), num_filter=20, name="conv1")
    x = mx.sym.Activation(x, act_type="tanh", name="tanh1")
    x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=50, name="conv2")
    x = mx.sym.Activation(x, act_type="tanh", name="tanh2")
    x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool2")
    x = mx.sym.Flatten(x, name="flatten")
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=500, name="fc1"), act_type="tanh",
                          name="tanh3")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def resblock():
    x = mx.sym.Convolution(mx.sym.var("data"), kernel=(3, 3), pad=(1, 1), num_filter=16,
                           no_bias=True, name="conv0")
    x = mx.sym.BatchNorm(x, fix_gamma=False, eps=2e-5, momentum=0.9, name="bn0")
    x = mx.sym.Activation(x, act_type="relu", name="relu0")
    b = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True,
                           name="stage1_conv1")
    b = mx.sym.BatchNorm(b, fix_gamma=False, eps=2e-5, name="stage1_bn1")
    b = mx.sym.Activation(b, act_type="relu", name="stage1_relu1")
    b = mx.sym.Convolution(b, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True,
                           name="stage1_conv2")
    b = mx.sym.BatchNorm(b, fix_gamma=False, eps=2e-5, name="stage1_bn2")
    x = mx.sym.Activation(b + x, act_type="relu", name="stage1_relu")
    x = mx.sym.Pooling(x, global_pool=True, kernel=(1, 1), pool_type="avg", name="pool")
    x = mx.sym.FullyConnected(mx.sym.Flatten(x, name="flatten"), num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, sym, shape in [("mlp", mlp(), (2, 1, 28, 28)), ("lenet", lenet(), (2, 1, 28, 28)),
                             ("resblock", resblock(), (2, 3, 32, 32))]:
        sym.save(os.path.join(OUT, name + "-symbol.json"))
        args, outs, aux = sym.infer_shape(data=shape)
        params = sum(int(np.prod(s)) for s, n in zip(args, sym.list_arguments())
                     if n not in ("data", "softmax_label"))
        print(name, "parameters", params, "outputs", outs, "aux", len(aux))

    # One training step of the ResNet block, for the whole-graph test.
    rng = np.random.RandomState(1)
    sym = resblock()
    exe = sym.simple_bind(mx.cpu(), data=(4, 3, 8, 8), grad_req="write")
    save = {}
    for name, arr in exe.arg_dict.items():
        if name == "softmax_label":
            value = rng.randint(0, 10, size=arr.shape).astype("float32")
        else:
            value = rng.uniform(-0.5, 0.5, size=arr.shape).astype("float32")
        arr[:] = value
        save["arg:" + name] = mx.nd.array(value)
    for name, arr in exe.aux_dict.items():
        value = rng.uniform(0.5, 1.5, size=arr.shape).astype("float32")
        arr[:] = value
        save["aux:" + name] = mx.nd.array(value)
    exe.forward(is_train=True)
    exe.backward()
    save["out:0"] = exe.outputs[0].copy()
    for name, arr in exe.grad_dict.items():
        save["grad:" + name] = arr.copy()
    for name, arr in exe.aux_dict.items():
        save["auxout:" + name] = arr.copy()
    mx.nd.save(os.path.join(OUT, "resblock-check.params"), save)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
