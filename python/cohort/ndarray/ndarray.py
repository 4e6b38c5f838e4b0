"""NDArray (MXNet 1.x's mxnet.ndarray.NDArray) over Cohort's C++ NDArray: host arrays are shared
with numpy without a copy; arithmetic and every operator run Cohort's kernels."""
import numpy as np

from .. import _cohort
from ..base import MXNetError, is_number, mx_real_t
from ..context import Context, _from_text, current_context

__all__ = ['NDArray', 'array', 'empty', 'zeros', 'ones', 'full', 'arange', 'concat',
           'save', 'load', 'waitall', 'invoke', 'add', 'subtract', 'multiply', 'divide', 'power',
           'maximum', 'minimum', 'equal', 'not_equal', 'greater', 'greater_equal', 'lesser',
           'lesser_equal']


def _dtype_name(dtype):
    """numpy's name of a dtype given as a numpy type, np.dtype or name ('float32')."""
    if dtype is None:
        return None
    try:
        return np.dtype(dtype).name
    except TypeError:
        raise TypeError('dtype: expected a numpy type or its name, got %r' % (dtype,)) from None


def _ctx(ctx):
    if ctx is None:
        return current_context()
    if isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, str):
        return _from_text(ctx)
    raise TypeError('ctx: expected a Context such as cpu(0), got %r' % (ctx,))


def _shape(shape, what='shape'):
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    if isinstance(shape, (tuple, list)) and all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
        return tuple(int(d) for d in shape)
    raise TypeError('%s: expected an int or a tuple of ints, got %r' % (what, shape))


class NDArray:
    """An n-dimensional array on a device. Copies of the handle share memory; indexing with an
    int or a slice of rows gives a view, as in MXNet."""
    __slots__ = ('_handle', 'writable')
    __array_priority__ = 1000.0  # numpy defers `ndarray + NDArray` to NDArray.__radd__

    def __init__(self, handle, writable=True):
        if not isinstance(handle, _cohort.NDArrayHandle):
            raise TypeError('NDArray wraps a handle; make arrays with cohort.nd.array, zeros, ...')
        self._handle = handle
        self.writable = writable

    # ---- attributes
    @property
    def handle(self):
        return self._handle

    @property
    def shape(self):
        return tuple(self._handle.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def dtype(self):
        name = self._handle.dtype
        return np.dtype(name).type if name != 'bfloat16' else 'bfloat16'

    @property
    def context(self):
        return _from_text(self._handle.context)

    ctx = context

    @property
    def stype(self):
        return 'default'

    @property
    def T(self):
        if self.ndim != 2:
            raise ValueError('T: only 2-D arrays are transposed this way; use transpose(axes=)')
        return invoke('transpose', [self])

    # ---- conversion
    def _host(self):
        if self.context.device_type == 'gpu':
            return self._handle.copy_to_context('cpu:0')
        return self._handle

    # ---- DLPack (zero-copy exchange with numpy, PyTorch, CuPy, ...)
    def __dlpack__(self, stream=None):
        """A 'dltensor' capsule sharing this array's memory (the array stays alive while it is
        used). GPU arrays: wait for their kernels first (wait_to_read)."""
        self.wait_to_read()
        return _cohort.to_dlpack(self._handle)

    def __dlpack_device__(self):
        return _cohort.dlpack_device(self._handle)

    def to_dlpack_for_read(self):
        return self.__dlpack__()

    def to_dlpack_for_write(self):
        return self.__dlpack__()

    def __array__(self, dtype=None):
        view = np.asarray(self._host())
        return view if dtype is None else view.astype(dtype, copy=False)

    def asnumpy(self):
        """A numpy copy of the array (np.asarray(x) shares host memory instead)."""
        return np.array(self._host(), copy=True)

    def asscalar(self):
        if self.size != 1:
            raise ValueError('The current array is not a scalar')
        return self.asnumpy().reshape(())[()]

    def astype(self, dtype, copy=True):
        name = _dtype_name(dtype)
        if not copy and name == self._handle.dtype:
            return self
        return NDArray(self._handle.astype(name))

    def copy(self):
        return self.copyto(self.context)

    def copyto(self, other):
        """Copies into `other` (an NDArray of the same shape: returned) or onto a Context (a new
        array)."""
        if isinstance(other, NDArray):
            # Onto itself: nothing to copy (MXNet warns and leaves it).
            if other._handle.shares_storage_with(self._handle) and \
                    other._handle.address == self._handle.address:
                return other
            if other.shape != self.shape:
                raise ValueError('copyto: shape %s into shape %s' % (self.shape, other.shape))
            self._handle.copy_to(other._handle)
            return other
        if isinstance(other, Context):
            return NDArray(self._handle.copy_to_context(other._text()))
        raise TypeError('copyto does not support type ' + str(type(other)))

    def as_in_context(self, context):
        return self if self.context == context else self.copyto(context)

    def wait_to_read(self):
        """Operators return once their kernels ran, so there is nothing left to wait for."""

    def reshape(self, *shape, **kwargs):
        """A view with another shape; 0 keeps an axis, -1 takes what is left (MXNet's codes)."""
        reverse = kwargs.pop('reverse', False)
        if 'shape' in kwargs:
            shape = kwargs.pop('shape')
        elif len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if kwargs:
            raise TypeError('reshape: unknown argument(s) %s' % sorted(kwargs))
        shape = _shape(shape)
        if reverse or any(d < -1 for d in shape):
            return invoke('Reshape', [self], shape=shape, reverse=reverse)
        dims = [self.shape[i] if d == 0 else d for i, d in enumerate(shape)]
        if dims.count(-1) > 1:
            raise MXNetError('reshape: at most one -1 in %s' % (shape,))
        if -1 in dims:
            known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
            if known == 0 or self.size % known:
                raise MXNetError('reshape: cannot reshape %s into %s' % (self.shape, shape))
            dims[dims.index(-1)] = self.size // known
        if int(np.prod(dims, dtype=np.int64)) != self.size:
            raise MXNetError('reshape: cannot reshape array of shape %s into shape %s'
                             % (self.shape, tuple(dims)))
        return NDArray(self._handle.reshape(tuple(dims)))

    # ---- indexing
    def __len__(self):
        if not self.shape:
            raise TypeError('len() of a 0-d array')
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        if self.size == 0:
            return False
        if self.size == 1:
            return bool(self.asscalar())
        raise ValueError('The truth value of an NDArray with multiple elements is ambiguous.')

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and self.ndim > 0:
            i = int(key)
            if i < -self.shape[0] or i >= self.shape[0]:
                raise IndexError('index %d is out of bounds for axis 0 with size %d'
                                 % (i, self.shape[0]))
            return NDArray(self._handle.at(i % self.shape[0]))
        if isinstance(key, slice) and key.step in (None, 1) and self.ndim > 0:
            begin, end, _ = key.indices(self.shape[0])
            return NDArray(self._handle.slice(begin, max(begin, end)))
        return array(np.asarray(self)[key if not isinstance(key, NDArray) else key.asnumpy()],
                     ctx=self.context, dtype=self.dtype)

    def __setitem__(self, key, value):
        if not self.writable:
            raise ValueError('Cannot assign to readonly NDArray')
        if isinstance(value, NDArray):
            value = value.as_in_context(Context('cpu', 0)) if value.context.device_type == 'gpu' \
                else value
            value = np.asarray(value)
        if self.context.device_type != 'gpu':
            np.asarray(self._handle)[key] = value
            return
        host = self.asnumpy()
        host[key] = value
        NDArray(_cohort.from_numpy(host, 'cpu:0')).copyto(self)

    # ---- arithmetic: elementwise ops of the same shape, broadcast ops otherwise, scalar forms
    def _binary(self, other, same, broadcast, scalar, reverse_scalar=None, reverse=False):
        if isinstance(other, NDArray):
            lhs, rhs = (other, self) if reverse else (self, other)
            op = same if lhs.shape == rhs.shape and same else broadcast
            return invoke(op, [lhs, rhs])
        if is_number(other):
            op = reverse_scalar if reverse and reverse_scalar else scalar
            if op in _scalar_ops():
                return invoke(op, [self], scalar=other)
            # No scalar form of this operator: the broadcast one, with the scalar as an array of
            # one element on every axis.
            value = full((1,) * max(self.ndim, 1), other, ctx=self.context, dtype=self.dtype)
            lhs, rhs = (value, self) if reverse else (self, value)
            return invoke(broadcast, [lhs, rhs])
        if isinstance(other, np.ndarray):
            return self._binary(array(other, ctx=self.context, dtype=self.dtype), same, broadcast,
                                scalar, reverse_scalar, reverse)
        return NotImplemented

    def __add__(self, o): return self._binary(o, 'elemwise_add', 'broadcast_add', '_plus_scalar')
    def __radd__(self, o): return self._binary(o, 'elemwise_add', 'broadcast_add', '_plus_scalar',
                                               '_plus_scalar', True)
    def __sub__(self, o): return self._binary(o, 'elemwise_sub', 'broadcast_sub', '_minus_scalar')
    def __rsub__(self, o): return self._binary(o, 'elemwise_sub', 'broadcast_sub', '_minus_scalar',
                                               '_rminus_scalar', True)
    def __mul__(self, o): return self._binary(o, 'elemwise_mul', 'broadcast_mul', '_mul_scalar')
    def __rmul__(self, o): return self._binary(o, 'elemwise_mul', 'broadcast_mul', '_mul_scalar',
                                               '_mul_scalar', True)
    def __truediv__(self, o): return self._binary(o, 'elemwise_div', 'broadcast_div', '_div_scalar')
    def __rtruediv__(self, o): return self._binary(o, 'elemwise_div', 'broadcast_div',
                                                   '_div_scalar', '_rdiv_scalar', True)
    def __pow__(self, o): return self._binary(o, None, 'broadcast_power', '_power_scalar')
    def __rpow__(self, o): return self._binary(o, None, 'broadcast_power', '_power_scalar',
                                               '_rpower_scalar', True)
    def __neg__(self): return invoke('_mul_scalar', [self], scalar=-1.0)
    def __pos__(self): return self
    def __abs__(self): return invoke('abs', [self])
    def __eq__(self, o): return self._binary(o, None, 'broadcast_equal', '_equal_scalar')
    def __ne__(self, o): return self._binary(o, None, 'broadcast_not_equal', '_not_equal_scalar')
    def __gt__(self, o): return self._binary(o, None, 'broadcast_greater', '_greater_scalar')
    def __ge__(self, o): return self._binary(o, None, 'broadcast_greater_equal',
                                             '_greater_equal_scalar')
    def __lt__(self, o): return self._binary(o, None, 'broadcast_lesser', '_lesser_scalar')
    def __le__(self, o): return self._binary(o, None, 'broadcast_lesser_equal',
                                             '_lesser_equal_scalar')
    __hash__ = object.__hash__

    def _inplace(self, result):
        if result is NotImplemented:
            return result
        if not self.writable:
            raise ValueError('trying to add to a readonly NDArray')
        result.copyto(self)
        return self

    def __iadd__(self, o): return self._inplace(self.__add__(o))
    def __isub__(self, o): return self._inplace(self.__sub__(o))
    def __imul__(self, o): return self._inplace(self.__mul__(o))
    def __itruediv__(self, o): return self._inplace(self.__truediv__(o))

    def __repr__(self):
        shape = 'x'.join(str(d) for d in self.shape)
        return '\n%s\n<%s %s @%s>' % (str(self.asnumpy()), self.__class__.__name__, shape,
                                      self.context)

    def __reduce__(self):
        return (array, (self.asnumpy(), self.context, self.dtype))


_SCALAR_OPS = []


def _scalar_ops():
    """The scalar forms the registry has (_plus_scalar, ...)."""
    if not _SCALAR_OPS:
        _SCALAR_OPS.append(frozenset(n for n in _cohort.op_names() if n.endswith('_scalar')))
    return _SCALAR_OPS[0]


def invoke(op, inputs, out=None, ctx=None, **kwargs):
    """Runs registered operator `op` on NDArrays (its arguments, then its auxiliary states) with
    keyword attributes; returns its output, or the list of its outputs."""
    from .._ops import attrs_of
    handles = []
    for i, x in enumerate(inputs):
        if not isinstance(x, NDArray):
            raise TypeError('%s: input %d must be an NDArray, got %s' % (op, i, type(x).__name__))
        handles.append(x._handle)
    where = inputs[0].context if inputs else _ctx(ctx)
    outs = [NDArray(h) for h in _cohort.invoke(op, handles, attrs_of(kwargs), where._text())]
    if out is not None:
        targets = out if isinstance(out, (list, tuple)) else [out]
        if len(targets) != len(outs):
            raise ValueError('%s: %d output(s), out= gives %d' % (op, len(outs), len(targets)))
        for src, dst in zip(outs, targets):
            src.copyto(dst)
        return out
    return outs[0] if len(outs) == 1 else outs


def array(source_array, ctx=None, dtype=None):
    """A new array holding a copy of `source_array` (NDArray, numpy array, nested lists). Its dtype
    is dtype, else an NDArray's own, else float32 (as MXNet)."""
    ctx = _ctx(ctx)
    if isinstance(source_array, NDArray):
        dtype = source_array.dtype if dtype is None else dtype
        source = source_array.asnumpy()
    else:
        dtype = mx_real_t if dtype is None else dtype
        try:
            source = np.asarray(source_array)
        except Exception:
            raise TypeError('source_array must be array like object') from None
        if source.dtype == object:
            raise TypeError('source_array must be array like object')
    source = np.ascontiguousarray(source, dtype=_dtype_name(dtype))
    return NDArray(_cohort.from_numpy(source, ctx._text()))


def empty(shape, ctx=None, dtype=None):
    """An array of uninitialised memory."""
    return NDArray(_cohort.empty(_shape(shape), _dtype_name(dtype) or 'float32', _ctx(ctx)._text()))


def full(shape, val, ctx=None, dtype=mx_real_t, out=None):
    """An array with every element `val`."""
    out = empty(shape, ctx, dtype) if out is None else out
    out._handle.fill(float(val))
    return out


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of zeros (dense storage only)."""
    if stype not in (None, 'default'):
        raise ValueError("stype: Cohort's arrays are dense ('default'), got %r" % (stype,))
    return full(shape, 0, ctx, dtype or mx_real_t)


def ones(shape, ctx=None, dtype=None, **kwargs):
    """An array of ones."""
    return full(shape, 1, ctx, dtype or mx_real_t)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=mx_real_t):
    """Evenly spaced values in [start, stop), each repeated `repeat` times (the _arange kernel)."""
    return invoke('_arange', [], ctx=ctx, start=start, stop=stop, step=step, repeat=repeat,
                  dtype=_dtype_name(dtype))


def concat(*data, **kwargs):
    """Joins arrays along `dim` (default 1)."""
    dim = kwargs.pop('dim', 1)
    return invoke('Concat', list(data), num_args=len(data), dim=dim, **kwargs)


def concatenate(arrays, axis=0, always_copy=True):
    """MXNet 1.x's concatenate: the arrays joined along `axis` (a new array even for one)."""
    if not isinstance(arrays, (list, tuple)) or not arrays or \
            not all(isinstance(a, NDArray) for a in arrays):
        raise TypeError('concatenate: expected a non-empty list of NDArrays')
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return invoke('Concat', list(arrays), num_args=len(arrays), dim=axis)


def moveaxis(tensor, source, destination):
    """The array with axis `source` moved to `destination` (numpy's moveaxis), as a transpose."""
    if not isinstance(tensor, NDArray):
        raise TypeError('moveaxis: expected an NDArray, got %s' % type(tensor).__name__)
    ndim = tensor.ndim
    try:
        source, destination = int(source), int(destination)
    except TypeError:
        raise TypeError('moveaxis: source and destination must be ints') from None
    if not -ndim <= source < ndim or not -ndim <= destination < ndim:
        raise ValueError('moveaxis: axis out of range for an array of %d dimensions' % ndim)
    order = [a for a in range(ndim) if a != source % ndim]
    order.insert(destination % ndim, source % ndim)
    return invoke('transpose', [tensor], axes=tuple(order))


def onehot_encode(indices, out):
    """MXNet 1.x's legacy one-hot encoding into `out` (rows of out.shape[1]); returns out."""
    if not isinstance(indices, NDArray) or not isinstance(out, NDArray):
        raise TypeError('onehot_encode: indices and out must be NDArrays')
    if out.ndim != 2 or indices.shape != (out.shape[0],):
        raise ValueError('onehot_encode: out must be (n, depth) for n indices, got %s and %s'
                         % (indices.shape, out.shape))
    invoke('one_hot', [indices], depth=out.shape[1]).copyto(out)
    return out


def load_frombuffer(buf):
    """The arrays of a .params file's bytes (mx.nd.save's format): a dict or a list."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError('load_frombuffer: expected bytes, got %s' % type(buf).__name__)
    import tempfile  # the C++ reader checks every byte of a file; hand it one
    with tempfile.NamedTemporaryFile(suffix='.params') as f:
        f.write(bytes(buf))
        f.flush()
        return load(f.name)


def save(fname, data):
    """Saves an NDArray, a list of them or a dict str -> NDArray (MXNet's .params format)."""
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, dict):
        names = list(data.keys())
        arrays = list(data.values())
        if not all(isinstance(k, str) for k in names):
            raise TypeError('save only accept dict str->NDArray or list of NDArray')
    elif isinstance(data, (list, tuple)):
        names, arrays = [], list(data)
    else:
        raise TypeError('save only accept dict str->NDArray or list of NDArray')
    if not all(isinstance(a, NDArray) for a in arrays):
        raise TypeError('save only accept dict str->NDArray or list of NDArray')
    _cohort.save(str(fname), names, [a._handle for a in arrays])


def load(fname):
    """A .params file's arrays: a dict when they are named, else a list."""
    if not isinstance(fname, str):
        raise TypeError('fname required to be a string')
    names, handles = _cohort.load(fname)
    arrays = [NDArray(h) for h in handles]
    return dict(zip(names, arrays)) if names else arrays


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule or of an object with __dlpack__ (a
    numpy array, a torch tensor, ...); row-major tensors only."""
    return NDArray(_cohort.from_dlpack(dlpack))


def to_dlpack_for_read(data):
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    return data.to_dlpack_for_write()


def waitall():
    """Operators return once their kernels ran: nothing is left queued."""


def _ufunc(lhs, rhs, method, reverse_method, scalar_fn):
    """MXNet's _ufunc_helper: an NDArray on either side runs its operator; two numbers give a
    number."""
    if isinstance(lhs, NDArray):
        return getattr(lhs, method)(rhs)
    if isinstance(rhs, NDArray):
        return getattr(rhs, reverse_method)(lhs)
    if is_number(lhs) and is_number(rhs):
        return scalar_fn(lhs, rhs)
    raise TypeError('type %s and %s not supported' % (type(lhs).__name__, type(rhs).__name__))


def add(lhs, rhs):
    return _ufunc(lhs, rhs, '__add__', '__radd__', lambda a, b: a + b)


def subtract(lhs, rhs):
    return _ufunc(lhs, rhs, '__sub__', '__rsub__', lambda a, b: a - b)


def multiply(lhs, rhs):
    return _ufunc(lhs, rhs, '__mul__', '__rmul__', lambda a, b: a * b)


def divide(lhs, rhs):
    return _ufunc(lhs, rhs, '__truediv__', '__rtruediv__', lambda a, b: a / b)


def power(base, exp):
    return _ufunc(base, exp, '__pow__', '__rpow__', lambda a, b: a ** b)


def _extremum(lhs, rhs, broadcast, scalar, fn):
    if isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
        return invoke(broadcast, [lhs, rhs])
    if isinstance(rhs, NDArray):
        lhs, rhs = rhs, lhs
    if isinstance(lhs, NDArray) and is_number(rhs):
        return invoke(scalar, [lhs], scalar=rhs)
    if is_number(lhs) and is_number(rhs):
        return fn(lhs, rhs)
    raise TypeError('type %s and %s not supported' % (type(lhs).__name__, type(rhs).__name__))


def maximum(lhs, rhs):
    """The larger of each pair of elements (NDArrays or numbers on either side)."""
    return _extremum(lhs, rhs, 'broadcast_maximum', '_maximum_scalar', max)


def minimum(lhs, rhs):
    """The smaller of each pair of elements (NDArrays or numbers on either side)."""
    return _extremum(lhs, rhs, 'broadcast_minimum', '_minimum_scalar', min)


def equal(lhs, rhs):
    return _ufunc(lhs, rhs, '__eq__', '__eq__', lambda a, b: float(a == b))


def not_equal(lhs, rhs):
    return _ufunc(lhs, rhs, '__ne__', '__ne__', lambda a, b: float(a != b))


def greater(lhs, rhs):
    return _ufunc(lhs, rhs, '__gt__', '__lt__', lambda a, b: float(a > b))


def greater_equal(lhs, rhs):
    return _ufunc(lhs, rhs, '__ge__', '__le__', lambda a, b: float(a >= b))


def lesser(lhs, rhs):
    return _ufunc(lhs, rhs, '__lt__', '__gt__', lambda a, b: float(a < b))


def lesser_equal(lhs, rhs):
    return _ufunc(lhs, rhs, '__le__', '__ge__', lambda a, b: float(a <= b))
