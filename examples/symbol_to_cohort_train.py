#!/usr/bin/env python3
"""A model written in Python, trained by the config-driven binary: builds a small convolutional
network with cohort.sym, saves its MXNet JSON, and runs cohort-train on Fashion-MNIST with
`model.symbol` set to it (the binary's data, optimizer, checkpoints and logs).

    PYTHONPATH=build/python /usr/bin/python3 examples/symbol_to_cohort_train.py \\
        [--train build/apps/cohort-train] [--epochs N] [--out DIR]
"""
import argparse
import os
import subprocess
import sys

import cohort as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def convnet():
    x = mx.sym.Convolution(mx.sym.var('data'), kernel=(3, 3), num_filter=16, pad=(1, 1),
                           name='conv1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.Pooling(x, pool_type='max', kernel=(2, 2), stride=(2, 2), name='pool1')
    x = mx.sym.Flatten(x, name='flatten')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--train', default=os.path.join(ROOT, 'build', 'apps', 'cohort-train'))
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--out', default='.')
    parser.add_argument('extra', nargs='*', help='more --set key=value for cohort-train')
    args = parser.parse_args()
    symbol = os.path.join(args.out, 'convnet-symbol.json')
    convnet().save(symbol)
    print('wrote', symbol, flush=True)
    command = [args.train, '--config', os.path.join(ROOT, 'configs', 'fmnist_lenet.yaml'),
               '--set', 'model.symbol=' + symbol, '--set', 'epochs=%d' % args.epochs,
               '--metrics-out', os.path.join(args.out, 'convnet-metrics.jsonl')]
    for item in args.extra:
        command += ['--set', item]
    sys.exit(subprocess.call(command))


if __name__ == '__main__':
    main()
