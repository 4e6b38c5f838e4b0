#!/usr/bin/env python3
"""Trains a small MLP with MXNet 1.9.1's Module.fit from given parameters (no shuffling, SGD
with momentum and weight decay, two epochs of batch 20) and saves the data, the starting
parameters, the parameters after fit, its validation accuracy and predict's outputs, for
tests/python/test_module.py:

    tests/data/mxnet/module_fit.params   "data", "label", "init:<name>", "final:<name>",
                                         "predict", "score" (accuracy, one element)

    pip install mxnet==1.9.1 'numpy<1.24'   (in a venv; run this with that venv's python)
    python scripts/make_mxnet_module_fixtures.py"""
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data', 'mxnet')


def network():
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=16, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


def main():
    rng = np.random.RandomState(3)
    x = rng.normal(size=(100, 10)).astype(np.float32)
    y = np.argmax(x[:, :3] + 0.3 * rng.normal(size=(100, 3)), axis=1).astype(np.float32)
    init = {'fc1_weight': rng.normal(0, 0.3, (16, 10)), 'fc1_bias': np.zeros(16),
            'fc2_weight': rng.normal(0, 0.3, (3, 16)), 'fc2_bias': np.zeros(3)}
    init = {k: mx.nd.array(v) for k, v in init.items()}
    train = mx.io.NDArrayIter(x, y, batch_size=20, shuffle=False)
    mod = mx.mod.Module(network(), context=mx.cpu())
    mod.fit(train, num_epoch=2, arg_params={k: v.copy() for k, v in init.items()},
            optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.9,
                                                'wd': 0.001})
    args, _ = mod.get_params()
    arrays = {'data': mx.nd.array(x), 'label': mx.nd.array(y)}
    arrays.update({'init:' + k: v for k, v in init.items()})
    arrays.update({'final:' + k: v for k, v in args.items()})
    arrays['predict'] = mod.predict(mx.io.NDArrayIter(x, y, batch_size=30))  # pads the last
    arrays['score'] = mx.nd.array([mod.score(train, 'acc')[0][1]])
    os.makedirs(OUT, exist_ok=True)
    mx.nd.save(os.path.join(OUT, 'module_fit.params'), arrays)
    print('score', arrays['score'].asscalar())


if __name__ == '__main__':
    main()
