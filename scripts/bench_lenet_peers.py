#!/usr/bin/env python3
"""The peer side of scripts/bench-lenet.sh: the same LeNet, batch and one thread in PyTorch or
MXNet 1.9.1. Prints one JSON object like bench/lenet_bench.
    python3 scripts/bench_lenet_peers.py torch|mxnet [batch] [iters]"""
import json
import statistics
import sys
import time


def median_ms(iters, fn):
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def torch_lenet(batch, iters):
    import torch
    import torch.nn as nn
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(800, 500), nn.Tanh(), nn.Linear(500, 10))
    data = torch.rand(batch, 1, 28, 28)
    label = torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()

    def train():
        net.zero_grad(set_to_none=False)
        loss_fn(net(data), label).backward()

    def infer():
        with torch.no_grad():
            net(data)

    for _ in range(2):
        train()
    return "pytorch-" + torch.__version__, median_ms(iters, train), median_ms(iters, infer)


def mxnet_lenet(batch, iters):
    import mxnet as mx
    d = mx.sym.var("data")
    x = mx.sym.Convolution(d, kernel=(5, 5), num_filter=20)
    x = mx.sym.Pooling(mx.sym.Activation(x, act_type="tanh"), pool_type="max", kernel=(2, 2),
                       stride=(2, 2))
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=50)
    x = mx.sym.Pooling(mx.sym.Activation(x, act_type="tanh"), pool_type="max", kernel=(2, 2),
                       stride=(2, 2))
    x = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=500),
                          act_type="tanh")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=10), name="softmax")
    exe = net.simple_bind(mx.cpu(), data=(batch, 1, 28, 28))
    for name, arr in exe.arg_dict.items():
        arr[:] = mx.nd.random.uniform(-0.1, 0.1, shape=arr.shape)
    exe.arg_dict["softmax_label"][:] = mx.nd.random.randint(0, 10, shape=(batch,)).astype("float32")

    def train():
        exe.forward(is_train=True)
        exe.backward()
        mx.nd.waitall()

    def infer():
        exe.forward(is_train=False)
        mx.nd.waitall()

    for _ in range(2):
        train()
    return "mxnet-" + mx.__version__, median_ms(iters, train), median_ms(iters, infer)


def main():
    which = sys.argv[1]
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    impl, train_ms, infer_ms = (torch_lenet if which == "torch" else mxnet_lenet)(batch, iters)
    print(json.dumps({"bench": "lenet", "impl": impl, "batch_size": batch,
                      "train_ms": round(train_ms, 2),
                      "train_samples_per_sec": round(batch * 1000 / train_ms),
                      "infer_ms": round(infer_ms, 2)}))


if __name__ == "__main__":
    main()
