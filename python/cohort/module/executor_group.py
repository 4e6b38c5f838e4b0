"""MXNet 1.x's mxnet.module.executor_group: DataParallelExecutorGroup, the executors of a Module
(one per context over slices of each batch, parameters alike on every device), over Cohort's
C++ group (executor_manager/executor_group.h) as cohort.executor_manager binds it."""
import logging

from .. import context as ctx_mod
from .. import ndarray as nd
from ..base import MXNetError
from ..executor_manager import DataParallelExecutorManager
from ..io import DataDesc, _desc

__all__ = ['DataParallelExecutorGroup']


def _descs(shapes, what):
    """DataDescs from DataDescs or (name, shape) pairs."""
    if shapes is None:
        return []
    out = []
    for s in shapes:
        if isinstance(s, DataDesc):
            out.append(s)
        elif isinstance(s, (tuple, list)) and len(s) == 2 and isinstance(s[0], str):
            out.append(DataDesc(s[0], tuple(s[1])))
        else:
            raise TypeError('%s: expected DataDesc or (name, shape) entries, got %r' % (what, s))
    return out


def _batch_axis(desc):
    """The axis the C++ group splits an input along: its layout's 'N' where the layout fits
    the shape, else 0."""
    return max(DataDesc.get_batch_axis(_desc(desc)[3]), 0)


class _Shapes(object):
    """What the C++ group reads of an iterator: the descriptions, the batch size and the
    default bucket's key."""

    def __init__(self, data_shapes, label_shapes, default_bucket_key=None):
        self.provide_data = data_shapes
        self.provide_label = label_shapes
        self.batch_size = data_shapes[0].shape[_batch_axis(data_shapes[0])]
        self.default_bucket_key = default_bucket_key


class _WithStates(object):
    """A batch with the state inputs' whole-batch arrays after its data (Note [State inputs])."""

    def __init__(self, batch, arrays, descs):
        self.data = list(batch.data) + list(arrays)
        self.label = getattr(batch, 'label', None)
        self.pad = getattr(batch, 'pad', 0)
        self.bucket_key = getattr(batch, 'bucket_key', None)
        provide_data = getattr(batch, 'provide_data', None)
        self.provide_data = list(provide_data) + list(descs) if provide_data else None
        self.provide_label = getattr(batch, 'provide_label', None)


class _Quiet(object):
    """MXNet's module group logs nothing when it binds."""

    def info(self, *args, **kwargs):
        pass


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """Per device, a dict of ctx_group to Context (MXNet's): group2ctxs is a list of such dicts
    (one per device), or one dict whose values are a Context or a list of one or ctx_len."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise AssertionError('length of group2ctxs should be %d' % ctx_len)
        return group2ctxs
    if isinstance(group2ctxs, dict):
        ret = [{} for _ in range(ctx_len)]
        for k, v in group2ctxs.items():
            if isinstance(v, ctx_mod.Context):
                ctxs = [v] * ctx_len
            elif len(v) == 1:
                ctxs = list(v) * ctx_len
            else:
                if len(v) != ctx_len:
                    raise AssertionError('length of group2ctxs[%s] should be %d or 1'
                                         % (k, ctx_len))
                ctxs = v
            for i in range(ctx_len):
                ret[i][k] = ctxs[i]
        return ret
    raise AssertionError('group2ctxs should be list of dict of str to context, or dict of str '
                         'to context or list of context')


class DataParallelExecutorGroup(object):
    """The executors of `symbol` on `contexts` (workload: each one's share of a batch) for the
    given input shapes; the parameters of param_names less fixed_param_names get gradients."""

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req='write', state_names=None, group2ctxs=None,
                 _buckets=None):
        if shared_group is not None:
            raise MXNetError('shared_group is not supported: a group binds its own memory')
        if grad_req not in ('write', 'add'):
            raise MXNetError("grad_req %r: Cohort's executor group takes 'write' or 'add' for "
                             "every parameter" % (grad_req,))
        self.grad_req = grad_req
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        # Note [State inputs]: inputs the caller sets between batches (an RNN's begin states).
        self.state_names = list(state_names or [])
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload) if workload else [1] * len(self.contexts)
        self.logger = logger
        self.for_training = for_training
        self.inputs_need_grad = bool(inputs_need_grad)
        self.fixed_param_names = list(fixed_param_names or [])
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        # The parameters with gradients, in the order of param_arrays and grad_arrays.
        self.param_names = [n for n in param_names if n not in self.fixed_param_names]
        self.output_names = symbol.list_outputs()
        # Each output is split over the devices along its node's __layout__ 'N' (MXNet's).
        self.output_layouts = [max(DataDesc.get_batch_axis(symbol[i].attr('__layout__')), 0)
                               for i in range(len(self.output_names))]
        self._buckets = _buckets  # (sym_gen over integer keys, default key): BucketingModule's
        self.bind_exec(data_shapes, label_shapes)

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Binds (or rebinds, for reshape) the executors for these input shapes."""
        self.data_shapes = _descs(data_shapes, 'data_shapes')
        self.label_shapes = _descs(label_shapes, 'label_shapes')
        self.data_layouts = [_batch_axis(d) for d in self.data_shapes]
        self.batch_size = self.data_shapes[0].shape[self.data_layouts[0]]
        sym_gen, default_key = self._buckets or (None, None)
        self._bind_states()
        self._manager = DataParallelExecutorManager(
            self.symbol, self.contexts,
            _Shapes(self.data_shapes + self._state_descs, self.label_shapes, default_key),
            self.arg_names, self.param_names, self.aux_names, work_load_list=self.workload,
            logger=_Quiet(), sym_gen=sym_gen,
            _inputs_need_grad=self.for_training and self.inputs_need_grad,
            _grad_req=self.grad_req, _group2ctxs=self.group2ctxs)
        self.slices = self._manager.slices

    # Note [State inputs]
    # MXNet's state_names are inputs that are neither data nor parameters: each device's executor
    # holds its samples' rows of them, which stay as set_states left them from batch to batch.
    # Here each state is one array of the whole batch (its shape inferred from the data's, its
    # batch axis that of its '__layout__', 'NC' for an RNN cell's state), handed to the manager
    # beside the data of every batch, so the devices take their rows of it as they take the
    # data's; set_states writes it (a value, or the devices' parts) and get_states reads it.
    def _bind_states(self):
        self._state_descs, self._state_arrays = [], []
        if not self.state_names:
            return
        shapes = {d.name: tuple(d.shape) for d in self.data_shapes + self.label_shapes}
        arg_shapes, _, _ = self.symbol.infer_shape_partial(**shapes)
        by_name = dict(zip(self.arg_names, arg_shapes))
        for name in self.state_names:
            shape = by_name.get(name)
            if not shape or 0 in shape:
                raise MXNetError("state '%s': its shape does not follow from the data shapes "
                                 "(give the variable a shape)" % name)
            layout = self.symbol.get_internals()[name].attr('__layout__') or 'NC'
            self._state_descs.append(DataDesc(name, shape, layout=layout))
            self._state_arrays.append(nd.zeros(shape))

    def reshape(self, data_shapes, label_shapes):
        """Rebinds for other shapes (the caller copies the parameters over)."""
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    # ---- parameters
    @property
    def param_arrays(self):
        """[parameter][device] arrays, in param_names order."""
        return self._manager.param_arrays

    @property
    def grad_arrays(self):
        return self._manager.grad_arrays

    @property
    def aux_arrays(self):
        return self._manager.aux_arrays

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copies the given values to every device; a name the network lacks is a ValueError
        unless allow_extra (MXNet's copy_params_from)."""
        known = set(self.arg_names) | set(self.aux_names)
        if not allow_extra:
            for name in sorted(list(arg_params or {}) + list(aux_params or {})):
                if name not in known:
                    raise ValueError('Find name "%s" that is not in the arguments (pass '
                                     'allow_extra=True to ignore it)' % name)
        self._manager.set_params({k: v for k, v in (arg_params or {}).items() if k in known},
                                 {k: v for k, v in (aux_params or {}).items() if k in known})

    def get_params(self, arg_params, aux_params):
        """Writes each parameter's mean over the devices into arg_params[name] and
        aux_params[name] (NDArrays, in place)."""
        self._manager.copy_to(arg_params, aux_params)

    # ---- a step
    def forward(self, data_batch, is_train=None):
        if self.state_names:  # Note [State inputs]
            data_batch = _WithStates(data_batch, self._state_arrays, self._state_descs)
        self._manager.load_data_batch(data_batch)
        self._manager.forward(self.for_training if is_train is None else is_train)

    def backward(self, out_grads=None):
        """Backward on every device; out_grads: head gradients of the whole batch."""
        if not self.for_training:
            raise AssertionError('re-bind with for_training=True to run backward')
        if isinstance(out_grads, nd.NDArray):
            out_grads = [out_grads]
        self._manager.backward(out_grads)

    def get_output_shapes(self):
        shapes = {d.name: tuple(d.shape) for d in self.data_shapes + self.label_shapes}
        _, out_shapes, _ = self.symbol.infer_shape(**shapes)
        return list(zip(self.output_names, out_shapes))

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """The outputs: merged over the devices (along each output's batch axis), or per
        output a list of the devices' parts."""
        per_device = self._manager.outputs
        count = len(per_device[0])
        end = count if end is None else end
        outputs = [[dev[i] for dev in per_device] for i in range(begin, end)]
        if not merge_multi_context:
            return outputs
        return [self._merge_output(i, parts) for i, parts in enumerate(outputs, begin)]

    def _merge_output(self, index, parts):
        """The devices' parts of output `index` joined along its batch axis: by the C++ group
        (any dtype) where each part holds its device's samples, else concatenated as MXNet's
        _merge_multi_context does (a loss's one value a device)."""
        if len(parts) == 1:
            return parts[0]
        axis = self.output_layouts[index]
        if all(len(p.shape) > axis and p.shape[axis] == end - begin
               for p, (begin, end) in zip(parts, self._slice_bounds())):
            return self._manager.merged_output(index)
        return nd.concat(*parts, dim=axis)

    def _slice_bounds(self):
        return [(s.start, s.stop) if isinstance(s, slice) else tuple(s) for s in self.slices]

    def _state_parts(self, index):
        """The devices' rows of state `index` (copies of its whole-batch array's rows)."""
        axis = _batch_axis(self._state_descs[index])
        whole = self._state_arrays[index]
        return [nd.slice_axis(whole, axis=axis, begin=b, end=e)
                for b, e in self._slice_bounds()]

    def get_states(self, merge_multi_context=True):
        """Each state: the whole batch's array, or without merge_multi_context a list of the
        devices' rows (Note [State inputs])."""
        if merge_multi_context:
            return [a.copy() for a in self._state_arrays]
        return [self._state_parts(i) for i in range(len(self.state_names))]

    def set_states(self, states=None, value=None):
        """Sets every state to `value`, or to `states`: per state a list of the devices' rows
        (get_outputs(merge_multi_context=False)'s form) or one array of the whole batch."""
        if (states is None) == (value is None):
            raise AssertionError('set_states: give states or value, not both')
        if value is not None:
            for a in self._state_arrays:
                a[:] = value
            return
        if len(states) != len(self.state_names):
            raise ValueError('set_states: %d states given for %d state inputs %s'
                             % (len(states), len(self.state_names), self.state_names))
        for i, given in enumerate(states):
            whole = self._state_arrays[i]
            if isinstance(given, nd.NDArray):
                whole[:] = given
                continue
            axis = _batch_axis(self._state_descs[i])
            parts = [p.as_in_context(whole.context) for p in given]
            whole[:] = parts[0] if len(parts) == 1 else nd.concat(*parts, dim=axis)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._manager.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        self._manager.install_monitor(mon)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs: per input, the whole batch's (devices' rows
        concatenated) or [input][device] without merge_multi_context."""
        if not self.inputs_need_grad:
            raise AssertionError('get_input_grads: bind with inputs_need_grad=True')
        execs = self.execs
        grads = [[e.grad_dict[d.name] for e in execs] for d in self.data_shapes]
        if not merge_multi_context:
            return grads
        return [g[0] if len(g) == 1 else nd.concat(*g, dim=axis)
                for g, axis in zip(grads, self.data_layouts)]

    @property
    def execs(self):
        """Each context's Executor (arg_dict, grad_dict, outputs, ...), as MXNet's."""
        return self._manager.execs
