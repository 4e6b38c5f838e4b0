#!/usr/bin/env python3
"""The PyTorch side of bench/gpt_vs_pytorch.sh: a nanoGPT-style model of the same construction
as Cohort's models::Gpt (token and position embeddings, pre-LayerNorm blocks of causal
multi-head attention and an exact-GELU MLP of 4·d, final LayerNorm, output tied to the token
embedding) trained on the bytes of Debian's dict-gcide with Adam (lr 3e-3), windows of seq_len
bytes as Cohort's TextIter cuts them. One process (2 threads) or DistributedDataParallel (gloo,
2 processes of one thread, the global batch split between them). Prints one JSON line: tokens/s
over the timed batches, the peak resident memory (summed over processes), and, with --eval,
the validation perplexity on the first VAL_BATCHES batches of the last 1% of the text.
Run with Debian's python3-torch (/usr/bin/python3).
    bench_torch_gpt.py single|ddp BATCHES [--eval] [--batch 32] [--layers 4] [--heads 4]
                       [--d-model 128] [--seq-len 128] [--val-batches 20] [--autocast]"""
import argparse
import gzip
import json
import math
import os
import resource
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

TEXT = "/usr/share/dictd/gcide.dict.dz"


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        # Written out (Debian's torch 1.13 has no scaled_dot_product_attention): the same
        # operations as Cohort's graph.
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = F.softmax(att.masked_fill(~causal, float("-inf")), dim=-1)
        y = att @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.tok, self.pos = nn.Embedding(256, a.d_model), nn.Embedding(a.seq_len, a.d_model)
        self.blocks = nn.ModuleList(Block(a.d_model, a.heads) for _ in range(a.layers))
        self.ln_f = nn.LayerNorm(a.d_model)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x) @ self.tok.weight.t()  # tied output layer


def windows(tokens, seq_len):
    n = (len(tokens) - seq_len - 1) // seq_len + 1
    return n


def batch_of(tokens, starts, seq_len):
    idx = starts[:, None] + np.arange(seq_len + 1)[None, :]
    w = torch.from_numpy(tokens[idx].astype(np.int64))
    return w[:, :-1], w[:, 1:]


def train(a, rank, world, tokens):
    torch.manual_seed(0)
    split = int(len(tokens) * 0.99)
    train_tokens, val_tokens = tokens[:split], tokens[split:]
    net = Gpt(a)
    model = nn.parallel.DistributedDataParallel(net) if world > 1 else net
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(1)
    order = rng.permutation(windows(train_tokens, a.seq_len)) * a.seq_len
    per = a.batch // world

    def step(b):
        g = order[(b * a.batch) % (len(order) - a.batch):][:a.batch]
        x, y = batch_of(train_tokens, g[rank * per:(rank + 1) * per], a.seq_len)
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast):
            loss = F.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1))
        loss.backward()
        opt.step()

    warmup = 3
    for b in range(warmup):
        step(b)
    start = time.perf_counter()
    for b in range(warmup, a.batches):
        step(b)
    seconds = time.perf_counter() - start
    tokens_per_sec = (a.batches - warmup) * a.batch * a.seq_len / seconds
    ppl = None
    if a.eval and rank == 0:
        with torch.no_grad():
            total, count = 0.0, 0
            starts = np.arange(windows(val_tokens, a.seq_len)) * a.seq_len
            for b in range(min(a.val_batches, len(starts) // a.batch)):
                x, y = batch_of(val_tokens, starts[b * a.batch:(b + 1) * a.batch], a.seq_len)
                total += F.cross_entropy(net(x).reshape(-1, 256), y.reshape(-1),
                                         reduction="sum").item()
                count += y.numel()
            ppl = math.exp(total / count)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return tokens_per_sec, ppl, rss_mb


def ddp_worker(rank, world, a, tokens, queue):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    queue.put((rank, train(a, rank, world, tokens)))
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["single", "ddp"])
    p.add_argument("batches", type=int)
    p.add_argument("--eval", action="store_true")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--val-batches", type=int, default=20)
    p.add_argument("--autocast", action="store_true",
                   help="torch.autocast('cpu', bfloat16) around forward and loss, the one line "
                        "a PyTorch user adds for mixed precision")
    a = p.parse_args()
    with gzip.open(TEXT) as f:
        tokens = np.frombuffer(f.read(), np.uint8)
    if a.mode == "single":
        torch.set_num_threads(2)
        rate, ppl, rss = train(a, 0, 1, tokens)
    else:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        mp.spawn(ddp_worker, args=(2, a, tokens, queue), nprocs=2, join=True)
        results = dict(queue.get() for _ in range(2))
        rate, ppl, _ = results[0]
        rss = sum(r[2] for r in results.values())
    mode = a.mode + ("-autocast-bf16" if a.autocast else "")
    out = {"bench": "gpt", "system": "pytorch-" + torch.__version__ + "-" + mode,
           "tokens_per_sec": round(rate), "peak_rss_mb": round(rss)}
    if ppl is not None:
        out["val_perplexity"] = round(ppl, 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
