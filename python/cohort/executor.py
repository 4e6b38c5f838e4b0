"""Executor (MXNet 1.x's mxnet.executor.Executor): a symbol bound to arrays on one device, run
forward and backward by Cohort's C++ executor (the GIL released while it runs)."""
import numpy as np

from .base import MXNetError
from .context import Context
from .ndarray import NDArray
from .ndarray.ndarray import array

__all__ = ['Executor']


def _check_ctx(ctx):
    if not isinstance(ctx, Context):
        raise TypeError('ctx: expected a Context such as cpu(0), got %r' % (ctx,))
    return ctx


def _arrays_in_order(arrays, names, what, allow_missing=False):
    """A list or dict of NDArrays as a list in `names` order (None where allowed missing)."""
    if isinstance(arrays, dict):
        unknown = sorted(set(arrays) - set(names))
        if unknown:
            raise ValueError('%s: %s are not among %s' % (what, ', '.join(unknown), names))
        out = []
        for n in names:
            if n not in arrays:
                if allow_missing:
                    out.append(None)
                    continue
                raise ValueError('key `%s` is missing in `%s`' % (n, what))
            out.append(arrays[n])
    elif isinstance(arrays, (list, tuple)):
        if len(arrays) != len(names):
            raise ValueError('Length of %s do not match number of arguments (%d given, %d '
                             'expected: %s)' % (what, len(arrays), len(names), names))
        out = list(arrays)
    else:
        raise TypeError('Only accept list of NDArrays or dict of str to NDArray for %s' % what)
    for n, a in zip(names, out):
        if a is not None and not isinstance(a, NDArray):
            raise TypeError('%s: %s must be an NDArray, got %s' % (what, n, type(a).__name__))
    return out


class Executor:
    """Made by Symbol.bind and Symbol.simple_bind. The bound arrays are fixed for the
    executor's life: arg_dict['data'][:] = batch writes into the array forward reads."""

    def __init__(self, handle, symbol, ctx, args_grad=None):
        self._handle = handle
        self._symbol = symbol
        self._ctx = ctx
        self.arg_arrays = [NDArray(h) for h in handle.arg_arrays]
        reqs = handle.grad_reqs
        self.grad_arrays = [None if r == 'null' or h.is_none else NDArray(h)
                            for h, r in zip(handle.grad_arrays, reqs)]
        if args_grad is not None:  # the caller's own gradient arrays, as given to bind
            self.grad_arrays = [g if g is not None and r != 'null' else None
                                for g, r in zip(args_grad, reqs)]
        self.aux_arrays = [NDArray(h) for h in handle.aux_arrays]
        self.outputs = [NDArray(h) for h in handle.outputs]
        self._arg_dict = self._grad_dict = self._aux_dict = self._output_dict = None
        self._monitor_callback = None

    def forward(self, is_train=False, **kwargs):
        """Copies the keyword arrays into the arguments of those names, runs the graph, and
        returns the outputs."""
        if kwargs:
            arg_dict = self.arg_dict
            for name, value in kwargs.items():
                if not isinstance(value, (NDArray, np.ndarray)):
                    raise ValueError('only accept keyword argument of NDArrays and numpy.ndarray')
                if name not in arg_dict:
                    raise TypeError('Unknown argument %s' % name)
                if arg_dict[name].shape != value.shape:
                    raise ValueError('Shape not match! Argument %s, need: %s, received: %s'
                                     % (name, str(arg_dict[name].shape), str(value.shape)))
                if isinstance(value, NDArray):
                    value.copyto(arg_dict[name])
                else:
                    arg_dict[name][:] = value
        self._handle.forward(bool(is_train))
        return self.outputs

    def backward(self, out_grads=None, is_train=True):
        """Gradients of the arguments into grad_arrays; out_grads: the head gradients of outputs
        that are not losses (one NDArray, or a list)."""
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads[k] for k in self._symbol.list_outputs()]
        for g in out_grads:
            if not isinstance(g, NDArray):
                raise TypeError('inputs must be NDArray')
        if not is_train:
            raise MXNetError('backward(is_train=False) is not supported: Cohort computes '
                             'gradients of training passes')
        self._handle.backward([g._handle for g in out_grads])

    def set_monitor_callback(self, callback, monitor_all=False):
        """callback(name, array) after each operator (monitor_all: its inputs too)."""
        if callback is None:
            self._handle.set_monitor_callback(None, bool(monitor_all))
            return
        if not callable(callback):
            raise TypeError('callback must be callable')
        self._monitor_callback = callback
        self._handle.set_monitor_callback(
            lambda name, handle: callback(name, NDArray(handle, writable=False)),
            bool(monitor_all))

    @property
    def arg_dict(self):
        if self._arg_dict is None:
            self._arg_dict = dict(zip(self._symbol.list_arguments(), self.arg_arrays))
        return self._arg_dict

    @property
    def grad_dict(self):
        if self._grad_dict is None:
            self._grad_dict = dict(zip(self._symbol.list_arguments(), self.grad_arrays))
        return self._grad_dict

    @property
    def aux_dict(self):
        if self._aux_dict is None:
            self._aux_dict = dict(zip(self._symbol.list_auxiliary_states(), self.aux_arrays))
        return self._aux_dict

    @property
    def output_dict(self):
        if self._output_dict is None:
            self._output_dict = dict(zip(self._symbol.list_outputs(), self.outputs))
        return self._output_dict

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copies parameters in by name; a name the executor lacks is an error unless
        allow_extra_params."""
        def handles(params, what):
            if params is None:
                return {}
            if not isinstance(params, dict):
                raise TypeError('%s: expected a dict of str to NDArray' % what)
            out = {}
            for k, v in params.items():
                if not isinstance(v, NDArray):
                    v = array(v)
                out[k] = v._handle
            return out
        self._handle.copy_params_from(handles(arg_params, 'arg_params'),
                                      handles(aux_params, 'aux_params'), bool(allow_extra_params))

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """An executor for new input shapes sharing this one's parameters and memory."""
        shapes = {k: tuple(v) for k, v in kwargs.items()}
        return Executor(self._handle.reshape(shapes, bool(partial_shaping), bool(allow_up_sizing)),
                        self._symbol, self._ctx)

    def debug_str(self):
        return self._handle.debug_str()

    def get_optimized_symbol(self):
        """The graph the executor runs: the bound symbol after the bind's passes (equal op
        nodes made one unless MXNET_ELIMINATE_COMMON_EXPR=0)."""
        return type(self._symbol)(self._handle.optimized_symbol)
