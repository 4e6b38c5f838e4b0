"""MXNet 1.x's mxnet.module.bucketing_module: BucketingModule, a network whose graph depends on a
bucket key (a sequence length), every bucket sharing one set of parameters.

MXNet keeps one Module per bucket, each bound with the default bucket's module as its shared
module. Here one Module runs over Cohort's C++ manager, which binds a group per bucket on first
use sharing the default bucket's parameter and gradient arrays and its memory
(executor_manager/executor_group.h); batches switch bucket by their bucket_key, as MXNet's
forward does. Keys may be any hashable value: the manager sees integers, a non-negative int key
as itself (so a native iterator's batches, whose bucket_key is their length, switch buckets in
the C++ loop too), any other key as _OTHER_KEYS plus its place in the order first seen."""
import logging

from .. import context as ctx_mod
from ..model import load_checkpoint
from .base_module import BaseModule
from .module import Module

__all__ = ['BucketingModule']

_OTHER_KEYS = 1 << 62  # the manager's integers for keys that are not non-negative ints


def _is_int_key(key):
    return isinstance(key, int) and not isinstance(key, bool) and 0 <= key < _OTHER_KEYS


def _module_flag(name):
    """A flag of the Module underneath (False before it is made: BaseModule.__init__ sets the
    flags first)."""
    def get(self):
        return getattr(self._module, name) if '_module' in self.__dict__ else False

    def set(self, value):
        if '_module' in self.__dict__:
            setattr(self._module, name, value)
    return property(get, set)


class _KeyedBatch(object):
    """A batch with its bucket key replaced by the manager's integer for it."""

    def __init__(self, batch, key_id):
        self.data = batch.data
        self.label = getattr(batch, 'label', None)
        self.pad = getattr(batch, 'pad', 0)
        self.provide_data = getattr(batch, 'provide_data', None)
        self.provide_label = getattr(batch, 'provide_label', None)
        self.bucket_key = key_id


class BucketingModule(BaseModule):
    """sym_gen(bucket_key) -> (symbol, data_names, label_names); default_bucket_key is the
    bucket bind() binds (the largest, as MXNet advises, so others fit its memory)."""

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=ctx_mod.cpu(),
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super(BucketingModule, self).__init__(logger=logger)
        if default_bucket_key is None:
            raise AssertionError('BucketingModule: default_bucket_key is required')
        if not callable(sym_gen):
            raise TypeError('BucketingModule: sym_gen must be callable, got %r' % (sym_gen,))
        self._sym_gen = sym_gen
        self._default_bucket_key = default_bucket_key
        self._other_keys = []  # keys that are not ints, in the order first seen
        self._generated = {}
        symbol, data_names, label_names = self._generate(default_bucket_key)
        self._module = Module(symbol, data_names, label_names, logger=logger, context=context,
                              work_load_list=work_load_list,
                              fixed_param_names=fixed_param_names, state_names=state_names,
                              group2ctxs=group2ctxs, compression_params=compression_params)
        self._module._buckets = (self._symbol_of_id, self._id_of(default_bucket_key))
        self._curr_bucket_key = default_bucket_key
        # MXNet's bucket key -> Module of each bucket used so far: here the one Module, whose
        # manager keeps every bucket's executors (memory of the default bucket's shared).
        self._buckets = {}

    def _generate(self, key):
        if key not in self._generated:
            result = self._sym_gen(key)
            if not (isinstance(result, tuple) and len(result) == 3):
                raise TypeError('BucketingModule: sym_gen(%r) must return (symbol, data_names, '
                                'label_names), got %r' % (key, result))
            self._generated[key] = result
        return self._generated[key]

    def _key_of(self, key_id):
        return key_id if key_id < _OTHER_KEYS else self._other_keys[key_id - _OTHER_KEYS]

    def _symbol_of_id(self, key_id):
        key = self._key_of(key_id)
        symbol, data_names, label_names = self._generate(key)
        default = self._generated[self._default_bucket_key]
        if list(data_names or []) != list(default[1] or []) or \
                list(label_names or []) != list(default[2] or []):
            raise ValueError('BucketingModule: bucket %r names inputs %s/%s, the default bucket '
                             '%s/%s' % (key, data_names, label_names, default[1], default[2]))
        return symbol

    def _id_of(self, key):
        if _is_int_key(key):
            return key
        if key not in self._other_keys:
            self._other_keys.append(key)
        return _OTHER_KEYS + self._other_keys.index(key)

    # ---- the bucket
    @property
    def _curr_module(self):
        """The Module running the current bucket (its _exec_group.execs are the bucket's)."""
        return self._module

    @property
    def symbol(self):
        return self._generate(self._curr_bucket_key)[0]

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Makes bucket_key current; its graph is bound when its first batch comes."""
        if not self.binded:
            raise AssertionError('call bind before switching bucket')
        self._id_of(bucket_key)
        self._curr_bucket_key = bucket_key
        self._buckets[bucket_key] = self._module

    # ---- what the Module does, over every bucket
    binded = _module_flag('binded')
    params_initialized = _module_flag('params_initialized')
    optimizer_initialized = _module_flag('optimizer_initialized')
    for_training = _module_flag('for_training')
    inputs_need_grad = _module_flag('inputs_need_grad')
    data_names = property(lambda self: self._module.data_names)
    output_names = property(lambda self: self._module.output_names)
    data_shapes = property(lambda self: self._module.data_shapes)
    label_shapes = property(lambda self: self._module.label_shapes)
    output_shapes = property(lambda self: self._module.output_shapes)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Binds the default bucket for these shapes (its batch size is every bucket's)."""
        if shared_module is not None:
            raise AssertionError('BucketingModule: shared_module is not supported')
        self._module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                          force_rebind=force_rebind, grad_req=grad_req)
        self._curr_bucket_key = self._default_bucket_key
        self._buckets = {self._default_bucket_key: self._module}

    def init_params(self, *args, **kwargs):
        self._module.init_params(*args, **kwargs)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        self._module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                force_init=force_init, allow_extra=allow_extra)

    def get_params(self):
        return self._module.get_params()

    def init_optimizer(self, *args, **kwargs):
        self._module.init_optimizer(*args, **kwargs)

    def forward(self, data_batch, is_train=None):
        """Runs the batch in its bucket (bucket_key; the default bucket without one), binding
        the bucket on its first batch from the batch's provide_data."""
        key = getattr(data_batch, 'bucket_key', None)
        if key is None:
            key = self._default_bucket_key
        self._curr_bucket_key = key
        self._buckets[key] = self._module
        self._module.forward(_KeyedBatch(data_batch, self._id_of(key)), is_train)

    def backward(self, out_grads=None):
        self._module.backward(out_grads)

    def update(self):
        self._module.update()

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._module.update_metric(eval_metric, labels, pre_sliced)

    def get_outputs(self, merge_multi_context=True):
        return self._module.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        return self._module.get_input_grads(merge_multi_context)

    def get_states(self, merge_multi_context=True):
        return self._module.get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        self._module.set_states(states, value)

    def install_monitor(self, mon):
        self._module.install_monitor(mon)

    def save_optimizer_states(self, fname):
        self._module.save_optimizer_states(fname)

    def load_optimizer_states(self, fname):
        self._module.load_optimizer_states(fname)

    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False, save_optimizer_states=False):
        """The default bucket's symbol, the parameters (and optimizer states), as MXNet's."""
        self._module.save_checkpoint(prefix, epoch, save_optimizer_states=save_optimizer_states)

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, load_optimizer_states=False,
             **kwargs):
        """A BucketingModule with PREFIX-EPOCH.params as its parameters."""
        if sym_gen is None or default_bucket_key is None:
            raise AssertionError('BucketingModule.load: sym_gen and default_bucket_key are '
                                 'required')
        _, args, auxs = load_checkpoint(prefix, epoch)
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        mod._module._arg_params, mod._module._aux_params = args, auxs
        mod._module.params_initialized = True
        if load_optimizer_states:
            mod._module._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod
