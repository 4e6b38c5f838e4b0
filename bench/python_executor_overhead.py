#!/usr/bin/env python3
"""The cost of driving Cohort from Python: LeNet forward+backward per batch through
cohort.Executor (inputs fed by name from numpy each step, as a training loop does, and without
feeding), for bench-python-overhead.sh to set beside the same loop in C++ (lenet_bench).
One JSON line: {"bench":"lenet","impl":"python",...}.
    PYTHONPATH=build/python /usr/bin/python3 bench/python_executor_overhead.py [batch] [iters]
"""
import json
import sys
import time

import numpy as np

import cohort as mx


def lenet():
    x = mx.sym.Convolution(mx.sym.var('data'), kernel=(5, 5), num_filter=20, name='conv1')
    x = mx.sym.Activation(x, act_type='tanh', name='tanh1')
    x = mx.sym.Pooling(x, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool1')
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=50, name='conv2')
    x = mx.sym.Activation(x, act_type='tanh', name='tanh2')
    x = mx.sym.Pooling(x, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool2')
    x = mx.sym.Flatten(x, name='flatten')
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=500, name='fc1'), act_type='tanh',
                          name='tanh3')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def median_ms(iters, fn):
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 128
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    exe = lenet().simple_bind(mx.cpu(), data=(batch, 1, 28, 28))
    rng = np.random.RandomState(0)
    for name, arr in exe.arg_dict.items():
        arr[:] = rng.randint(0, 10, arr.shape) if name == 'softmax_label' else \
            rng.uniform(-0.1, 0.1, arr.shape)
    data = rng.uniform(0, 1, (batch, 1, 28, 28)).astype('f')
    labels = rng.randint(0, 10, batch).astype('f')

    def step():
        exe.forward(is_train=True)
        exe.backward()

    def fed_step():
        exe.forward(is_train=True, data=data, softmax_label=labels)
        exe.backward()

    for _ in range(2):
        fed_step()
    train_ms = median_ms(iters, step)
    fed_ms = median_ms(iters, fed_step)
    print(json.dumps({'bench': 'lenet', 'impl': 'python', 'batch_size': batch,
                      'train_ms': round(train_ms, 2), 'fed_train_ms': round(fed_ms, 2),
                      'train_samples_per_sec': round(batch * 1000 / train_ms)}))


if __name__ == '__main__':
    main()
