"""Run under mpirun -np 2 (CTest python_mpi_fit): Module.fit with kvstore 'mpi' or 'dist_sync',
one device a worker and each worker its half of every batch, trains to the parameters one
process gets on two devices over the whole batches, on the C++ loop and on MXNet's Python loop
(a Python optimizer) alike; the workers end with equal parameters."""
import sys

import numpy as np

import cohort as mx


def network():
    data = mx.sym.var('data')
    net = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=16, name='fc1'),
                            act_type='relu')
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(net, num_hidden=3, name='fc2'),
                                name='softmax')


def fit(contexts, x, y, batch, kvstore, optimizer):
    """Two epochs; a string optimizer's rescale_grad is Module's: 1 / (batch x workers)."""
    mx.random.seed(3)  # the same initial parameters on every worker and in the reference
    mod = mx.mod.Module(network(), context=contexts)
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=batch), num_epoch=2, kvstore=kvstore,
            optimizer=optimizer, optimizer_params={'learning_rate': 0.1, 'momentum': 0.9},
            initializer=mx.init.Xavier())
    return mod, {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


class PythonSGD(mx.optimizer.SGD):
    """No C++ counterpart: fit runs MXNet's Python loop."""


rank_probe = mx.kv.create('dist_sync')
rank, workers = rank_probe.rank, rank_probe.num_workers
assert workers == 2, workers
rs = np.random.RandomState(0)
x = rs.uniform(-1, 1, (80, 5)).astype(np.float32)
y = (x[:, 0] > 0).astype(np.float32) + (x[:, 1] > 0)
# Batch i of the whole data set is rows [20i, 20i + 20): its first half is worker 0's batch i.
mine = np.concatenate([np.arange(20 * i + 10 * rank, 20 * i + 10 * rank + 10) for i in range(4)])
for kvstore in sys.argv[1:]:
    for optimizer in ('sgd', 'python'):
        make = (lambda: 'sgd') if optimizer == 'sgd' else \
            (lambda: PythonSGD(learning_rate=0.1, momentum=0.9, rescale_grad=1 / 20.))
        _, want = fit([mx.cpu(0), mx.cpu(1)], x, y, 20, 'local', make())
        mod, got = fit([mx.cpu(0)], x[mine], y[mine], 10, kvstore, make())
        assert (mod._native_trainer is not None) == (optimizer == 'sgd'), (kvstore, optimizer)
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, rtol=1e-6, atol=1e-7,
                                       err_msg='%s %s %s' % (kvstore, optimizer, name))
print('rank', rank, 'ok')
