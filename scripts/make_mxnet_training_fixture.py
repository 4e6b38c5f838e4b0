#!/usr/bin/env python3
"""Trains a small MLP for two epochs with MXNet 1.9.1's Module (SGD with momentum and weight
decay, batch 8, no shuffling) from fixed initial parameters and data, and saves both and the
final parameters to tests/data/mxnet_train/mlp_sgd.params ("init:", "final:", "data", "label"),
so tests/trainer/trainer_test.cc can check that Cohort trains to the same parameters.

    pip install mxnet==1.9.1 'numpy<1.24'
    python3 scripts/make_mxnet_training_fixture.py"""
import os

import mxnet as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mxnet_train")


def main():
    rng = np.random.RandomState(5)
    x = rng.normal(0, 1, size=(32, 8)).astype("float32")
    y = (np.arange(32) % 4).astype("float32")
    x[np.arange(32), (np.arange(32) % 4)] += 2.0
    d = mx.sym.var("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(d, num_hidden=16, name="fc1"), act_type="relu",
                          name="relu1")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=4, name="fc2"), name="softmax")
    init = {"fc1_weight": rng.uniform(-0.5, 0.5, (16, 8)), "fc1_bias": rng.uniform(-0.1, 0.1, 16),
            "fc2_weight": rng.uniform(-0.5, 0.5, (4, 16)), "fc2_bias": rng.uniform(-0.1, 0.1, 4)}
    init = {k: mx.nd.array(v.astype("float32")) for k, v in init.items()}
    it = mx.io.NDArrayIter(x, y, batch_size=8, shuffle=False, label_name="softmax_label")
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(it, num_epoch=2, arg_params={k: v.copy() for k, v in init.items()}, aux_params={},
            optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
            kvstore="local")
    final, _ = mod.get_params()
    save = {"data": mx.nd.array(x), "label": mx.nd.array(y)}
    save.update({"init:" + k: v for k, v in init.items()})
    save.update({"final:" + k: v for k, v in final.items()})
    os.makedirs(OUT, exist_ok=True)
    mx.nd.save(os.path.join(OUT, "mlp_sgd.params"), save)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
