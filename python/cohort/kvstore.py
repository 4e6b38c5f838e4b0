"""MXNet 1.x's mxnet.kvstore (`mx.kv`): a store of values by key (int or str) that sums what
devices push and hands the sum to an updater, across the workers of an mpirun job too.

The sums are Cohort's C++ kvstore's (kvstore/kvstore.h): 'local' (alias 'local_allreduce_cpu')
sums the devices of this process, 'mpi' and 'dist_sync' also sum over the workers of an mpirun
job, 'device' (alias 'local_allreduce_device') sums GPU arrays with NCCL and host arrays on the
host (as MXNet's runs on CPU contexts too), 'nccl' sums GPU arrays with NCCL. The stored
values live here, so an updater (set_optimizer, _set_updater) runs in this process on the sum,
as MXNet's local store runs it; under mpirun every worker applies it to the same sum, which
keeps the workers' values equal, as MXNet's dist_sync servers do. Values are float32."""
import pickle
import sys

import numpy

from . import optimizer as opt
from .base import MXNetError
from .ndarray import NDArray
from . import _cohort

__all__ = ['KVStore', 'create']

_ALIASES = {'local_allreduce_cpu': 'local', 'local_allreduce_device': 'device'}


def _as_lists(key, value, what):
    """(keys, per key the list of its arrays) from MXNet's forms: a key with an array or a list
    of them (one per device), or a list of keys with one such entry each."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            raise ValueError('%s: %d keys need a list of %d values (an NDArray or a list of '
                             'them for each), got %r' % (what, len(key), len(key), type(value)))
        keys, values = list(key), [v if isinstance(v, (list, tuple)) else [v] for v in value]
    else:
        keys, values = [key], [value if isinstance(value, (list, tuple)) else [value]]
    for k, arrays in zip(keys, values):
        if not isinstance(k, (int, str)) or isinstance(k, bool):
            raise TypeError('%s: keys must be int or str, got %r' % (what, k))
        for a in arrays:
            if not isinstance(a, NDArray):
                raise TypeError('%s: the value of key %r must be an NDArray or a list of them, '
                                'got %s' % (what, k, type(a).__name__))
    if len(set(keys)) != len(keys):
        raise ValueError('%s: a key appears twice in %r' % (what, keys))
    for k, arrays in zip(keys, values):
        for a in arrays:
            if a.dtype != numpy.float32:
                raise MXNetError("%s: the value of key %r is %s; Cohort's kvstore sums float32 "
                                 'arrays' % (what, k, numpy.dtype(a.dtype).name))
    return keys, values


def sums_across_workers(kind):
    """Whether a kvstore kind sums the gradients of every worker of an mpirun job: MXNet's
    synchronous dist kinds, and Cohort's mpi. Their updates see the global batch's sum, so
    rescale_grad is 1 / (batch size x workers), and one device per worker still needs them."""
    return kind == 'mpi' or ('dist' in kind and '_sync' in kind)


class KVStore(object):
    """A key-value store (make one with cohort.kv.create)."""

    def __init__(self, handle, name=None):
        if not isinstance(handle, _cohort.KVStoreHandle) and handle is not None:
            raise TypeError('KVStore wraps a handle; make one with cohort.kv.create')
        self.handle = handle  # None: a 'device' store until its first init (_ensure_handle)
        self._type = name or handle.type
        self._updater = None
        self._ids = {}      # key -> the C++ store's int key
        self._stored = {}   # key -> its value
        self._merged = {}   # key -> the buffer its sums are made in
        self._wire = None   # set_gradient_compression's type, for a handle made later

    @property
    def type(self):
        return self._type

    @property
    def rank(self):
        return self.handle.rank if self.handle is not None else 0

    @property
    def num_workers(self):
        return self.handle.num_workers if self.handle is not None else 1

    def _ensure_handle(self, value):
        """A 'device' store sums GPU arrays with NCCL, and host arrays on the host, as MXNet's
        'device' store runs on CPU contexts too: the kind follows the first value's context."""
        if self.handle is None:
            kind = 'device' if value.context.device_type == 'gpu' else 'local'
            self.handle = _cohort.KVStoreHandle(kind)
            if self._wire is not None:
                self.handle.set_gradient_compression(self._wire)

    def is_capable(self, capability):
        if capability.lower() == 'optimizer':
            return True
        raise ValueError('Unknown capability: {}'.format(capability))

    def init(self, key, value):
        """Stores each key's first value; under mpirun rank 0's values, for every worker."""
        keys, values = _as_lists(key, value, 'init')
        for k in keys:
            if k in self._stored:
                raise MXNetError('init: duplicate init of key %r' % (k,))
        self._ensure_handle(values[0][0])
        ids = [self._ids.setdefault(k, len(self._ids)) for k in keys]
        firsts = [v[0].copy() for v in values]
        self.handle.init(ids, [a._handle for a in firsts])  # rank 0's, written back here
        for k, a in zip(keys, firsts):
            self._stored[k] = a
            self._merged[k] = a.copy()

    def push(self, key, value, priority=0):
        """Sums each key's values (over devices and workers) and updates its stored value with
        the sum: the updater's result, or the sum itself without one."""
        keys, values = _as_lists(key, value, 'push')
        self._check_shapes(keys, values, 'push')
        for k, arrays in zip(keys, values):
            merged = self._merged[k]
            self.handle.pushpull([self._ids[k]], [[a._handle for a in arrays]],
                                 [[merged._handle]])
            if self._updater is not None:
                self._updater(k, merged, self._stored[k])
            else:
                merged.copyto(self._stored[k])

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copies each key's stored value into its out arrays."""
        if out is None:
            raise AssertionError('pull: out is required')
        keys, outs = _as_lists(key, out, 'pull')
        self._check_shapes(keys, outs, 'pull')
        for k, arrays in zip(keys, outs):
            for a in arrays:
                self._stored[k].copyto(a)

    def pushpull(self, key, value, out=None, priority=0):
        """push, then pull into out (the values themselves when out is None)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """init with rank 0's value, then pull it into out."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        raise MXNetError("row_sparse_pull: Cohort's arrays are dense; use pull")

    # Cohort's compression types (Note [Gradient compression]): the gradients cross between
    # workers in a 16-bit float type and are summed in float32. MXNet's 1bit/2bit are not here.
    _COMPRESSION = {'bfloat16': 'bfloat16', 'bf16': 'bfloat16', 'float16': 'float16',
                    'fp16': 'float16', 'none': 'float32'}

    def set_gradient_compression(self, compression_params):
        """{'type': 'bfloat16' | 'float16' | 'none'}: the type gradients cross between workers
        in (Horovod's fp16 compression, DDP's bf16 hook), summed in float32. As MXNet, a 'local'
        store refuses; a store of one worker has no wire and compresses nothing."""
        if 'device' not in self.type and 'dist' not in self.type and self.type != 'mpi':
            raise Exception('Gradient compression is not supported for this type of kvstore')
        if not isinstance(compression_params, dict) or 'type' not in compression_params:
            raise ValueError("set_gradient_compression: expected a dict with 'type', got %r"
                             % (compression_params,))
        kind = compression_params['type']
        if kind not in self._COMPRESSION:
            raise MXNetError("set_gradient_compression: type %r: Cohort compresses to %s (MXNet's "
                             "1bit and 2bit are not supported)"
                             % (kind, ', '.join(sorted(self._COMPRESSION))))
        extra = set(compression_params) - {'type'}
        if extra:
            raise ValueError('set_gradient_compression: %s take no %s'
                             % (kind, ', '.join(sorted(extra))))
        self._wire = self._COMPRESSION[kind]
        if self.handle is not None:  # a 'device' store applies it once its kind is known
            self.handle.set_gradient_compression(self._wire)

    def set_optimizer(self, optimizer):
        """Updates the stored values with `optimizer` on every push."""
        if not isinstance(optimizer, opt.Optimizer):
            raise TypeError('set_optimizer: expected an Optimizer, got %s'
                            % type(optimizer).__name__)
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        """updater(key, summed value, stored value) runs on every push."""
        if updater is not None and not callable(updater):
            raise TypeError('_set_updater: expected a callable, got %s' % type(updater).__name__)
        self._updater = updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Writes the updater's states (with the optimizer when dump_optimizer) to fname."""
        if self._updater is None:
            raise AssertionError('Cannot save states for distributed training')
        with open(fname, 'wb') as fout:
            fout.write(self._updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname):
        """Reads the updater's states from a save_optimizer_states file."""
        if self._updater is None:
            raise AssertionError('Cannot load states for distributed training')
        with open(fname, 'rb') as fin:
            self._updater.set_states(fin.read())

    def barrier(self):
        """Waits for every worker."""
        if self.handle is not None:
            self.handle.barrier()

    _barrier = barrier

    def _check_shapes(self, keys, arrays, what):
        """Each key initialised, and each of its arrays of the stored value's shape."""
        for k, group in zip(keys, arrays):
            if k not in self._stored:
                raise MXNetError('%s: key %r was never initialised (call init first)' % (what, k))
            for a in group:
                if a.shape != self._stored[k].shape:
                    raise MXNetError('%s: key %r holds shape %s, %s has shape %s'
                                     % (what, k, self._stored[k].shape,
                                        'a value' if what == 'push' else 'out', a.shape))

    def __getstate__(self):
        raise pickle.PicklingError('a KVStore holds a live store and cannot be pickled')


def _end_the_job_on_an_uncaught_exception():
    """An mpirun job whose worker dies of a Python exception ends at once with that worker's
    traceback (exit 1), as cohort-train's jobs do: the other workers would wait in their next
    collective. Installed once, when a store that spans the workers is made."""
    previous = sys.excepthook
    if getattr(previous, '_cohort_ends_job', False):
        return

    def hook(kind, value, tb):
        rank = _cohort.distributed_rank()
        if rank >= 0:
            sys.stderr.write('cohort: worker %d of the mpirun job failed; ending the job\n' % rank)
        previous(kind, value, tb)
        _cohort.abort_distributed_job(1)

    hook._cohort_ends_job = True
    sys.excepthook = hook


def create(name='local'):
    """A KVStore of kind 'local', 'local_allreduce_cpu', 'device', 'local_allreduce_device',
    'nccl', 'mpi' or 'dist_sync'."""
    if not isinstance(name, str):
        raise TypeError('name must be a string')
    kind = _ALIASES.get(name, name)
    if kind == 'device':
        return KVStore(None, name)  # its kind follows its values (KVStore._ensure_handle)
    store = KVStore(_cohort.KVStoreHandle(kind), name)
    if store.num_workers > 1:
        _end_the_job_on_an_uncaught_exception()
    return store
