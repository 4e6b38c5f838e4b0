"""One function per registered operator (cohort.sym.FullyConnected, ...), made at import from the
C++ registry, and the fluent methods (data.sum(axis=1))."""
import types

from .._ops import attrs_of, describe, register_operators, split_positional
from ..attribute import AttrScope
from ..name import NameManager
from .symbol import Symbol, _create
from ..ndarray.register import FLUENT


def make_function(op):
    """cohort.sym.<op>(*inputs, name=None, attr=None, **parameters_and_inputs)."""

    def function(*args, **kwargs):
        name = kwargs.pop('name', None)
        attr = kwargs.pop('attr', None)
        args, kwargs = split_positional(op, args, kwargs, lambda a: isinstance(a, Symbol))
        keywords = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
        params = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
        # MXNet's lr_mult= and wd_mult= keywords are the node's (and its made parameters')
        # __lr_mult__ and __wd_mult__ attributes, not operator parameters.
        multipliers = {'__%s__' % k: str(params.pop(k)) for k in ('lr_mult', 'wd_mult')
                       if params.get(k) is not None}
        params.pop('lr_mult', None)
        params.pop('wd_mult', None)
        attrs = attrs_of(params, op)
        attrs.update(multipliers)
        if op in ('Concat', 'concat', 'add_n', 'ElementWiseSum') and 'num_args' not in attrs:
            attrs['num_args'] = str(len(args) + len(keywords))
        attrs.update(AttrScope.current().get(attr))
        node_name = NameManager.current().get(name, op.lower())
        return _create(op, list(args), keywords, node_name, attrs)

    function.__name__ = op
    function.__qualname__ = op
    describe(function, op, 'Symbol',
             'Applies the %s operator: inputs are Symbols (by position or name), then parameters '
             'by position or keyword; an input not given becomes a variable <name>_<input>.' % op)
    return function


def register(namespace, internal, contrib):
    register_operators(namespace, internal, make_function, Symbol, FLUENT, contrib)


_internal = types.ModuleType('cohort.symbol._internal', 'Operators whose names start with _')
contrib = types.ModuleType('cohort.symbol.contrib', 'The _contrib_ operators, without the prefix')
