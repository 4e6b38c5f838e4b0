#!/usr/bin/env python3
"""Fine-tuning as MXNet 1.x scripts do it: load a checkpoint (examples/train_mnist.py's), cut the
network at its last hidden layer (get_internals), put a new classifier on it, freeze every
loaded layer with fixed_param_names and train only the new one (Module.fit on the C++ loop:
frozen parameters get no gradient memory, no kvstore key, no update). Prints one JSON line with
the validation accuracy and whether the frozen parameters are still the checkpoint's, bit for
bit.

    PYTHONPATH=build/python /usr/bin/python3 examples/train_mnist.py --epochs 2 --prefix lenet
    PYTHONPATH=build/python /usr/bin/python3 examples/finetune_mnist.py --checkpoint lenet --epoch 2
"""
import argparse
import json
import logging

import cohort as mx

FMNIST = '/usr/share/datasets/fashion-mnist/'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--checkpoint', required=True, help='prefix of the trained model')
    parser.add_argument('--epoch', type=int, required=True, help='its epoch to start from')
    parser.add_argument('--epochs', type=int, default=1)
    parser.add_argument('--batch-size', type=int, default=128)
    parser.add_argument('--devices', type=int, default=2, help='CPU devices')
    parser.add_argument('--lr', type=float, default=0.1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    symbol, arg_params, aux_params = mx.model.load_checkpoint(args.checkpoint, args.epoch)
    features = symbol.get_internals()['tanh3_output']  # LeNet's last hidden layer
    head = mx.sym.FullyConnected(features, num_hidden=10, name='fc_new')
    network = mx.sym.SoftmaxOutput(head, name='softmax')
    frozen = [name for name in network.list_arguments() if name in arg_params]
    mod = mx.mod.Module(network, context=[mx.cpu(i) for i in range(args.devices)],
                        fixed_param_names=frozen)
    train = mx.io.MNISTIter(image=FMNIST + 'train-images-idx3-ubyte.gz',
                            label=FMNIST + 'train-labels-idx1-ubyte.gz',
                            batch_size=args.batch_size, shuffle=True, seed=7)
    val = mx.io.MNISTIter(image=FMNIST + 't10k-images-idx3-ubyte.gz',
                          label=FMNIST + 't10k-labels-idx1-ubyte.gz',
                          batch_size=args.batch_size, shuffle=False)
    # The loaded layers keep their values; the new classifier (which the checkpoint lacks) is
    # made by the initializer (allow_missing), and the old one (fc2) is left out (allow_extra).
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(mx.init.Xavier(magnitude=2.0), arg_params=arg_params, aux_params=aux_params,
                    allow_missing=True, allow_extra=True)
    mod.fit(train, eval_data=val, optimizer='sgd', eval_metric='acc',
            optimizer_params={'learning_rate': args.lr, 'momentum': 0.9},
            num_epoch=args.epochs, batch_end_callback=mx.callback.Speedometer(args.batch_size, 100))
    (_, accuracy), = mod.score(val, mx.metric.Accuracy())
    trained, _ = mod.get_params()
    unchanged = all(trained[name].asnumpy().tobytes() == arg_params[name].asnumpy().tobytes()
                    for name in frozen)
    print(json.dumps({'val_accuracy': accuracy, 'frozen': frozen, 'frozen_unchanged': unchanged,
                      'engine': 'C++ loop' if mod._native_trainer is not None else 'Python loop'}),
          flush=True)


if __name__ == '__main__':
    main()
