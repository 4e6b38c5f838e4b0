#!/usr/bin/env python3
"""MXNet 1.x's documented Executor training loop on Cohort: simple_bind an MLP, feed batches by
name, forward and backward, and SGD by hand in numpy (np.asarray shares the executor's arrays,
so the update writes the weights in place). Prints one JSON line per epoch.

    PYTHONPATH=build/python /usr/bin/python3 examples/executor_mlp_fmnist.py [--epochs N]
"""
import argparse
import json
import time

import numpy as np

import cohort as mx

FMNIST = '/usr/share/datasets/fashion-mnist/'


def mlp():
    data = mx.sym.var('data')
    x = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=128, name='fc1'),
                          act_type='relu', name='relu1')
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=64, name='fc2'), act_type='relu',
                          name='relu2')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc3')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--batch-size', type=int, default=100)
    parser.add_argument('--lr', type=float, default=0.1)
    args = parser.parse_args()

    train = mx.io.MNISTIter(image=FMNIST + 'train-images-idx3-ubyte.gz',
                            label=FMNIST + 'train-labels-idx1-ubyte.gz',
                            batch_size=args.batch_size, shuffle=True, flat=True, seed=1)
    val = mx.io.MNISTIter(image=FMNIST + 't10k-images-idx3-ubyte.gz',
                          label=FMNIST + 't10k-labels-idx1-ubyte.gz',
                          batch_size=args.batch_size, shuffle=False, flat=True)
    exe = mlp().simple_bind(mx.cpu(), data=(args.batch_size, 784), grad_req='write')
    rng = np.random.RandomState(0)
    params = [n for n in exe.arg_dict if n not in ('data', 'softmax_label')]
    for name in params:  # Xavier-style uniform weights, zero biases
        w = np.asarray(exe.arg_dict[name])
        w[...] = rng.uniform(-1, 1, w.shape) * np.sqrt(6.0 / sum(w.shape)) \
            if name.endswith('weight') else 0
    weights = [np.asarray(exe.arg_dict[n]) for n in params]  # views: no copies
    grads = [np.asarray(exe.grad_dict[n]) for n in params]

    for epoch in range(args.epochs):
        start = time.time()
        train.reset()
        for batch in train:
            exe.forward(is_train=True, data=batch.data[0], softmax_label=batch.label[0])
            exe.backward()
            for w, g in zip(weights, grads):
                w -= args.lr / args.batch_size * g  # SoftmaxOutput's gradient sums the batch
        metric = mx.metric.Accuracy()
        val.reset()
        for batch in val:
            exe.forward(is_train=False, data=batch.data[0])
            metric.update(batch.label, exe.outputs)
        print(json.dumps({'epoch': epoch, 'val_accuracy': metric.get()[1],
                          'seconds': round(time.time() - start, 3)}), flush=True)


if __name__ == '__main__':
    main()
