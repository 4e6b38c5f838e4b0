"""CTest python_mpi_fit_failure: an exception in one worker's fit callback under mpirun ends the
whole job within seconds, exit code 1, with that worker's traceback (not a job left waiting in
its next collective). Launches mpirun itself with `worker` as the script's argument."""
import os
import subprocess
import sys
import time

if sys.argv[1:] == ['worker']:
    import numpy as np

    import cohort as mx
    data = mx.sym.var('data')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name='fc'),
                               name='softmax')
    rank = mx.kv.create('mpi').rank
    x = np.random.RandomState(0).uniform(-1, 1, (400, 5)).astype(np.float32)

    def fails(param):
        if rank == 1 and param.nbatch == 2:
            raise RuntimeError('worker 1 callback failed at batch 2')

    mx.mod.Module(net).fit(mx.io.NDArrayIter(x, np.zeros(400, np.float32), batch_size=10),
                           num_epoch=1000, kvstore='mpi', optimizer='sgd',
                           batch_end_callback=fails)
    sys.exit(0)

mpirun, python = sys.argv[1], sys.argv[2]
start = time.time()
run = subprocess.run([mpirun, '-np', '2', '--allow-run-as-root', '--oversubscribe', '--bind-to',
                      'none', python, os.path.abspath(__file__), 'worker'],
                     capture_output=True, text=True, timeout=60)
seconds = time.time() - start
out = run.stdout + run.stderr
assert run.returncode != 0, out
assert 'RuntimeError: worker 1 callback failed at batch 2' in out, out
assert 'cohort: worker 1 of the mpirun job failed; ending the job' in out, out
assert seconds < 30, seconds
print('the job ended in %.1f s' % seconds)
