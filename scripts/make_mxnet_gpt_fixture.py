#!/usr/bin/env python3
"""Builds the GPT of symbol/models/models.cc (models::Gpt) in MXNet 1.9.1 with the same
construction, names and attributes, at a tiny size (2 layers, 2 heads, d_model 8, seq_len 6,
vocab 11, tied output), and writes tests/data/symbols/gpt-symbol.json and gpt-step.params: the
parameters ("arg:NAME"), a batch of 2 windows ("in:data", "in:softmax_label"), and MXNet's
output ("out:0") and parameter gradients ("grad:NAME") after one forward(is_train=True) and
backward. tests/executor/gpt_test.cc compares Cohort's graph and step with them.

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_gpt_fixture.py"""
import math
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "symbols")
N_LAYER, N_HEAD, D_MODEL, SEQ_LEN, VOCAB, BATCH = 2, 2, 8, 6, 11, 2


def dense(x, units, name):
    return mx.sym.FullyConnected(x, num_hidden=units, flatten=False, name=name)


def attention(x, mask, p):
    h = N_HEAD
    qkv = dense(x, 3 * D_MODEL, p + "_qkv")
    parts = mx.sym.SliceChannel(qkv, num_outputs=3, axis=2, name=p + "_split")

    def heads(t, n):
        y = mx.sym.Reshape(t, shape=(0, 0, h, -1), name=p + "_" + n + "_split_heads")
        y = mx.sym.transpose(y, axes=(0, 2, 1, 3), name=p + "_" + n + "_heads_first")
        return mx.sym.Reshape(y, shape=(-3, -2), name=p + "_" + n + "_merge_batch")

    q, k, v = heads(parts[0], "q"), heads(parts[1], "k"), heads(parts[2], "v")
    scores = mx.sym.batch_dot(q, k, transpose_b=True, name=p + "_scores")
    scores = mx.sym._internal._mul_scalar(scores, scalar=1.0 / math.sqrt(D_MODEL // h),
                                          name=p + "_scale")
    scores = mx.sym.broadcast_add(scores, mask, name=p + "_masked")
    weights = mx.sym.softmax(scores, axis=-1, name=p + "_softmax")
    y = mx.sym.batch_dot(weights, v, name=p + "_context")
    y = mx.sym.Reshape(y, shape=(-4, -1, h, -2), name=p + "_split_batch")
    y = mx.sym.transpose(y, axes=(0, 2, 1, 3), name=p + "_time_first")
    y = mx.sym.Reshape(y, shape=(0, 0, -1), name=p + "_merge_heads")
    return dense(y, D_MODEL, p + "_proj")


def gpt():
    data = mx.sym.var("data")
    token_weight = mx.sym.var("tok_embed_weight")
    x = mx.sym.Embedding(data=data, weight=token_weight, input_dim=VOCAB, output_dim=D_MODEL,
                         name="tok_embed")
    positions = mx.sym.contrib.arange_like(data, axis=1, name="positions")
    pos = mx.sym.Embedding(positions, input_dim=SEQ_LEN, output_dim=D_MODEL, name="pos_embed")
    x = mx.sym.broadcast_add(x, pos, name="embed")
    later = mx.sym.broadcast_greater(mx.sym.Reshape(positions, shape=(1, -1), name="mask_cols"),
                                     mx.sym.Reshape(positions, shape=(-1, 1), name="mask_rows"),
                                     name="mask_later")
    mask = mx.sym._internal._mul_scalar(later, scalar=-1e9, name="mask")
    for layer in range(N_LAYER):
        p = "h%d" % layer
        a = attention(mx.sym.LayerNorm(x, name=p + "_ln1"), mask, p + "_attn")
        x = mx.sym.elemwise_add(x, a, name=p + "_attn_residual")
        m = dense(mx.sym.LayerNorm(x, name=p + "_ln2"), 4 * D_MODEL, p + "_mlp_fc")
        m = mx.sym.LeakyReLU(m, act_type="gelu", name=p + "_mlp_gelu")
        m = dense(m, D_MODEL, p + "_mlp_proj")
        x = mx.sym.elemwise_add(x, m, name=p + "_mlp_residual")
    x = mx.sym.LayerNorm(x, name="ln_f")
    logits = mx.sym.FullyConnected(data=x, weight=token_weight, num_hidden=VOCAB, no_bias=True,
                                   flatten=False, name="lm_head")
    return mx.sym.SoftmaxOutput(logits, mx.sym.var("softmax_label"), preserve_shape=True,
                                grad_scale=1.0 / SEQ_LEN, name="softmax")


def main():
    os.makedirs(OUT, exist_ok=True)
    sym = gpt()
    sym.save(os.path.join(OUT, "gpt-symbol.json"))
    rng = np.random.RandomState(0)
    shapes = {"data": (BATCH, SEQ_LEN), "softmax_label": (BATCH, SEQ_LEN)}
    req = {a: "null" if a in shapes else "write" for a in sym.list_arguments()}
    exe = sym.simple_bind(mx.cpu(), grad_req=req, **shapes)
    save = {}
    for name, array in exe.arg_dict.items():
        if name in shapes:
            value = rng.randint(0, VOCAB, size=array.shape).astype("float32")
            save["in:" + name] = mx.nd.array(value)
        else:
            value = rng.uniform(-0.5, 0.5, size=array.shape).astype("float32")
            if name.endswith("_gamma"):
                value += 1
            save["arg:" + name] = mx.nd.array(value)
        array[:] = value
    exe.forward(is_train=True)
    save["out:0"] = exe.outputs[0].copy()
    exe.backward()
    for name, grad in exe.grad_dict.items():
        if grad is not None and name not in shapes:
            save["grad:" + name] = grad.copy()
    mx.nd.save(os.path.join(OUT, "gpt-step.params"), save)
    params = sum(int(np.prod(v.shape)) for k, v in save.items() if k.startswith("arg:"))
    print("parameters", params, "output", exe.outputs[0].shape)


if __name__ == "__main__":
    main()
