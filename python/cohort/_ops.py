"""What the generated operator functions of cohort.nd and cohort.sym share: the registry's names
and how Python values become the operators' string attributes (as MXNet writes them)."""
import ast
import inspect

import numpy as np

from . import _cohort

_SPECS = {}


def signature_of(op):
    """The inputs and parameters `op` takes, as its C++ registry declares them (Note [Operator
    specs], operator/common/operator.cc), or None for a name no operator answers to."""
    if op not in _SPECS:
        try:
            _SPECS[op] = _cohort.op_spec(op)
        except Exception:  # (an unknown name: the caller reports it)
            _SPECS[op] = None
    return _SPECS[op]


def split_positional(op, args, kwargs, is_input):
    """MXNet's positional calling convention: argument i fills slot i of MXNet's signature,
    the inputs and then the parameters (clip(x, 0, 1), one_hot(i, 3), Dropout(x, 0.5); but
    FullyConnected(x, 3) gives 3 for the weight, an error). Returns the inputs and the keywords
    with the positional parameters added."""
    sig = signature_of(op)
    if sig is None or sig['var_inputs']:
        input_slots, params = len(args), []
    else:
        input_slots, params = len(sig['inputs']), [p['name'] for p in sig['params']]
    inputs = list(args[:input_slots])
    for i, a in enumerate(inputs):
        if not is_input(a):
            slot = sig['inputs'][i] if sig and not sig['var_inputs'] else 'input %d' % i
            raise TypeError('%s: positional argument %d is the input %s and must be an array '
                            'or symbol, got %s' % (op, i, slot, type(a).__name__))
    rest = args[input_slots:]
    if len(rest) > len(params):
        raise TypeError('%s takes %d positional arguments (%s), got %d'
                        % (op, input_slots + len(params),
                           ', '.join((sig['inputs'] if sig else []) + params), len(args)))
    kwargs = dict(kwargs)
    for name, value in zip(params, rest):
        if is_input(value):
            raise TypeError('%s: positional argument for the parameter %s is an array or '
                            'symbol' % (op, name))
        if name in kwargs:
            raise TypeError('%s got the parameter %s by position and by keyword' % (op, name))
        kwargs[name] = value
    return inputs, kwargs


class _Required:
    def __repr__(self):
        return '<required>'


_REQUIRED = _Required()


def _default_value(text):
    if text is None:
        return _REQUIRED
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def describe(function, op, input_kind, extra_doc):
    """Gives `function` MXNet's signature and docstring for `op` (help() lists its inputs and
    parameters with their types and defaults)."""
    sig = signature_of(op)
    if sig is None:
        function.__doc__ = extra_doc
        return
    P = inspect.Parameter
    parameters = []
    if sig['var_inputs']:
        parameters.append(P(sig['inputs'][0] if sig['inputs'] else 'data', P.VAR_POSITIONAL))
    else:
        parameters += [P(name, P.POSITIONAL_OR_KEYWORD, default=None) for name in sig['inputs']]
    kind = P.KEYWORD_ONLY if sig['var_inputs'] else P.POSITIONAL_OR_KEYWORD
    for p in sig['params']:
        if p['name'] in ('name', 'out', 'attr', 'ctx'):
            continue
        parameters.append(P(p['name'], kind, default=_default_value(p['default'])))
    parameters.append(P('kwargs', P.VAR_KEYWORD))
    function.__signature__ = inspect.Signature(parameters)
    lines = [sig['doc'], '', 'Parameters', '----------']
    for name in sig['inputs']:
        lines += ['%s : %s' % (name, input_kind), '    An input.']
    for p in sig['params']:
        required = 'required' if p['required'] else 'optional, default=%s' % p['default']
        lines += ['%s : %s, %s' % (p['name'], p['type'], required), '    ' + p['doc']]
    lines += ['', extra_doc]
    function.__doc__ = '\n'.join(lines)


def op_names():
    """Every registered operator name and alias."""
    return _cohort.op_names()


def attr_text(value):
    """An attribute as MXNet 1.x writes it: True/False, (3, 3), 0.5, 'relu', float32."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return 'True' if value else 'False'
    if isinstance(value, np.ndarray):  # broadcast_to(shape=np.array([10, 4])) as MXNet takes it
        value = value.tolist()
        if not isinstance(value, list):
            return attr_text(value)
    if isinstance(value, (list, tuple)):
        return str(tuple(attr_text_item(v) for v in value))
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, (np.integer,)):
        return str(int(value))
    if isinstance(value, (np.floating,)):
        return repr(float(value))
    return str(value)


def attr_text_item(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


def attrs_of(kwargs, op=None):
    """The string attributes of an operator's keyword parameters. None means the default, except
    for a parameter MXNet types "... or None" (topk's axis=None: the flattened array), which gets
    'None' as MXNet passes it."""
    nullable = set()
    if op is not None and any(v is None for v in kwargs.values()):
        sig = signature_of(op) or {}
        # ("boolean or None" parameters mean their default by None: left out)
        nullable = {p['name'] for p in sig.get('params', [])
                    if 'None' in (p['type'] or '') and not (p['type'] or '').startswith('boolean')}
    return {k: 'None' if v is None else attr_text(v) for k, v in kwargs.items()
            if v is not None or k in nullable}


def register_operators(namespace, internal, make_function, cls, fluent, contrib):
    """Adds make_function(op) for every registered operator to `namespace` (those whose names
    start with _ to the `internal` module too, and _contrib_X as X to the `contrib` module, as
    MXNet's mx.sym.contrib / mx.nd.contrib), and the `fluent` ones as methods of `cls` that pass
    the object as the first input."""
    for op in op_names():
        function = make_function(op)
        if op.startswith('_'):
            setattr(internal, op, function)
        if op.startswith('_contrib_') and not hasattr(contrib, op[len('_contrib_'):]):
            setattr(contrib, op[len('_contrib_'):], function)
        if op not in namespace:
            namespace[op] = function
    for op in fluent:
        if op in namespace and not hasattr(cls, op):
            setattr(cls, op, _fluent(namespace[op]))


def _fluent(function):
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)
    method.__name__ = function.__name__
    method.__doc__ = function.__doc__
    return method
