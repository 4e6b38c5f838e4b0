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
kv.barrier()
print('rank %d of %d: ok' % (rank, workers))
