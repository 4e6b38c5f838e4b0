#!/usr/bin/env python3
"""A DataParallelExecutorManager loop over two CPU devices, as MXNet 1.x's model code drove
it: each batch sliced over the devices, gradients of the devices summed and every device's
weights updated alike (plain SGD in numpy), accuracy through update_metric. Prints one JSON line
per epoch.

    PYTHONPATH=build/python /usr/bin/python3 examples/manager_two_devices.py [--epochs N]
"""
import argparse
import json
import time

import numpy as np

import cohort as mx
from cohort.executor_manager import DataParallelExecutorManager

FMNIST = '/usr/share/datasets/fashion-mnist/'


def mlp():
    x = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=128, name='fc1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.FullyConnected(x, num_hidden=10, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--batch-size', type=int, default=128)
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--batches', type=int, default=0, help='stop each epoch after N batches')
    args = parser.parse_args()

    train = mx.io.MNISTIter(image=FMNIST + 'train-images-idx3-ubyte.gz',
                            label=FMNIST + 'train-labels-idx1-ubyte.gz',
                            batch_size=args.batch_size, shuffle=True, flat=True, seed=1)
    net = mlp()
    arg_names = net.list_arguments()
    param_names = [n for n in arg_names if n not in ('data', 'softmax_label')]
    manager = DataParallelExecutorManager(net, [mx.cpu(0), mx.cpu(1)], train, arg_names,
                                          param_names, net.list_auxiliary_states())
    rng = np.random.RandomState(0)
    shapes = dict(zip(arg_names, net.infer_shape(data=(args.batch_size, 784))[0]))
    manager.set_params({n: mx.nd.array(rng.uniform(-0.07, 0.07, shapes[n])
                                       if n.endswith('weight') else np.zeros(shapes[n]))
                        for n in param_names}, {})
    # numpy views of every device's weights and gradients, made once.
    weights = [[np.asarray(w) for w in block] for block in manager.param_arrays]
    grads = [[np.asarray(g) for g in block] for block in manager.grad_arrays]

    for epoch in range(args.epochs):
        start = time.time()
        metric = mx.metric.Accuracy()
        train.reset()
        for i, batch in enumerate(train):
            if args.batches and i == args.batches:
                break
            manager.load_data_batch(batch)
            manager.forward(is_train=True)
            manager.backward()
            for w_block, g_block in zip(weights, grads):
                step = args.lr / args.batch_size * sum(g_block)  # the devices' summed gradient
                for w in w_block:
                    w -= step
            manager.update_metric(metric, batch.label)
        print(json.dumps({'epoch': epoch, 'train_accuracy': metric.get()[1],
                          'seconds': round(time.time() - start, 3)}), flush=True)


if __name__ == '__main__':
    main()
