#!/usr/bin/env python3
"""A GPT language model written with mx.sym, trained by BucketingModule.fit on the English
dictionary Debian's dict-gcide ships: each line of the text a sample, padded to the smallest
bucket that holds it (Cohort's TextIter, cohort-train's text data), every bucket's graph sharing
one set of parameters. fit runs cohort-train's C++ loop, which switches buckets by the batches'
lengths. With configs/text_gpt.yaml's settings and data.buckets it trains to cohort-train's
parameters bit for bit (tests/python/test_examples.py checks it). Prints one JSON line per epoch
(training and validation perplexity, tokens/s) and one for the score.

    PYTHONPATH=build/python /usr/bin/python3 examples/train_gpt.py [--epochs N]
    mpirun -np 2 --allow-run-as-root -x PYTHONPATH=build/python /usr/bin/python3 \\
        examples/train_gpt.py --kvstore mpi --devices 1 --batch-size 16  # = one process, 2 devices
"""
import argparse
import json
import logging
import math
import os

import cohort as mx

GCIDE = '/usr/share/dictd/gcide.dict.dz'


def attention(x, mask, d_model, heads, p):
    """Causal self-attention of x (batch, time, d_model); mask (time, time) is -1e9 where a
    position may not look (a later one), else 0."""
    qkv = mx.sym.FullyConnected(x, num_hidden=3 * d_model, flatten=False, name=p + '_qkv')
    parts = mx.sym.SliceChannel(qkv, num_outputs=3, axis=2, name=p + '_split')

    def split_heads(t, n):  # (batch, time, d) -> (batch * heads, time, d / heads)
        t = mx.sym.Reshape(t, shape=(0, 0, heads, -1), name='%s_%s_split_heads' % (p, n))
        t = mx.sym.transpose(t, axes=(0, 2, 1, 3), name='%s_%s_heads_first' % (p, n))
        return mx.sym.Reshape(t, shape=(-3, -2), name='%s_%s_merge_batch' % (p, n))
    q, k, v = (split_heads(parts[i], n) for i, n in enumerate('qkv'))
    scores = mx.sym.batch_dot(q, k, transpose_b=True, name=p + '_scores')
    scores = mx.sym._mul_scalar(scores, scalar=1 / math.sqrt(d_model // heads),
                                name=p + '_scale')
    scores = mx.sym.broadcast_add(scores, mask, name=p + '_masked')
    weights = mx.sym.softmax(scores, axis=-1, name=p + '_softmax')
    y = mx.sym.batch_dot(weights, v, name=p + '_context')
    y = mx.sym.Reshape(y, shape=(-4, -1, heads, -2), name=p + '_split_batch')
    y = mx.sym.transpose(y, axes=(0, 2, 1, 3), name=p + '_time_first')
    y = mx.sym.Reshape(y, shape=(0, 0, -1), name=p + '_merge_heads')
    return mx.sym.FullyConnected(y, num_hidden=d_model, flatten=False, name=p + '_proj')


def gpt(layers, heads, d_model, seq_len, vocab=256):
    """cohort-train's `model.name: gpt` with tied weights and no dropout (same layers, same
    parameter names); padded positions (label -1) are left out of the loss. Its graph does not
    depend on the length of the batch's sequences, so every bucket runs it."""
    data = mx.sym.var('data')
    token_weight = mx.sym.var('tok_embed_weight')
    x = mx.sym.Embedding(data, weight=token_weight, input_dim=vocab, output_dim=d_model,
                         name='tok_embed')
    positions = mx.sym.contrib.arange_like(data, axis=1, name='positions')
    pos = mx.sym.Embedding(positions, input_dim=seq_len, output_dim=d_model, name='pos_embed')
    x = mx.sym.broadcast_add(x, pos, name='embed')
    later = mx.sym.broadcast_greater(mx.sym.Reshape(positions, shape=(1, -1), name='mask_cols'),
                                     mx.sym.Reshape(positions, shape=(-1, 1), name='mask_rows'),
                                     name='mask_later')
    mask = mx.sym._mul_scalar(later, scalar=-1e9, name='mask')
    for layer in range(layers):
        p = 'h%d' % layer
        a = attention(mx.sym.LayerNorm(x, name=p + '_ln1'), mask, d_model, heads, p + '_attn')
        x = mx.sym.elemwise_add(x, a, name=p + '_attn_residual')
        m = mx.sym.FullyConnected(mx.sym.LayerNorm(x, name=p + '_ln2'), num_hidden=4 * d_model,
                                  flatten=False, name=p + '_mlp_fc')
        m = mx.sym.LeakyReLU(m, act_type='gelu', name=p + '_mlp_gelu')
        m = mx.sym.FullyConnected(m, num_hidden=d_model, flatten=False, name=p + '_mlp_proj')
        x = mx.sym.elemwise_add(x, m, name=p + '_mlp_residual')
    x = mx.sym.LayerNorm(x, name='ln_f')
    logits = mx.sym.FullyConnected(x, weight=token_weight, num_hidden=vocab, no_bias=True,
                                   flatten=False, name='lm_head')
    return mx.sym.SoftmaxOutput(logits, mx.sym.var('softmax_label'), preserve_shape=True,
                                grad_scale=1.0 / seq_len, use_ignore=True, ignore_label=-1,
                                name='softmax')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--batches-per-epoch', type=int, default=100)
    parser.add_argument('--val-batches', type=int, default=20)
    parser.add_argument('--batch-size', type=int, default=32, help='per worker')
    parser.add_argument('--buckets', default='32,64,128', help='line lengths, ascending')
    parser.add_argument('--devices', type=int, default=2, help='CPU devices per worker')
    parser.add_argument('--kvstore', default='local')
    parser.add_argument('--layers', type=int, default=4)
    parser.add_argument('--heads', type=int, default=4)
    parser.add_argument('--d-model', type=int, default=128)
    parser.add_argument('--lr', type=float, default=0.003)
    parser.add_argument('--prefix', default='', help='checkpoint prefix (none when empty)')
    parser.add_argument('--seed', type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    buckets = [int(b) for b in args.buckets.split(',')]
    seq_len = buckets[-1]  # the positions the model embeds
    mx.random.seed(args.seed)
    kv = mx.kv.create(args.kvstore)
    text = dict(train_files=[GCIDE], val_fraction=0.01, buckets=buckets, seed=args.seed,
                seq_len=seq_len, vocab=256)
    # Each worker trains on its rows of every global batch; each scores the same validation
    # batches (Module.score's figure is the worker's own, as in MXNet).
    train = mx.io.TextIter(args.batch_size, batches_per_epoch=args.batches_per_epoch,
                           num_parts=kv.num_workers, part_index=kv.rank, **text)
    val = mx.io.TextIter(args.batch_size, split='val', val_batches=args.val_batches, **text)
    network = gpt(args.layers, args.heads, args.d_model, seq_len)

    def sym_gen(bucket_key):  # one graph for every length (MXNet's would unroll per length)
        return network, ('data',), ('softmax_label',)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=train.default_bucket_key,
                                 context=[mx.cpu(i) for i in range(args.devices)])
    metric = mx.metric.Perplexity(ignore_label=-1)

    def report(epoch, symbol, arg_params, aux_params):
        if kv.rank == 0:
            print(json.dumps({'epoch': epoch, 'train_perplexity': metric.get_global()[1]}),
                  flush=True)

    callbacks = [report]
    if args.prefix:
        callbacks.append(mx.callback.do_checkpoint(args.prefix))
    mod.fit(train, eval_data=val, eval_metric=metric, kvstore=args.kvstore, optimizer='adam',
            optimizer_params={'learning_rate': args.lr},
            initializer=mx.init.Xavier(magnitude=2.0), num_epoch=args.epochs,
            batch_end_callback=mx.callback.Speedometer(args.batch_size * kv.num_workers, 20),
            epoch_end_callback=callbacks)
    (name, perplexity), = mod.score(val, mx.metric.Perplexity(ignore_label=-1))
    if kv.rank == 0:
        print(json.dumps({'val_perplexity': perplexity, 'engine': 'C++ loop' if
                          mod._module._native_trainer is not None else 'Python loop',
                          'pid': os.getpid()}), flush=True)


if __name__ == '__main__':
    main()
