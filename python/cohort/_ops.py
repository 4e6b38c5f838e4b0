"""What the generated operator functions of cohort.nd and cohort.sym share: the registry's names
and how Python values become the operators' string attributes (as MXNet writes them)."""
import numpy as np

from . import _cohort


def op_names():
    """Every registered operator name and alias."""
    return _cohort.op_names()


def attr_text(value):
    """An attribute as MXNet 1.x writes it: True/False, (3, 3), 0.5, 'relu', float32."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return 'True' if value else 'False'
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


def attrs_of(kwargs):
    """The string attributes of an operator's keyword parameters (None means its default)."""
    return {k: attr_text(v) for k, v in kwargs.items() if v is not None}


def register_operators(namespace, internal, make_function, cls, fluent):
    """Adds make_function(op) for every registered operator to `namespace` (those whose names
    start with _ to the `internal` module too), and the `fluent` ones as methods of `cls` that
    pass the object as the first input."""
    for op in op_names():
        function = make_function(op)
        if op.startswith('_'):
            setattr(internal, op, function)
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
