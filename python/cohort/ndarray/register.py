"""One function per registered operator (cohort.nd.FullyConnected, cohort.nd.relu, ...), made at
import from the C++ registry, and MXNet's fluent methods (x.sum(), x.argmax(axis=1))."""
import types

from .. import _cohort
from .._ops import attrs_of, describe, register_operators, split_positional
from .ndarray import NDArray, invoke

# NDArray methods that call the operator of the same name on the array (MXNet's fluent methods).
FLUENT = ['abs', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'argmax',
          'argmax_channel', 'argmin', 'argsort', 'broadcast_axes', 'broadcast_like',
          'broadcast_to', 'cbrt', 'ceil', 'clip', 'cos', 'cosh', 'degrees', 'exp', 'expand_dims',
          'expm1', 'fix', 'flatten', 'flip', 'floor', 'log', 'log10', 'log1p', 'log2',
          'log_softmax', 'max', 'mean', 'min', 'nanprod', 'nansum', 'norm', 'one_hot', 'ones_like',
          'pad', 'pick', 'prod', 'radians', 'rcbrt', 'reciprocal', 'relu', 'repeat', 'reshape',
          'reshape_like', 'rint', 'round', 'rsqrt', 'shape_array', 'sigmoid', 'sign', 'sin',
          'sinh', 'size_array', 'slice', 'slice_axis', 'slice_like', 'softmax', 'softmin', 'sort',
          'split', 'sqrt', 'square', 'squeeze', 'sum', 'swapaxes', 'take', 'tan', 'tanh', 'tile',
          'topk', 'transpose', 'trunc', 'zeros_like']


def make_function(op):
    """cohort.nd.<op>(*arrays, out=None, ctx=None, name=None, **attributes)."""

    def function(*args, **kwargs):
        out = kwargs.pop('out', None)
        kwargs.pop('name', None)
        ctx = kwargs.pop('ctx', None)
        args, kwargs = split_positional(op, args, kwargs, lambda a: isinstance(a, NDArray))
        arrays = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
        attributes = {k: v for k, v in kwargs.items() if not isinstance(v, NDArray)}
        inputs = list(args)
        if arrays:
            arguments, auxiliary, _ = _cohort.op_signature(op, attrs_of(attributes, op))
            slots = list(arguments) + list(auxiliary)
            unknown = sorted(set(arrays) - set(slots))
            if unknown:
                raise TypeError('%s has no input %s (its inputs: %s)'
                                % (op, ', '.join(unknown), ', '.join(slots)))
            for slot in slots[len(inputs):]:
                if slot not in arrays:
                    break
                inputs.append(arrays.pop(slot))
            if arrays:
                raise TypeError('%s: inputs %s given without the ones before them (%s)'
                                % (op, ', '.join(sorted(arrays)), ', '.join(slots)))
        if op in ('Concat', 'concat', 'add_n', 'ElementWiseSum') and 'num_args' not in attributes:
            attributes['num_args'] = len(inputs)
        return invoke(op, inputs, out=out, ctx=ctx, **attributes)

    function.__name__ = op
    function.__qualname__ = op
    describe(function, op, 'NDArray',
             'Runs the %s operator on NDArrays (inputs by position or by name, then parameters '
             'by position or keyword); returns its output, or a list of outputs.' % op)
    return function


def register(namespace, internal, contrib):
    register_operators(namespace, internal, make_function, NDArray, FLUENT, contrib)


_internal = types.ModuleType('cohort.ndarray._internal', 'Operators whose names start with _')
