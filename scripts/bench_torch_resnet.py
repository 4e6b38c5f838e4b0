#!/usr/bin/env python3
"""The PyTorch side of bench/resnet_vs_pytorch.sh: MXNet's CIFAR ResNet-20 (pre-activation units,
a BatchNorm on the data; the network of Cohort's zoo) trained on random 3x32x32 batches with SGD,
one thread, and one JSON line with ms per step and samples/s. Run with /usr/bin/python3.
PRECISION (a third argument) bfloat16 runs the step under torch.autocast('cpu', bfloat16).
    bench_torch_resnet.py BATCH STEPS [float32|bfloat16]"""
import json
import sys
import time

import torch
import torch.nn as nn


class Unit(nn.Module):
    def __init__(self, cin, cout, stride, match):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(cin, eps=2e-5)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout, eps=2e-5)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.sc = None if match else nn.Conv2d(cin, cout, 1, stride, bias=False)

    def forward(self, x):
        a = torch.relu(self.bn1(x))
        y = self.conv2(torch.relu(self.bn2(self.conv1(a))))
        return y + (x if self.sc is None else self.sc(a))


def resnet20():
    layers = [nn.BatchNorm2d(3, eps=2e-5), nn.Conv2d(3, 16, 3, 1, 1, bias=False)]
    cin = 16
    for i, f in enumerate([16, 32, 64]):
        layers.append(Unit(cin, f, 1 if i == 0 else 2, False))
        layers += [Unit(f, f, 1, True) for _ in range(2)]
        cin = f
    layers += [nn.BatchNorm2d(64, eps=2e-5), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def main():
    batch, steps = int(sys.argv[1]), int(sys.argv[2])
    precision = sys.argv[3] if len(sys.argv) > 3 else "float32"
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = resnet20()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x, y = torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bfloat16"):
            loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    ms = (time.perf_counter() - start) / steps * 1e3
    print(json.dumps({"model": "resnet20", "system": "pytorch-" + torch.__version__,
                      "precision": precision,
                      "ms_per_step": round(ms, 1), "samples_per_sec": round(batch / ms * 1e3)}))


if __name__ == "__main__":
    main()
