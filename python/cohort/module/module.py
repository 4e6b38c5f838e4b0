"""MXNet 1.x's mxnet.module.module: Module, a symbol bound over devices with its parameters,
optimizer and kvstore (BaseModule's fit, score and predict in base_module.py).

Every step runs in Cohort's C++ core: binding, slicing batches over devices, forward, backward
and metric updates are the executor group's (executor_group.py over the C++ group of
executor_manager/executor_group.h, as `mod._exec_group`),
gradients are summed by cohort.kv's C++ store, and the optimizer's rules are the update
operators. What is Python here is MXNet's arrangement of those calls: Module.update follows
MXNet's Module (the kvstore updates when it can, update_on_kvstore; else the summed gradients
update each device's copy through the optimizer's Updater)."""
import logging
import os
import warnings

from .. import context as ctx_mod
from .. import initializer as init_mod
from .. import kvstore as kvs
from .. import ndarray as nd
from .. import optimizer as opt
from ..base import MXNetError
from ..util import keywords_checked
from ..io import DataDesc
from ..model import load_checkpoint, save_checkpoint
from ..symbol import Symbol
from .base_module import BaseModule
from .executor_group import DataParallelExecutorGroup, _descs

__all__ = ['Module']


class Module(BaseModule):
    """A symbol over one or more devices (context: a Context or a list), with MXNet 1.x's
    Module API."""

    @keywords_checked
    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx_mod.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super(Module, self).__init__(logger=logger)
        if not isinstance(symbol, Symbol):
            raise TypeError('Module: symbol must be a Symbol, got %s' % type(symbol).__name__)
        if isinstance(context, ctx_mod.Context):
            context = [context]
        self._context = list(context)
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise AssertionError('work_load_list: %d entries for %d contexts'
                                 % (len(work_load_list), len(self._context)))
        self._group2ctxs = group2ctxs
        self._work_load_list = work_load_list
        self._symbol = symbol
        self._data_names = list(data_names or [])
        self._label_names = list(label_names or [])
        self._state_names = list(state_names or [])
        self._fixed_param_names = list(fixed_param_names or [])
        arg_names = symbol.list_arguments()
        inputs = self._data_names + self._label_names + self._state_names
        for name in inputs:
            if name not in arg_names:
                if name in self._label_names:
                    continue  # MXNet warns and drops a label the symbol does not take
                raise ValueError('Module: %r is not an argument of the symbol (its arguments: '
                                 '%s)' % (name, ', '.join(arg_names)))
        self._label_names = [n for n in self._label_names if n in arg_names]
        self._param_names = [n for n in arg_names if n not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params = self._aux_params = None
        self._params_dirty = False
        self._exec_group = None
        self._optimizer = self._kvstore = self._updater = None
        self._update_on_kvstore = None
        self._data_shapes = self._label_shapes = None
        # Set by BucketingModule: (sym_gen over integer keys, the default key). The manager then
        # binds a group per bucket sharing the parameters, and batches switch by bucket_key.
        self._buckets = None
        self._grad_req = None
        self._native_trainer = None  # fit's C++ trainer, once fit ran on it

    # ---- descriptions
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module of PREFIX-symbol.json with PREFIX-EPOCH.params as its parameters (and the
        optimizer states of PREFIX-EPOCH.states for init_optimizer)."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """PREFIX-symbol.json and PREFIX-EPOCH.params (and .states)."""
        self._symbol.save('%s-symbol.json' % prefix)
        arg_params, aux_params = self.get_params()
        save_checkpoint(prefix, epoch, None, arg_params, aux_params)
        if save_optimizer_states:
            self.save_optimizer_states('%s-%04d.states' % (prefix, epoch))
            logging.info('Saved optimizer state to "%s-%04d.states"', prefix, epoch)

    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        self._check_bound('data_shapes')
        return self._data_shapes

    @property
    def label_shapes(self):
        self._check_bound('label_shapes')
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check_bound('output_shapes')
        return self._exec_group.get_output_shapes()

    def _check_bound(self, what):
        if not self.binded:
            raise AssertionError('%s: call bind first' % what)

    # ---- parameters
    def get_params(self):
        """(arg_params, aux_params): the parameters, averaged over the devices, on the CPU."""
        if not (self.binded and self.params_initialized):
            raise AssertionError('get_params: bind the module and initialise its parameters')
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)

    def init_params(self, initializer=init_mod.Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Fills the parameters: from arg_params/aux_params where given, else the initializer
        (a variable's __init__ attribute first)."""
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. init_params '
                          'call ignored.', stacklevel=2)
            return
        self._check_bound('init_params')
        if self._arg_params is None:
            self._arg_params = {n: nd.zeros(s.shape, dtype=s.dtype)
                                for n, s in zip(self._param_names, self._param_descs)}
            self._aux_params = {n: nd.zeros(s.shape, dtype=s.dtype)
                                for n, s in zip(self._aux_names, self._aux_descs)}
        attrs = self._symbol.attr_dict()

        def fill(name, arr, given):
            if given is not None and name in given:
                source = given[name]
                if source is not arr:
                    if source.shape != arr.shape:
                        raise MXNetError('init_params: %s has shape %s in the given '
                                         'parameters, %s in the network'
                                         % (name, source.shape, arr.shape))
                    source.copyto(arr)
            elif given is not None and not allow_missing:
                raise RuntimeError('%s is not presented' % name)
            elif initializer is not None:
                initializer(init_mod.InitDesc(name, attrs.get(name, None)), arr)

        for name, arr in sorted(self._arg_params.items()):
            fill(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            fill(name, arr, aux_params)
        if not allow_extra:
            extra = [n for n in (arg_params or {}) if n not in self._arg_params] + \
                [n for n in (aux_params or {}) if n not in self._aux_params]
            if extra:
                raise ValueError('init_params: the network has no parameter named %s (pass '
                                 'allow_extra=True to ignore them)' % ', '.join(sorted(extra)))
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Sets the parameters (every one unless allow_missing) on every device."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn('Parameters already initialized and force_init=False. set_params '
                          'call ignored.', stacklevel=2)
            return
        self._check_bound('set_params')
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # ---- binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Binds the symbol over the contexts for these input shapes (batch axis first)."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if shared_module is not None:
            raise MXNetError('bind: shared_module is not supported; BucketingModule shares '
                             'parameters between buckets')
        if grad_req not in ('write', 'add'):
            raise MXNetError("bind: grad_req %r: Cohort's Module takes 'write' or 'add' (add "
                             'accumulates until you zero the gradients)' % (grad_req,))
        self._grad_req = grad_req
        self._data_shapes = _descs(data_shapes, 'data_shapes')
        self._label_shapes = _descs(label_shapes, 'label_shapes')
        names = [d.name for d in self._data_shapes]
        if names != self._data_names:
            raise ValueError('bind: data_shapes name %s, the module takes %s'
                             % (names, self._data_names))
        self.for_training = for_training
        self.inputs_need_grad = bool(inputs_need_grad)
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            logger=self.logger, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names, group2ctxs=self._group2ctxs, _buckets=self._buckets)
        self._trained_names = self._exec_group.param_names
        self._total_exec_bytes = self._exec_group._manager._handle.planned_bytes
        shapes = {d.name: tuple(d.shape) for d in self._data_shapes + self._label_shapes}
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**shapes)
        arg_types, _, aux_types = self._symbol.infer_type(
            **{d.name: d.dtype for d in self._data_shapes + self._label_shapes})
        by_name = dict(zip(self._symbol.list_arguments(), zip(arg_shapes, arg_types)))
        self._param_descs = [DataDesc(n, by_name[n][0], by_name[n][1])
                             for n in self._param_names]
        self._aux_descs = [DataDesc(n, s, t)
                           for n, s, t in zip(self._aux_names, aux_shapes, aux_types)]
        self.binded = True
        if self.params_initialized:  # parameters loaded before binding (Module.load)
            self._exec_group.set_params(self._arg_params, self._aux_params)

    def reshape(self, data_shapes, label_shapes=None):
        """Rebinds for other input shapes, keeping the parameters and the optimizer."""
        self._check_bound('reshape')
        if self._params_dirty:
            self._sync_params_from_devices()
        self.binded = False
        self.bind(data_shapes, label_shapes, for_training=self.for_training)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None

    # ---- optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """The optimizer (a name with optimizer_params, or an Optimizer) and the kvstore that
        sums the devices' gradients; rescale_grad defaults to 1 / the batch size."""
        if not (self.binded and self.params_initialized):
            raise AssertionError('init_optimizer: bind the module and initialise its parameters')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        self._native_trainer = None
        if self._params_dirty:
            self._sync_params_from_devices()
        kv, update_on_kvstore = self._create_kvstore(kvstore)
        batch_size = self._data_shapes[0].shape[0]
        if kv and kvs.sums_across_workers(kv.type):
            batch_size *= kv.num_workers
        rescale_grad = 1.0 / batch_size
        num_device = len(self._context)
        if update_on_kvstore:
            idx2name = dict(enumerate(self._trained_names))
        else:
            idx2name = {i * num_device + k: n for i, n in enumerate(self._trained_names)
                        for k in range(num_device)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault('rescale_grad', rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        elif isinstance(optimizer, opt.Optimizer):
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn('Optimizer created manually outside Module but rescale_grad is '
                              'not normalized to 1.0/batch_size/num_workers (%s vs. %s). Is '
                              'this intended?' % (optimizer.rescale_grad, rescale_grad),
                              stacklevel=2)
        else:
            raise TypeError('init_optimizer: optimizer must be a name or an Optimizer, got %s'
                            % type(optimizer).__name__)
        self._optimizer, self._kvstore = optimizer, kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kv:
            for i, name in enumerate(self._trained_names):
                kv.init(name, self._arg_params[name])
            if update_on_kvstore:
                kv.set_optimizer(optimizer)
                for i, name in enumerate(self._trained_names):
                    kv.pull(name, self._exec_group.param_arrays[i], priority=-i)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        preload = getattr(self, '_preload_opt_states', None)
        if preload is not None:
            self.load_optimizer_states(preload)
            self._preload_opt_states = None

    def _create_kvstore(self, kvstore):
        """(kvstore or None, update_on_kvstore) as MXNet's Module makes them: no store for one
        device, and the store updates the weights unless MXNET_UPDATE_ON_KVSTORE=0 (then the
        summed gradients update each device's copy). Without a store each device updates with
        its own gradient, as in MXNet."""
        update_on_kvstore = bool(int(os.getenv('MXNET_UPDATE_ON_KVSTORE', '1')))
        if isinstance(kvstore, kvs.KVStore):
            return kvstore, update_on_kvstore
        if kvstore is None:
            return None, False
        if not isinstance(kvstore, str):
            raise TypeError('kvstore must be a KVStore, a str or None')
        if len(self._context) == 1 and not kvs.sums_across_workers(kvstore):
            return None, False  # one device: nothing to sum
        return kvs.create(kvstore), update_on_kvstore

    # ---- a step
    def forward(self, data_batch, is_train=None):
        """Runs the batch (its data, and labels when training) through every device; a batch
        of other shapes (predict's last, another batch size) rebinds first, as MXNet's."""
        self._check_bound('forward')
        if not self.params_initialized:
            raise AssertionError('forward: initialise the parameters first')
        shapes = [tuple(d.shape) for d in data_batch.data]
        keyed = self._buckets is not None and getattr(data_batch, 'bucket_key', None) is not None
        if not keyed and shapes != [tuple(d.shape) for d in self._data_shapes]:
            names = [d.name for d in self._data_shapes]
            label = getattr(data_batch, 'label', None) or []
            label_shapes = [(d.name, tuple(l.shape))
                            for d, l in zip(self._label_shapes, label)] or None
            self.reshape(list(zip(names, shapes)), label_shapes)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward on every device: out_grads (an array or a list, one per output, of the
        whole batch) for outputs that are not losses."""
        self._check_bound('backward')
        self._exec_group.backward(out_grads)

    def update(self):
        """Applies the gradients: on the kvstore, or through the updater after summing them."""
        if not (self.binded and self.params_initialized and self.optimizer_initialized):
            raise AssertionError('update: bind, init_params and init_optimizer first')
        self._check_not_native('update')
        self._params_dirty = True
        params, grads = self._exec_group.param_arrays, self._exec_group.grad_arrays
        if self._update_on_kvstore:
            for i, name in enumerate(self._trained_names):
                self._kvstore.push(name, grads[i], priority=-i)
                self._kvstore.pull(name, params[i], priority=-i)
            return
        num_device = len(self._context)
        for i, name in enumerate(self._trained_names):
            if self._kvstore:
                self._kvstore.push(name, grads[i], priority=-i)
                self._kvstore.pull(name, grads[i], priority=-i)
            for k, (w, g) in enumerate(zip(params[i], grads[i])):
                self._updater(i * num_device + k, g, w)

    def _check_not_native(self, what):
        if self._native_trainer is not None:
            raise MXNetError('%s: fit trained on the C++ loop, whose optimizer holds the state; '
                             'call init_optimizer(force_init=True) to go on step by step (the '
                             'optimizer state starts afresh)' % what)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def get_outputs(self, merge_multi_context=True):
        """The outputs: merged over the devices (batch axis first), or a list per output of
        the devices' parts."""
        self._check_bound('get_outputs')
        return self._exec_group.get_outputs(merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """The state inputs (state_names): each the whole batch's, or a list of the devices'
        parts without merge_multi_context."""
        self._check_bound('get_states')
        return self._exec_group.get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        """Sets the state inputs to `value`, or to `states` (per state the devices' parts, as
        get_outputs(merge_multi_context=False) gives them, or the whole batch's array)."""
        self._check_bound('set_states')
        self._exec_group.set_states(states, value)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs after backward (bind with inputs_need_grad)."""
        if not (self.binded and self.params_initialized and self.inputs_need_grad):
            raise AssertionError('get_input_grads: bind with inputs_need_grad=True and '
                                 'initialise the parameters first')
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def install_monitor(self, mon):
        self._check_bound('install_monitor')
        self._exec_group.install_monitor(mon)

    def save_optimizer_states(self, fname):
        """The optimizer's states (the kvstore's or the updater's) into fname."""
        if not self.optimizer_initialized:
            raise AssertionError('save_optimizer_states: call init_optimizer first')
        if self._native_trainer is not None:  # fit's C++ loop holds them (its .states format)
            self._native_trainer.save_optimizer_states(fname)
            return
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, 'wb') as fout:
                fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Optimizer states from a save_optimizer_states file."""
        if not self.optimizer_initialized:
            raise AssertionError('load_optimizer_states: call init_optimizer first')
        self._check_not_native('load_optimizer_states')
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, 'rb') as fin:
                self._updater.set_states(fin.read())
