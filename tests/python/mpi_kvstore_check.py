"""Run under mpirun -np 2 (CTest python_mpi_kvstore): cohort.kv's 'dist_sync' store sums over
the workers' devices, starts every worker from rank 0's values, and an optimizer set on it keeps
the workers' weights equal to one process updating with the sum of all gradients."""
import numpy as np

import cohort as mx

kv = mx.kv.create('dist_sync')
rank, workers = kv.rank, kv.num_workers
assert (kv.type, workers) == ('dist_sync', 2), (kv.type, workers)

weight = mx.nd.ones((3, 5)) * (rank + 10)  # rank 0's value wins
kv.init('w', weight)
out = mx.nd.zeros((3, 5))
kv.pull('w', out=out)
np.testing.assert_array_equal(out.asnumpy(), np.full((3, 5), 10))

# Two devices a worker: the sum is over all four arrays, (1 + 2) + (2 + 3).
kv.push('w', [mx.nd.ones((3, 5)) * (rank + 1), mx.nd.ones((3, 5)) * (rank + 2)])
kv.pull('w', out=out)
np.testing.assert_array_equal(out.asnumpy(), np.full((3, 5), 8))

kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
alone = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
expected = mx.nd.ones((3, 5)) * 8
for step in range(3):
    grads = [mx.nd.ones((3, 5)) * (rank + step), mx.nd.ones((3, 5)) * 0.5]
    kv.push('w', grads)
    alone(0, mx.nd.ones((3, 5)) * (2 * step + 1 + 1.0), expected)  # (0+s)+(1+s) + 0.5 + 0.5
kv.pull('w', out=out)
np.testing.assert_array_equal(out.asnumpy(), expected.asnumpy())

# Gradients crossing as bfloat16 (Note [Gradient compression]): the sum of values bfloat16 holds
# exactly is exact; of others it is within bfloat16's rounding, and every worker has the same.
zipped = mx.kv.create('dist_sync')
zipped.set_gradient_compression({'type': 'bf16'})
values = np.random.RandomState(rank).uniform(-1, 1, 1 << 16).astype(np.float32)
whole = np.random.RandomState(0).uniform(-1, 1, 1 << 16).astype(np.float32) + \
    np.random.RandomState(1).uniform(-1, 1, 1 << 16).astype(np.float32)
zipped.init(7, mx.nd.zeros(values.shape))
got = mx.nd.zeros(values.shape)
zipped.push(7, mx.nd.array(values))
zipped.pull(7, out=got)
got = got.asnumpy()
assert np.abs(got - whole).max() <= 2 * 2 ** -8 * 2, np.abs(got - whole).max()
assert (got != whole).any(), 'nothing was narrowed'
theirs = mx.nd.array(got)
zipped.init(8, mx.nd.zeros(values.shape))
zipped.push(8, theirs)  # the sum of two equal arrays is twice either: equal on both workers
zipped.pull(8, out=theirs)
np.testing.assert_array_equal(theirs.asnumpy(), 2 * got)
kv.barrier()
print('rank %d of %d: ok' % (rank, workers))
