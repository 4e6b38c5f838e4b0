#!/usr/bin/env python3
"""MXNet 1.x's train_mnist on Cohort: LeNet written with mx.sym, Module.fit over two CPU devices
on Fashion-MNIST (Debian's dataset-fashion-mnist), Speedometer, a checkpoint each epoch, then
score. Module.fit runs cohort-train's C++ loop (native iterators, a built-in metric, optimizer
and schedule). With the same seed, initializer, schedule and shuffling as
configs/fmnist_lenet.yaml it trains to cohort-train's parameters bit for bit (on two CPU
devices; tests/python/test_examples.py checks it). Prints one JSON line per epoch and one for
the score.

    PYTHONPATH=build/python /usr/bin/python3 examples/train_mnist.py [--epochs N]
    mpirun -np 2 --allow-run-as-root -x PYTHONPATH=build/python /usr/bin/python3 \\
        examples/train_mnist.py --kvstore mpi --devices 1 --batch-size 64  # = one process, 2 devices
"""
import argparse
import json
import logging
import os

import cohort as mx

FMNIST = '/usr/share/datasets/fashion-mnist/'


def lenet(num_classes=10):
    """The LeNet of cohort-train's `model.name: lenet` (same layers, same parameter names)."""
    x = mx.sym.var('data')
    for i, filters in ((1, 20), (2, 50)):
        x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=filters, name='conv%d' % i)
        x = mx.sym.Activation(x, act_type='tanh', name='tanh%d' % i)
        x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type='max', name='pool%d' % i)
    x = mx.sym.Flatten(x, name='flatten')
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=500, name='fc1'),
                          act_type='tanh', name='tanh3')
    x = mx.sym.FullyConnected(x, num_hidden=num_classes, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--batch-size', type=int, default=128, help='per worker')
    parser.add_argument('--devices', type=int, default=2, help='CPU devices per worker')
    parser.add_argument('--kvstore', default='local')
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--prefix', default='', help='checkpoint prefix (none when empty)')
    parser.add_argument('--seed', type=int, default=42)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    mx.random.seed(args.seed)
    kv = mx.kv.create(args.kvstore)
    train = mx.io.MNISTIter(image=FMNIST + 'train-images-idx3-ubyte.gz',
                            label=FMNIST + 'train-labels-idx1-ubyte.gz',
                            batch_size=args.batch_size, shuffle=True, seed=args.seed,
                            reshuffle_each_epoch=True,  # as cohort-train (MXNet's: once)
                            # each worker its rows of every global batch, as cohort-train
                            num_parts=kv.num_workers, part_index=kv.rank,
                            sharding='global_batch')
    val = mx.io.MNISTIter(image=FMNIST + 't10k-images-idx3-ubyte.gz',
                          label=FMNIST + 't10k-labels-idx1-ubyte.gz',
                          batch_size=args.batch_size, shuffle=False)
    # The last batch of an epoch is padded (cohort-train's default): ceil(60000 / global batch).
    batches_per_epoch = -(-60000 // (args.batch_size * kv.num_workers))
    mod = mx.mod.Module(lenet(), context=[mx.cpu(i) for i in range(args.devices)])

    def report(epoch, symbol, arg_params, aux_params):
        if kv.rank == 0:
            print(json.dumps({'epoch': epoch, 'train_accuracy': metric.get_global()[1]}),
                  flush=True)

    metric = mx.metric.Accuracy()
    callbacks = [report]
    if args.prefix:
        callbacks.append(mx.callback.do_checkpoint(args.prefix))
    mod.fit(train, eval_data=val, eval_metric=metric, kvstore=args.kvstore, optimizer='sgd',
            optimizer_params={'learning_rate': args.lr, 'momentum': 0.9, 'wd': 1e-4,
                              'lr_scheduler': mx.lr_scheduler.FactorScheduler(
                                  step=4 * batches_per_epoch, factor=0.5)},
            initializer=mx.init.Xavier(magnitude=2.0), num_epoch=args.epochs,
            batch_end_callback=mx.callback.Speedometer(args.batch_size, 100),
            epoch_end_callback=callbacks)
    (name, accuracy), = mod.score(val, mx.metric.Accuracy())
    if kv.rank == 0:
        print(json.dumps({'val_accuracy': accuracy, 'engine': 'C++ loop' if
                          mod._native_trainer is not None else 'Python loop',
                          'pid': os.getpid()}), flush=True)


if __name__ == '__main__':
    main()
