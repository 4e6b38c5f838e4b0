#!/usr/bin/env python3
"""The PyTorch side of bench/vs_pytorch.sh: trains LeNet or the MLP (784-128-64-10) on
Fashion-MNIST at global batch 128 for a fixed number of batches, in one process or under
DistributedDataParallel (gloo, one process per rank, one thread each), and prints one JSON
line with samples/s. Run with Debian's python3-torch (/usr/bin/python3).
    bench_torch_fmnist.py lenet|mlp single|ddp BATCHES"""
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

ROOT = "/usr/share/datasets/fashion-mnist/"


def load():
    with gzip.open(ROOT + "train-images-idx3-ubyte.gz") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(ROOT + "train-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    return torch.from_numpy(x.astype(np.float32) / 255), torch.from_numpy(y.astype(np.int64))


def model(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 64),
                             nn.ReLU(), nn.Linear(64, 10))
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2), nn.Conv2d(20, 50, 5),
                         nn.Tanh(), nn.MaxPool2d(2, 2), nn.Flatten(), nn.Linear(800, 500),
                         nn.Tanh(), nn.Linear(500, 10))


def train(name, batches, rank, world, x, y):
    torch.manual_seed(0)
    net = model(name)
    if world > 1:
        net = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss()
    per = 128 // world
    n = x.shape[0] // world
    xs, ys = x[rank * n:(rank + 1) * n], y[rank * n:(rank + 1) * n]
    perm = torch.randperm(n)

    def step(b):
        idx = perm[(b * per) % (n - per):(b * per) % (n - per) + per]
        opt.zero_grad()
        loss_fn(net(xs[idx]), ys[idx]).backward()
        opt.step()

    for b in range(5):  # warm-up
        step(b)
    start = time.perf_counter()
    for b in range(batches):
        step(b)
    return batches * 128 / (time.perf_counter() - start)


def ddp_worker(rank, world, name, batches, x, y, queue):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    rate = train(name, batches, rank, world, x, y)
    if rank == 0:
        queue.put(rate)
    dist.destroy_process_group()


def main():
    name, mode, batches = sys.argv[1], sys.argv[2], int(sys.argv[3])
    x, y = load()
    if mode == "single":
        torch.set_num_threads(2)
        rate = train(name, batches, 0, 1, x, y)
    else:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        mp.spawn(ddp_worker, args=(2, name, batches, x, y, queue), nprocs=2, join=True)
        rate = queue.get()
    print(json.dumps({"model": name, "system": "pytorch-" + torch.__version__ + "-" + mode,
                      "samples_per_sec": round(rate)}))


if __name__ == "__main__":
    main()
