"""Data-parallel executors (MXNet 1.x's mxnet.executor_manager): DataParallelExecutorManager
slices each batch over devices by work load, one executor per device sharing parameters, run by
Cohort's C++ manager (the one cohort-train runs); and the module's helper functions."""
import logging

from . import _cohort
from .base import MXNetError
from .context import Context
from .io import _desc
from .metric import EvalMetric, _NativeMetric
from .ndarray import NDArray

__all__ = ['DataParallelExecutorManager']


def _split_input_slice(batch_size, work_load_list):
    """Slices of the batch proportional to the work loads, halves rounded to even (Python 3's
    round, as MXNet); ValueError when a device would get no sample."""
    try:
        return [slice(b, e) for b, e in _cohort.split_batch(int(batch_size),
                                                             [float(w) for w in work_load_list])]
    except MXNetError as e:
        raise ValueError('Too many slices. Some splits are empty. (%s)' % e) from None


def _check_arguments(symbol):
    """ValueError naming a duplicated argument or auxiliary state of the symbol."""
    arg_set = set()
    arg_names = symbol.list_arguments()
    for name in arg_names:
        if name in arg_set:
            raise ValueError(('Find duplicated argument name "%s", please make the weight name '
                              'non-duplicated(using name arguments), arguments are %s')
                             % (name, str(arg_names)))
        arg_set.add(name)
    aux_set = set()
    aux_names = symbol.list_auxiliary_states()
    for name in aux_names:
        if name in aux_set:
            raise ValueError(('Find duplicated auxiliary param name "%s", please make the weight '
                              'name non-duplicated(using name arguments), arguments are %s, '
                              'auxiliary params are %s') % (name, str(arg_names), str(aux_names)))
        aux_set.add(name)


def _load_general(data, targets):
    """Copies each array into its target, or its slices into the targets of each slice."""
    for d_src, d_targets in zip(data, targets):
        if isinstance(d_targets, NDArray):
            d_src.copyto(d_targets)
        else:
            if d_targets[-1][0].stop != d_src.shape[0]:
                raise ValueError('Batch size miss match. Expected %d, got %d'
                                 % (d_targets[-1][0].stop, d_src.shape[0]))
            for slice_idx, d_dst in d_targets:
                d_src[slice_idx].copyto(d_dst)


def _load_data(batch, targets):
    _load_general(batch.data, targets)


def _load_label(batch, targets):
    _load_general(batch.label, targets)


class DataParallelExecutorManager:
    """One executor per context over slices of each batch (work_load_list: each device's
    share), parameters kept alike on every device; sym_gen(bucket_key) makes the graph of a
    batch of another bucket, sharing the parameters."""

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names,
                 work_load_list=None, logger=None, sym_gen=None, _inputs_need_grad=False,
                 _grad_req='write', _group2ctxs=None):
        if logger is None:
            logger = logging
        num_device = len(ctx)
        logger.info('Start training with %s', str(ctx))
        if work_load_list is None:
            work_load_list = [1] * num_device
        if not isinstance(work_load_list, list) or len(work_load_list) != num_device:
            raise ValueError('Invalid settings for work load: %d entries for %d devices'
                             % (len(work_load_list) if isinstance(work_load_list, list) else -1,
                                num_device))
        for c in ctx:
            if not isinstance(c, Context):
                raise TypeError('ctx: expected a list of Context, got %r' % (c,))
        _check_arguments(symbol)
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names = arg_names
        self.param_names = param_names
        self.aux_names = aux_names
        self.ctx = ctx
        self.symbol = symbol
        self.sym_gen = sym_gen
        default_key = getattr(train_data, 'default_bucket_key', None) if sym_gen else None
        self._handle = _cohort.ManagerHandle(
            symbol.handle, [c._text() for c in ctx],
            [_desc(d) for d in train_data.provide_data],
            [_desc(d) for d in train_data.provide_label], list(param_names),
            [float(w) for w in work_load_list], sym_gen, default_key, [],
            bool(_inputs_need_grad), _grad_req,
            [{g: c._text() for g, c in (groups or {}).items()} for groups in _group2ctxs or []])
        self._label_names = [_desc(d)[0] for d in train_data.provide_label]

    # ---- parameters
    @property
    def param_arrays(self):
        return [[NDArray(h) for h in block] for block in self._handle.param_arrays]

    @property
    def grad_arrays(self):
        return [[NDArray(h) for h in block] for block in self._handle.grad_arrays]

    @property
    def aux_arrays(self):
        return [[NDArray(h) for h in block] for block in self._handle.aux_arrays]

    def set_params(self, arg_params, aux_params):
        """Copies the parameters to every device."""
        self._handle.set_params({k: v.handle for k, v in arg_params.items()},
                                {k: v.handle for k, v in (aux_params or {}).items()}, True)

    def copy_to(self, arg_params, aux_params):
        """Writes each parameter's mean over the devices into arg_params[name] and
        aux_params[name] (NDArrays, updated in place)."""
        args, aux = self._handle.copy_to()
        for name, handle in args.items():
            if name in arg_params:
                NDArray(handle).astype(arg_params[name].dtype).copyto(arg_params[name])
        for name, handle in aux.items():
            if name in aux_params:
                NDArray(handle).astype(aux_params[name].dtype).copyto(aux_params[name])

    def install_monitor(self, monitor):
        """A Monitor's install(executor) on every device's executor, or a callback(name,
        array) called after each operator."""
        if callable(monitor) and not hasattr(monitor, 'install'):
            self._handle.install_monitor(
                lambda name, h: monitor(name, NDArray(h, writable=False)), False)
            return
        monitor_all = bool(getattr(monitor, 'monitor_all', False))
        stat = monitor.stat_helper if hasattr(monitor, 'stat_helper') else None
        if stat is None:
            raise TypeError('install_monitor takes a Monitor or a callable(name, array)')
        self._handle.install_monitor(lambda name, h: stat(name, NDArray(h, writable=False)),
                                     monitor_all)
        if hasattr(monitor, 'exes'):  # its toc lists the executors' arguments
            monitor.exes.extend(self.execs)

    @property
    def execs(self):
        """Each device's Executor (of the current bucket)."""
        from .executor import Executor
        from .symbol import Symbol
        out = []
        for d, ctx in enumerate(self.ctx):
            handle = self._handle.executor(d)
            out.append(Executor(handle, Symbol(handle.symbol), ctx))
        return out

    # ---- a step
    def load_data_batch(self, data_batch):
        """Slices the batch over the devices (binding its bucket's graph on first use)."""
        provide_data = getattr(data_batch, 'provide_data', None) or []
        provide_label = getattr(data_batch, 'provide_label', None) or []
        label = getattr(data_batch, 'label', None) or []  # any object with .data will do
        self._handle.load_data_batch(
            [d.handle for d in data_batch.data], [l.handle for l in label],
            int(getattr(data_batch, 'pad', 0) or 0), getattr(data_batch, 'bucket_key', None),
            [_desc(d) for d in provide_data], [_desc(d) for d in provide_label])

    def forward(self, is_train=False):
        self._handle.forward(bool(is_train))

    def backward(self, out_grads=None):
        """Backward on every device; out_grads: head gradients of the whole batch (one per
        output, each device taking its rows), for outputs that are not losses."""
        if out_grads is None:
            self._handle.backward()
        else:
            self._handle.backward_with([g.handle for g in out_grads])

    @property
    def outputs(self):
        """Each device's outputs, in device order."""
        return [[NDArray(h) for h in outs] for outs in self._handle.outputs]

    def merged_output(self, index):
        """Output `index` of the whole batch, the devices' parts joined along its batch axis."""
        return NDArray(self._handle.merged_output(index))

    def update_metric(self, metric, labels, pre_sliced=False):
        """Updates `metric` with each device's outputs and its slice of the labels."""
        if isinstance(metric, _NativeMetric) and not pre_sliced:
            self._handle.update_metric(metric.handle, [l.handle for l in labels], 0)
            return
        if not isinstance(metric, EvalMetric):
            raise TypeError('update_metric takes an EvalMetric, got %s' % type(metric).__name__)
        for device, (outputs, islice) in enumerate(zip(self.outputs, self.slices)):
            labels_slice = labels[device] if pre_sliced else [label[islice] for label in labels]
            metric.update(labels_slice, outputs)
