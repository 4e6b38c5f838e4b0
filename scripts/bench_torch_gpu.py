#!/usr/bin/env python3
"""The PyTorch side of scripts/gpu-check.sh: LeNet (MXNet's: conv5x5x20-tanh-maxpool-conv5x5x50-
tanh-maxpool-fc500-tanh-fc10, on 1x28x28) or ResNet-20 (bench_torch_resnet.py's, on 3x32x32)
trained with SGD, or the GPT of configs/text_gpt.yaml (bench_torch_gpt.py's: 4 layers, 4 heads,
d_model 128, windows of 128 bytes) trained with Adam, on cuda:0 from random host batches copied
to the GPU every step, as Cohort's iterators do, in full float32 (TF32 off), with deterministic
cuDNN algorithms and without metrics; with PRECISION bfloat16 or float16, under
torch.autocast('cuda', dtype) (float16 with a GradScaler), as Cohort's `precision`. Prints one
JSON line with ms per step, samples/s and, for the GPT, tokens/s.
    bench_torch_gpu.py lenet|resnet20|gpt BATCH STEPS [float32|bfloat16|float16]"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch_gpt import Gpt  # noqa: E402
from bench_torch_resnet import resnet20  # noqa: E402

GPT = argparse.Namespace(layers=4, heads=4, d_model=128, seq_len=128)  # configs/text_gpt.yaml's


def lenet():
    return nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2, 2),
                         nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2, 2), nn.Flatten(),
                         nn.Linear(50 * 4 * 4, 500), nn.Tanh(), nn.Linear(500, 10))


def main():
    model, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    precision = sys.argv[4] if len(sys.argv) > 4 else "float32"
    low = {"float32": None, "bfloat16": torch.bfloat16, "float16": torch.float16}[precision]
    torch.manual_seed(0)
    # Full float32, as Cohort by default (COHORT_GPU_TF32=0): PyTorch's cuDNN takes TF32 unless told.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    # Deterministic cuDNN algorithms, as Cohort by default (COHORT_GPU_DETERMINISTIC=1).
    torch.backends.cudnn.deterministic = True
    dev = torch.device("cuda:0")
    if model == "gpt":
        net = Gpt(GPT).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=3e-3)
        x = torch.randint(0, 256, (batch, GPT.seq_len))
        y = torch.randint(0, 256, (batch, GPT.seq_len))
    else:
        net = (lenet() if model == "lenet" else resnet20()).to(dev)
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        shape = (batch, 1, 28, 28) if model == "lenet" else (batch, 3, 32, 32)
        x, y = torch.randn(*shape), torch.randint(0, 10, (batch,))

    scaler = torch.amp.GradScaler("cuda", enabled=low == torch.float16)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=low or torch.float32, enabled=low is not None):
            out = net(x.to(dev))
            loss = nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]).float(),
                                               y.to(dev).reshape(-1))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    ms = (time.perf_counter() - start) / steps * 1e3
    result = {"model": model, "precision": precision,
              "system": "pytorch-" + torch.__version__, "device": "cuda:0",
              "ms_per_step": round(ms, 3), "samples_per_sec": round(batch / ms * 1e3)}
    if model == "gpt":
        result["tokens_per_sec"] = round(batch * GPT.seq_len / ms * 1e3)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
