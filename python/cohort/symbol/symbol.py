"""Symbol (MXNet 1.x's mxnet.symbol.Symbol) over Cohort's C++ graphs: variables, operators,
listing, shape inference, JSON, and binding to executors."""
import json
import os

import numpy as np

from .. import _cohort
from .._ops import attr_text
from ..attribute import AttrScope
from ..base import MXNetError, NotImplementedForSymbol, is_number
from ..context import Context, current_context
from ..name import NameManager
from ..util import is_np_shape

__all__ = ['Symbol', 'Variable', 'var', 'Group', 'load', 'load_json', 'zeros', 'ones', 'maximum',
           'minimum']

def _dtype_name(dtype, what):
    """A dtype given as numpy dtype, numpy type or name, as Cohort's name for it."""
    if isinstance(dtype, str) and dtype == 'bfloat16':
        return dtype
    try:
        return np.dtype(dtype).name
    except TypeError:
        raise TypeError('%s: %r is not a dtype' % (what, dtype)) from None


def _np_type(name):
    """A dtype name from the core as MXNet returns it: the numpy type (bfloat16, which numpy
    lacks, as its name); None stays None."""
    if name is None or name == 'bfloat16':
        return name
    return np.dtype(name).type


# MXNet's type flags, which __dtype__ attributes hold.
_DTYPE_FLAG = {'float32': 0, 'float64': 1, 'float16': 2, 'uint8': 3, 'int32': 4, 'int8': 5,
               'int64': 6, 'bool': 7, 'bfloat16': 12}


def _stripped(attrs):
    """MXNet's attr_dict: each __key__ attribute also under key."""
    out = dict(attrs)
    for k, v in attrs.items():
        if k.startswith('__') and k.endswith('__') and len(k) > 4:
            out[k[2:-2]] = v
    return out


class Symbol:
    """A handle to one or more outputs of a graph; copying it shares the graph."""
    __slots__ = ('_handle',)

    def __init__(self, handle):
        if not isinstance(handle, _cohort.SymbolHandle):
            raise TypeError('Symbol wraps a handle; make symbols with cohort.sym.Variable and the '
                            'operator functions')
        self._handle = handle

    @property
    def handle(self):
        return self._handle

    # ---- structure
    @property
    def name(self):
        """The name of a single-output symbol's node; None for a group."""
        return self._handle.node_name(0) if len(self) == 1 else None

    def __len__(self):
        return self._handle.num_outputs()

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index):
        if isinstance(index, str):
            outputs = self.list_outputs()
            matches = [i for i, o in enumerate(outputs) if o == index]
            if not matches:
                raise ValueError('There is no output named %s (outputs: %s)'
                                 % (index, ', '.join(outputs)))
            if len(matches) > 1:
                raise ValueError('There are multiple outputs with name "%s"' % index)
            index = matches[0]
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise TypeError('Symbol only support integer index to fetch i-th output')
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError('output index %d out of range for %d outputs' % (index, len(self)))
        return Symbol(self._handle.output(int(index)))

    def list_arguments(self):
        return list(self._handle.list_arguments())

    def list_outputs(self):
        return list(self._handle.list_outputs())

    def list_auxiliary_states(self):
        return list(self._handle.list_auxiliary_states())

    def list_inputs(self):
        return list(self._handle.list_inputs())

    def get_internals(self):
        return Symbol(self._handle.get_internals())

    def get_children(self):
        children = self._handle.children()
        return None if children is None or children.num_outputs() == 0 else Symbol(children)

    def attr(self, key):
        """A single-output node's attribute `key` (or `__key__`), else None."""
        if len(self) != 1:
            return None
        attrs = self._handle.node_attrs(0)
        return attrs.get(key, attrs.get('__%s__' % key))

    def list_attr(self, recursive=False):
        if recursive:
            raise DeprecationWarning('Symbol.list_attr with recursive=True has been deprecated. '
                                     'Please use attr_dict instead.')
        return _stripped(self._handle.node_attrs(0)) if len(self) == 1 else {}

    def attr_dict(self):
        return {name: _stripped(attrs) for name, attrs in self._handle.attr_dict().items()}

    def _set_attr(self, **kwargs):
        raise MXNetError('Cohort symbols are immutable once made: give attributes when making '
                         'them (attr= or AttrScope)')

    # ---- shape and type inference
    def _known_shapes(self, args, kwargs):
        if args and kwargs:
            raise ValueError('Can only specify known argument shapes either by positional or '
                             'kwargs way.')
        known = {}
        if args:
            names = self.list_arguments()
            for name, shape in zip(names, args):
                if shape is not None:
                    known[name] = shape
        for name, shape in kwargs.items():
            if shape is not None:
                known[name] = shape
        inputs = set(self.list_inputs())
        out = {}
        for name, shape in known.items():
            if name not in inputs:
                raise MXNetError("infer_shape: '%s' is no input of the symbol (inputs: %s)"
                                 % (name, ', '.join(self.list_inputs())))
            if not isinstance(shape, (tuple, list)):
                raise TypeError('Arguments need to be shapes (tuple), but argument %s is %r'
                                % (name, shape))
            out[name] = tuple(-1 if d == 0 else d for d in shape)  # 0: unknown, as in MXNet
        return out

    def infer_shape(self, *args, **kwargs):
        """(arg_shapes, out_shapes, aux_shapes) from known input shapes; (None, None, None) when
        they do not determine every shape; MXNetError when they conflict."""
        args_s, outs_s, aux_s, complete = self._handle.infer_shape(
            self._known_shapes(args, kwargs))
        if not complete:
            return None, None, None
        return [tuple(s) for s in args_s], [tuple(s) for s in outs_s], [tuple(s) for s in aux_s]

    def infer_shape_partial(self, *args, **kwargs):
        """As infer_shape, with unknown shapes () and unknown dimensions 0."""
        args_s, outs_s, aux_s, _ = self._handle.infer_shape(self._known_shapes(args, kwargs))
        fix = lambda shapes: [tuple(0 if d < 0 else d for d in s) for s in shapes]
        return fix(args_s), fix(outs_s), fix(aux_s)

    def _infer_type(self, args, kwargs):
        if args and kwargs:
            raise ValueError('infer_type: give types by position or by name, not both')
        names = self.list_arguments()
        if len(args) > len(names):
            raise ValueError('infer_type: %d types for %d arguments' % (len(args), len(names)))
        given = dict(zip(names, args)) if args else dict(kwargs)
        known = {name: _dtype_name(dtype, "infer_type: '%s'" % name)
                 for name, dtype in given.items() if dtype is not None}
        arg_t, out_t, aux_t, complete = self._handle.infer_type(known)
        as_types = lambda names: [_np_type(n) for n in names]
        return as_types(arg_t), as_types(out_t), as_types(aux_t), complete

    def infer_type(self, *args, **kwargs):
        """(arg_types, out_types, aux_types) as numpy types, from the types given by position
        or name (and variables' dtype); (None, None, None) when they do not determine every
        type; MXNetError when they conflict."""
        arg_t, out_t, aux_t, complete = self._infer_type(args, kwargs)
        if not complete:
            return None, None, None
        return arg_t, out_t, aux_t

    def infer_type_partial(self, *args, **kwargs):
        """As infer_type, with None for the types left unknown."""
        return self._infer_type(args, kwargs)[:3]

    # ---- JSON, copies, pickling
    def astype(self, dtype):
        """The Cast operator to `dtype`."""
        from .. import symbol as sym
        return sym.Cast(self, dtype=dtype)

    def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False, name=None):
        return split_v2(self, indices_or_sections, axis, squeeze_axis, name)

    def tojson(self, remove_amp_cast=True):
        handle = _cohort.amp_remove_casts(self._handle) if remove_amp_cast else self._handle
        text = handle.tojson()
        if is_np_shape():  # MXNet marks graphs saved under NumPy-shape semantics
            graph = json.loads(text)
            graph.setdefault('attrs', {})['is_np_shape'] = ['int', 1]
            text = json.dumps(graph, indent=2)
        return text

    def save(self, fname, remove_amp_cast=True):
        if not isinstance(fname, str):
            raise TypeError('fname need to be string')
        if is_np_shape():
            with open(fname + '.tmp', 'w') as f:
                f.write(self.tojson(remove_amp_cast))
            os.replace(fname + '.tmp', fname)
        else:
            (_cohort.amp_remove_casts(self._handle) if remove_amp_cast else self._handle).save(fname)

    def __copy__(self):
        return Symbol(self._handle)

    def __deepcopy__(self, memo):
        return Symbol(_cohort.SymbolHandle.from_json(self.tojson()))

    def __getstate__(self):
        return {'handle': self.tojson()}

    def __setstate__(self, state):
        self._handle = _cohort.SymbolHandle.from_json(state['handle'])

    def __repr__(self):
        name = self.name
        if name is None:
            return '<%s group [%s]>' % (self.__class__.__name__,
                                        ', '.join(s.name for s in self))
        return '<%s %s>' % (self.__class__.__name__, name)

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, 'bool')

    __hash__ = object.__hash__

    # ---- arithmetic (MXNet's names: _plus0, _plusscalar0, ...)
    def _binary(self, other, op, hint, scalar_op, scalar_hint):
        if isinstance(other, Symbol):
            return _create(op, [self, other], {}, NameManager.current().get(None, hint))
        if is_number(other):
            return _create(scalar_op, [self], {}, NameManager.current().get(None, scalar_hint),
                           {'scalar': attr_text(float(other))})
        raise TypeError('type %s not supported' % str(type(other)))

    def __add__(self, o): return self._binary(o, 'elemwise_add', '_plus', '_plus_scalar',
                                              '_plusscalar')
    __radd__ = __add__
    def __sub__(self, o): return self._binary(o, 'elemwise_sub', '_minus', '_minus_scalar',
                                              '_minusscalar')
    def __rsub__(self, o): return self._binary(o, None, None, '_rminus_scalar', '_rminusscalar')
    def __mul__(self, o): return self._binary(o, 'elemwise_mul', '_mul', '_mul_scalar',
                                              '_mulscalar')
    __rmul__ = __mul__
    def __truediv__(self, o): return self._binary(o, 'elemwise_div', '_div', '_div_scalar',
                                                  '_divscalar')
    def __rtruediv__(self, o): return self._binary(o, None, None, '_rdiv_scalar', '_rdivscalar')
    def __pow__(self, o): return self._binary(o, 'broadcast_power', '_power', '_power_scalar',
                                              '_powerscalar')
    def __rpow__(self, o): return self._binary(o, None, None, '_rpower_scalar', '_rpowerscalar')
    def __neg__(self): return self.__mul__(-1.0)
    # Comparisons give 1 or 0 (MXNet's _greater0, _greater_scalar0, ...); a Symbol stays
    # hashable (it is a graph handle: scripts keep them in sets and as dictionary keys).
    def _compare(self, o, name):
        return self._binary(o, '_' + name, '_' + name, '_%s_scalar' % name, '_%s_scalar' % name)
    def __eq__(self, o): return self._compare(o, 'equal')
    def __ne__(self, o): return self._compare(o, 'not_equal')
    def __gt__(self, o): return self._compare(o, 'greater')
    def __ge__(self, o): return self._compare(o, 'greater_equal')
    def __lt__(self, o): return self._compare(o, 'lesser')
    def __le__(self, o): return self._compare(o, 'lesser_equal')
    __hash__ = object.__hash__
    def __abs__(self): return _create('abs', [self], {}, NameManager.current().get(None, 'abs'))

    def __call__(self, *args, **kwargs):
        """A copy with inputs replaced: net(data=other) or net(other, ...) by argument order."""
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, **kwargs):
        kwargs.pop('name', None)  # the nodes keep their names, as in MXNet's composed graphs
        if args and kwargs:
            raise TypeError('compose only accept input Symbols either as positional or keyword '
                            'arguments, not both')
        for value in list(args) + list(kwargs.values()):
            if not isinstance(value, Symbol):
                raise TypeError('Compose expect `Symbol` as arguments')
        if args:
            names = self.list_arguments()
            if len(args) > len(names):
                raise TypeError('compose: %d inputs for %d arguments' % (len(args), len(names)))
            kwargs = dict(zip(names, args))
        self._handle = self._handle.compose({k: v._handle for k, v in kwargs.items()})

    # ---- binding
    def simple_bind(self, ctx, grad_req='write', type_dict=None, stype_dict=None, group2ctx=None,
                    shared_arg_names=None, shared_exec=None, shared_buffer=None, **kwargs):
        """An executor with every array allocated from the input shapes given as keywords."""
        from ..executor import Executor, _check_ctx
        ctx = _check_ctx(ctx)
        groups = _group2ctx_text(group2ctx)
        if type_dict is not None and not isinstance(type_dict, dict):
            raise TypeError('type_dict must be a dict of name to dtype, got %r' % (type_dict,))
        types = {name: _dtype_name(dtype, "simple_bind: type_dict['%s']" % name)
                 for name, dtype in (type_dict or {}).items()}
        arg_names = self.list_arguments()
        if isinstance(grad_req, str):
            req, reqs = grad_req, {}
        elif isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(arg_names):
                raise ValueError('grad_req: %d entries for %d arguments'
                                 % (len(grad_req), len(arg_names)))
            req, reqs = 'write', dict(zip(arg_names, grad_req))
        elif isinstance(grad_req, dict):
            req, reqs = 'null', {k: v for k, v in grad_req.items()}
            unknown = sorted(set(reqs) - set(arg_names))
            if unknown:
                raise ValueError('grad_req names %s, which are not arguments' % unknown)
        else:
            raise TypeError('grad_req must be str, list or dict, got %r' % (grad_req,))
        shapes = self._known_shapes((), kwargs)
        handle = _cohort.ExecutorHandle.simple_bind(
            self._handle, ctx._text(), shapes, req, reqs,
            shared_exec._handle if shared_exec is not None else None, types, groups)
        return Executor(handle, self, ctx)

    def bind(self, ctx, args, args_grad=None, grad_req='write', aux_states=None, group2ctx=None,
             shared_exec=None):
        """An executor on the caller's arrays (lists in list_arguments order, or dicts)."""
        from ..executor import Executor, _arrays_in_order, _check_ctx
        ctx = _check_ctx(ctx)
        groups = _group2ctx_text(group2ctx)
        arg_names = self.list_arguments()
        aux_names = self.list_auxiliary_states()
        args = _arrays_in_order(args, arg_names, 'args')
        grads = _arrays_in_order(args_grad, arg_names, 'args_grad', allow_missing=True) \
            if args_grad is not None else [None] * len(arg_names)
        aux = _arrays_in_order(aux_states if aux_states is not None else [], aux_names,
                               'aux_states')
        if isinstance(grad_req, str):
            reqs = [grad_req] * len(arg_names)
        elif isinstance(grad_req, (list, tuple)):
            reqs = list(grad_req)
        elif isinstance(grad_req, dict):
            reqs = [grad_req.get(n, 'null') for n in arg_names]
        else:
            raise TypeError('grad_req must be str, list or dict, got %r' % (grad_req,))
        reqs = [r if g is not None else 'null' for r, g in zip(reqs, grads)]
        handle = _cohort.ExecutorHandle.bind(
            self._handle, ctx._text(), [a._handle for a in args],
            [g._handle if g is not None else None for g in grads], reqs,
            [a._handle for a in aux], shared_exec._handle if shared_exec is not None else None,
            groups)
        return Executor(handle, self, ctx, args_grad=grads)

    def eval(self, ctx=None, **kwargs):
        """The outputs for the given input arrays (a forward pass, no gradients)."""
        ctx = current_context() if ctx is None else ctx
        exe = self.bind(ctx, kwargs, grad_req='null')
        return exe.forward(is_train=False)


def _group2ctx_text(group2ctx):
    """group2ctx (MXNet's placement of AttrScope(ctx_group=...) nodes, with copies between
    contexts) as the C++ executor takes it: group name to context text."""
    if group2ctx is None:
        return {}
    if not isinstance(group2ctx, dict):
        raise TypeError('group2ctx must be a dict of group name to Context, got %r' % (group2ctx,))
    for group, c in group2ctx.items():
        if not isinstance(c, Context):
            raise TypeError("group2ctx['%s'] must be a Context, got %r" % (group, c))
    return {str(group): c._text() for group, c in group2ctx.items()}


def _create(op, positional, keywords, name, attrs=None):
    if op is None:
        raise TypeError('the operand must be a number')
    return Symbol(_cohort.SymbolHandle.create(
        op, [s._handle for s in positional], {k: v._handle for k, v in keywords.items()},
        attrs or {}, name))


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
             stype=None, profiler_scope=None, **kwargs):
    """A named input of a graph (data, a parameter); its attributes hint shape, dtype,
    learning-rate and weight-decay multipliers and initializer."""
    if not isinstance(name, str):
        raise TypeError('Expect a string for variable `name`')
    attrs = dict(AttrScope.current().get(attr))
    if shape is not None:
        attrs['__shape__'] = str(tuple(shape))
    if lr_mult is not None:
        attrs['__lr_mult__'] = str(lr_mult)
    if wd_mult is not None:
        attrs['__wd_mult__'] = str(wd_mult)
    if dtype is not None:
        attrs['__dtype__'] = str(_DTYPE_FLAG[np.dtype(dtype).name])
    if init is not None:
        attrs['__init__'] = init if isinstance(init, str) else init.dumps()
    if stype is not None and stype != 'default':
        raise ValueError("stype: Cohort's arrays are dense ('default'), got %r" % (stype,))
    for k, v in kwargs.items():
        if k.startswith('__') and k.endswith('__'):
            attrs[k] = str(v)
        else:
            raise ValueError('Attribute name=%s is not supported. Additional attributes must '
                             'start and end with double underscores, e.g, __yourattr__' % k)
    return Symbol(_cohort.SymbolHandle.variable(name, attrs))


var = Variable


def Group(symbols, create_fn=Symbol):
    """One symbol of every output of `symbols`, in order."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError('Expected a list of symbols as input')
    return create_fn(_cohort.SymbolHandle.group([s._handle for s in symbols]))


def load(fname):
    """A symbol from an MXNet symbol JSON file."""
    if not isinstance(fname, str):
        raise TypeError('fname need to be string')
    return Symbol(_cohort.SymbolHandle.load(fname))


def load_json(json_str):
    """A symbol from MXNet symbol JSON text."""
    if not isinstance(json_str, str):
        raise TypeError('fname required to be string')
    return Symbol(_cohort.SymbolHandle.from_json(json_str))


def zeros(shape, dtype=None, **kwargs):
    from . import _internal
    return _internal._zeros(shape=shape, dtype=dtype, **kwargs)


def ones(shape, dtype=None, **kwargs):
    from . import _internal
    return _internal._ones(shape=shape, dtype=dtype, **kwargs)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False, name=None):
    """numpy's split as symbols: equal sections or parts at the given indices along `axis`, each
    a slice_axis node, grouped (one symbol when there is one part). The extent of the axis comes
    from the input's shape, so the input's shape must be inferable from its variables' shapes."""
    from .. import symbol as sym
    from ..ndarray.ndarray import _split_bounds
    if not isinstance(ary, Symbol):
        raise TypeError('split_v2: expected a Symbol, got %s' % type(ary).__name__)
    _, out_shapes, _ = ary.infer_shape_partial()
    shape = out_shapes[0] if out_shapes else ()
    if not shape or axis >= len(shape) or axis < -len(shape) or shape[axis] == 0:
        raise MXNetError('split_v2: the extent of axis %d of the input must be known (give its '
                         'variables shapes)' % axis)
    bounds = _split_bounds(indices_or_sections, axis, shape[axis])
    parts = []
    for k, (begin, end) in enumerate(zip(bounds[:-1], bounds[1:])):
        part = sym.slice_axis(ary, axis=axis, begin=begin, end=max(begin, end),
                              name=None if name is None else '%s_part%d' % (name, k))
        if squeeze_axis and end - begin == 1:
            part = sym.squeeze(part, axis=axis)
        parts.append(part)
    return parts[0] if len(parts) == 1 else Group(parts)


def full(shape, val, dtype=None, **kwargs):
    from . import _internal
    return _internal._full(shape=shape, dtype=dtype, value=float(val), **kwargs)


def _extremum(left, right, op, hint, scalar_op, scalar_hint, fn):
    if isinstance(left, Symbol) and isinstance(right, Symbol):
        return _create(op, [left, right], {}, NameManager.current().get(None, hint))
    if isinstance(right, Symbol):
        left, right = right, left
    if isinstance(left, Symbol) and is_number(right):
        return _create(scalar_op, [left], {}, NameManager.current().get(None, scalar_hint),
                       {'scalar': attr_text(float(right))})
    if is_number(left) and is_number(right):
        return fn(left, right)
    raise TypeError('types (%s, %s) not supported' % (type(left).__name__, type(right).__name__))


def maximum(left, right):
    """The larger of each pair of elements (Symbols or numbers on either side)."""
    return _extremum(left, right, 'broadcast_maximum', '_maximum', '_maximum_scalar',
                     '_maximumscalar', max)


def minimum(left, right):
    """The smaller of each pair of elements (Symbols or numbers on either side)."""
    return _extremum(left, right, 'broadcast_minimum', '_minimum', '_minimum_scalar',
                     '_minimumscalar', min)
