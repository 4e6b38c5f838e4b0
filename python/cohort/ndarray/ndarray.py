"""NDArray (MXNet 1.x's mxnet.ndarray.NDArray) over Cohort's C++ NDArray: host arrays are shared
with numpy without a copy; arithmetic and every operator run Cohort's kernels."""
import numpy as np

from .. import _cohort
from .. import autograd  # records operator calls (Note [Imperative autograd])
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


def _numpy_key(key):
    """An index for numpy: NDArrays (and float arrays) of positions become int64 arrays, as MXNet
    reads them."""
    if isinstance(key, tuple):
        return tuple(_numpy_key(k) for k in key)
    if isinstance(key, NDArray):
        key = key.asnumpy()
    if isinstance(key, np.ndarray) and key.dtype.kind == 'f':
        key = key.astype(np.int64)
    return key


def _basic_slices(key, shape):
    """A key of ints and slices, at most one per axis, as one slice per axis of `shape` and the
    axes the result keeps (an int's axis is dropped); None for any other key. An int out of
    range is an IndexError."""
    keys = key if isinstance(key, tuple) else (key,)
    if len(keys) > len(shape):
        return None
    slices, kept = [], []
    for axis, (k, n) in enumerate(zip(keys, shape)):
        if isinstance(k, slice):
            slices.append(k)
            kept.append(axis)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            if not -n <= k < n:
                raise IndexError('index %d is out of bounds for axis %d with size %d'
                                 % (k, axis, n))
            slices.append(slice(int(k) % n, int(k) % n + 1))
        else:
            return None
    for axis in range(len(keys), len(shape)):
        slices.append(slice(None))
        kept.append(axis)
    return slices, kept


def _split_bounds(indices_or_sections, axis, extent):
    """numpy's split of an axis of `extent`: `sections` equal parts, or parts at the given
    indices (clipped to the axis); the parts' bounds, each part [bounds[k], bounds[k + 1])."""
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or extent % sections:
            raise MXNetError('split_v2: %d sections do not divide axis %d of extent %d'
                             % (sections, axis, extent))
        return [i * extent // sections for i in range(sections + 1)]
    if isinstance(indices_or_sections, (tuple, list)):
        return [0] + [min(max(int(i), 0), extent) for i in indices_or_sections] + [extent]
    raise TypeError('split_v2: indices_or_sections must be an int or a tuple of ints')


def _slice_len(slc, n):
    """How many elements slice `slc` takes of an axis of n."""
    return len(range(*slc.indices(n)))


def _at_least_1d(result):
    """MXNet 1.x gives a single element as an array of shape (1,)."""
    return NDArray(result._handle.reshape((1,)), result.writable) if result.ndim == 0 else result


def _reshape_dims(source, target, reverse=False):
    """MXNet's Reshape shape codes against `source`: 0 copies a dimension, -1 infers one, -2
    copies the rest, -3 merges two, -4 splits one into the next two values; reverse reads both
    shapes from the right."""
    if reverse:
        source, target = source[::-1], target[::-1]
    out, src, inferred, i = [], 0, -1, 0
    try:
        while i < len(target):
            d = target[i]
            if d > 0:
                out.append(d)
                src += 1
            elif d == 0:
                out.append(source[src])
                src += 1
            elif d == -1:
                if inferred >= 0:
                    raise MXNetError('reshape %s: one and only one dim can be inferred'
                                     % (tuple(target),))
                inferred = len(out)
                out.append(1)
                src += 1
            elif d == -2:
                out.extend(source[src:])
                src = len(source)
            elif d == -3:
                out.append(source[src] * source[src + 1])
                src += 2
            elif d == -4:
                d0, d1, d2 = source[src], target[i + 1], target[i + 2]
                i += 2
                src += 1
                if d1 == -1:
                    d1 = d0 // d2 if d2 else 0
                if d2 == -1:
                    d2 = d0 // d1 if d1 else 0
                if d1 * d2 != d0:
                    raise MXNetError('reshape %s: -4 splits %d into %d x %d'
                                     % (tuple(target), d0, d1, d2))
                out.extend([d1, d2])
            else:
                raise MXNetError('reshape %s: %d is not a dimension or a code (0, -1, -2, -3, '
                                 '-4)' % (tuple(target), d))
            i += 1
    except IndexError:
        raise MXNetError('reshape %s: the codes read past the %d dimensions of %s'
                         % (tuple(target), len(source), tuple(source))) from None
    if inferred >= 0:
        known = int(np.prod(out, dtype=np.int64))
        total = int(np.prod(source, dtype=np.int64))
        if known == 0 or total % known:
            raise ValueError('Cannot reshape array of size %d into shape %s'
                             % (total, tuple(target)))
        out[inferred] = total // known
    return tuple(out[::-1] if reverse else out)


class NDArray:
    """An n-dimensional array on a device. Copies of the handle share memory; indexing with an
    int or a slice of rows gives a view, as in MXNet."""
    # _grad, _grad_req, _node: autograd's (Note [Imperative autograd] in autograd.py).
    # _shared: made on cpu_shared (host memory as cpu; MXNet reports the context it was made on).
    __slots__ = ('_handle', 'writable', '_grad', '_grad_req', '_node', '_shared')
    __array_priority__ = 1000.0  # numpy defers `ndarray + NDArray` to NDArray.__radd__

    def __init__(self, handle, writable=True):
        if not isinstance(handle, _cohort.NDArrayHandle):
            raise TypeError('NDArray wraps a handle; make arrays with cohort.nd.array, zeros, ...')
        self._handle = handle
        self.writable = writable
        self._grad = None
        self._grad_req = None
        self._node = None
        self._shared = False

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
        ctx = _from_text(self._handle.context)
        return Context('cpu_shared', ctx.device_id) if self._shared else ctx

    ctx = context

    @property
    def stype(self):
        return 'default'

    def tostype(self, stype):
        """A copy in storage type `stype`: 'default' (dense), the only one Cohort has."""
        if stype != 'default':
            raise ValueError("tostype: Cohort's arrays are dense ('default'), got %r" % (stype,))
        return self.copy()

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
        dims = _reshape_dims(self.shape, _shape(shape), reverse)
        if int(np.prod(dims, dtype=np.int64)) != self.size:
            raise ValueError('Cannot reshape array of size %d into shape %s'
                             % (self.size, tuple(shape)))
        return NDArray(self._handle.reshape(tuple(dims)))

    def swapaxes(self, dim1=0, dim2=0):
        return swapaxes(self, dim1, dim2)

    def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False):
        return split_v2(self, indices_or_sections, axis, squeeze_axis)

    def flatten(self, inplace=False):
        """(d0, d1 * d2 * ...); with inplace, a view of the same memory."""
        if not inplace:
            return invoke('Flatten', [self])
        return self.reshape((self.shape[0] if self.ndim else 1, -1))

    def squeeze(self, axis=None, inplace=False):
        """Without the axes of size 1 (or the given ones); with inplace, a view."""
        if not inplace:
            return invoke('squeeze', [self], axis=axis)
        axes = range(self.ndim) if axis is None else \
            [a % self.ndim for a in ((axis,) if isinstance(axis, int) else axis)]
        for a in axes:
            if axis is not None and self.shape[a] != 1:
                raise MXNetError('squeeze: axis %d has size %d, not 1' % (a, self.shape[a]))
        shape = tuple(d for i, d in enumerate(self.shape) if i not in axes or d != 1)
        return self.reshape(shape if shape else (1,))

    def expand_dims(self, axis, inplace=False):
        """A new axis of size 1 at `axis`; with inplace, a view."""
        if not inplace:
            return invoke('expand_dims', [self], axis=axis)
        if not -self.ndim - 1 <= axis <= self.ndim:
            raise MXNetError('expand_dims: axis %d out of range for %d dimensions'
                             % (axis, self.ndim))
        axis %= self.ndim + 1
        return self.reshape(self.shape[:axis] + (1,) + self.shape[axis:])

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

    # ---- autograd (Note [Imperative autograd])
    def attach_grad(self, grad_req='write', stype=None):
        """Gives the array a zero gradient buffer (.grad) that backward() fills, and makes it a
        leaf of what autograd.record() writes down."""
        if stype not in (None, 'default'):
            raise ValueError("attach_grad: Cohort's arrays are dense, stype %r" % (stype,))
        autograd.mark_variables([self], [zeros(self.shape, ctx=self.context, dtype=self.dtype)],
                                grad_req)

    @property
    def grad(self):
        return self._grad

    def detach(self):
        """The same memory, without the recorded history."""
        return NDArray(self._handle, self.writable)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        autograd.backward([self], None if out_grad is None else [out_grad], retain_graph,
                          train_mode)

    def _refuse_if_recorded(self):
        if autograd.is_recording() and autograd._tracked(self):
            raise MXNetError('Inplace operations (+=, -=, x[:]=, etc) are not supported when '
                             'recording with autograd.')

    def _recorded_getitem(self, key):
        """Indexing as operators autograd records: basic indexing (ints and slices) as slice,
        anything else (lists, arrays, None, Ellipsis: numpy's advanced indexing) as take of
        the flat positions numpy's indexing selects, whose gradient adds into each position as
        often as it is taken (MXNet records gather_nd, the same gradient)."""
        basic = _basic_slices(key, self.shape)
        if basic is None:
            return self._recorded_take(key)
        slices, kept = basic
        begin, end, step = [], [], []
        for slc, n in zip(slices, self.shape):
            b, e, st = slc.indices(n)
            begin.append(b)
            end.append(e if e >= 0 else None)
            step.append(st)
        out = invoke('slice', [self], begin=tuple(begin), end=tuple(end), step=tuple(step))
        if len(kept) < self.ndim:
            out = invoke('Reshape', [out], shape=tuple(out.shape[a] for a in kept) or (1,))
        return out

    def _recorded_take(self, key):
        def numpy_key(k):
            if isinstance(k, NDArray):
                return k.asnumpy().astype(np.int64)
            if isinstance(k, tuple):
                return tuple(numpy_key(x) for x in k)
            return k
        try:
            positions = np.arange(self.size, dtype=np.int64).reshape(self.shape)[numpy_key(key)]
        except (IndexError, TypeError, ValueError) as e:
            raise IndexError('index %r for an array of shape %s: %s' % (key, self.shape, e)) \
                from None
        flat = invoke('Reshape', [self], shape=(-1,))
        taken = invoke('take', [flat, array(positions.reshape(-1), ctx=self.context,
                                            dtype='int64')])
        return invoke('Reshape', [taken], shape=positions.shape or (1,))

    def __getitem__(self, key):
        """MXNet's indexing: ints and slices that select a contiguous block give a view of the
        same memory (as MXNet's basic indexing does), anything else a copy; a single element is
        an array of shape (1,), as MXNet 1.x gives it."""
        if autograd.is_recording() and autograd._tracked(self):
            return self._recorded_getitem(key)
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and self.ndim > 0:
            i = int(key)
            if i < -self.shape[0] or i >= self.shape[0]:
                raise IndexError('index %d is out of bounds for axis 0 with size %d'
                                 % (i, self.shape[0]))
            return _at_least_1d(NDArray(self._handle.at(i % self.shape[0]), self.writable))
        if isinstance(key, slice) and key.step in (None, 1) and self.ndim > 0:
            begin, end, _ = key.indices(self.shape[0])
            return NDArray(self._handle.slice(begin, max(begin, end)), self.writable)
        view = self._contiguous_view(key)
        if view is not None:
            return view
        return _at_least_1d(array(np.asarray(self)[_numpy_key(key)], ctx=self.context,
                                  dtype=self.dtype))

    def _contiguous_view(self, key):
        """A view for a tuple of ints and slices selecting one contiguous block, else None."""
        if not isinstance(key, tuple) or not 0 < len(key) <= self.ndim:
            return None
        basic = _basic_slices(key, self.shape)
        if basic is None:
            return None
        slices, kept = basic
        if not NDArray._basic_indexing_slice_is_contiguous(slices, self.shape):
            return None
        lengths = [_slice_len(slc, n) for slc, n in zip(slices, self.shape)]
        total = int(np.prod(lengths, dtype=np.int64))
        if total == 0:
            return None
        offset, stride = 0, 1
        for slc, n in zip(reversed(slices), reversed(self.shape)):
            offset += slc.indices(n)[0] * stride
            stride *= n
        flat = self._handle.reshape((self.size,))
        shape = tuple(lengths[d] for d in kept) or (1,)
        return NDArray(flat.slice(offset, offset + total).reshape(shape), self.writable)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether indexing with these slices (one per axis) gives a contiguous block: from the
        last axis back, once an axis is sliced to a proper subset, every earlier axis must keep
        at most one element (MXNet's rule)."""
        assert len(slc_key) == len(shape)
        lengths = [_slice_len(slc, n) for slc, n in zip(slc_key, shape)]
        if int(np.prod(lengths, dtype=np.int64)) in (0, 1):
            return True
        is_subset = False
        for slc, n, count in zip(reversed(slc_key), reversed(shape), reversed(lengths)):
            step = slc.indices(n)[2]
            if count == 0:
                return True
            if count > 1 and step != 1:
                return False
            if is_subset:
                if count > 1:
                    return False
            elif count < n:
                is_subset = True
        return True

    def __setitem__(self, key, value):
        self._refuse_if_recorded()
        if isinstance(value, NDArray):  # writing a recorded value in place, as MXNet refuses it
            value._refuse_if_recorded()
        if not self.writable:
            raise ValueError('Cannot assign to readonly NDArray')
        if isinstance(value, NDArray):
            value = value.as_in_context(Context('cpu', 0)) if value.context.device_type == 'gpu' \
                else value
            value = np.asarray(value)
        elif isinstance(value, (list, tuple)):
            value = np.asarray(value)
        key = _numpy_key(key)
        if self.context.device_type != 'gpu':
            _assign(np.asarray(self._handle), key, value)
            return
        host = self.asnumpy()
        _assign(host, key, value)
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
        self._refuse_if_recorded()
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

    def __getstate__(self):
        """MXNet's pickled state: {'handle': the array's bytes as NDArray::Save writes them}."""
        from ..util import is_np_shape
        return {'handle': bytearray(_cohort.save_raw(self._handle, is_np_shape()))}

    def __setstate__(self, state):
        """Makes this array the one `state` (from __getstate__, Cohort's or MXNet's) holds; an
        array saved from a GPU loads into host memory."""
        if not isinstance(state, dict) or not isinstance(state.get('handle'),
                                                          (bytes, bytearray)):
            raise TypeError("__setstate__: expected {'handle': bytes} as __getstate__ gives")
        handle, numpy_shape = _cohort.load_raw(bytes(state['handle']))
        _check_shape_semantics('NDArray state', [numpy_shape])
        self._handle = handle
        self._grad = self._grad_req = self._node = None


def _assign(target, key, value):
    """target[key] = value as MXNet assigns: a value of one element also fills a single
    position (numpy refuses a sequence there)."""
    if isinstance(value, np.ndarray) and value.size == 1 and np.ndim(target[key]) == 0:
        value = value.reshape(())
    target[key] = value


_SCALAR_OPS = []


py_slice = slice  # MXNet's name for the built-in slice, which its tests import from here


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
    outs = [NDArray(h) for h in _cohort.invoke(op, handles, attrs_of(kwargs, op), where._text(),
                                                autograd.is_training())]
    autograd._record(op, inputs, kwargs, outs if out is None else
                     (out if isinstance(out, (list, tuple)) else [out]))
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
    # (np.ascontiguousarray would make a 0-d source 1-d; mx.nd.array(np.ones([])) is 0-d)
    # (np.asarray, not np.array(copy=False), which numpy 2 turns into "never copy")
    source = np.asarray(source, dtype=_dtype_name(dtype), order='C')
    return _placed(NDArray(_cohort.from_numpy(source, ctx._text())), ctx)


def _placed(result, ctx):
    result._shared = ctx.device_type == 'cpu_shared'
    return result


def empty(shape, ctx=None, dtype=None):
    """An array of uninitialised memory."""
    ctx = _ctx(ctx)
    return _placed(NDArray(_cohort.empty(_shape(shape), _dtype_name(dtype) or 'float32',
                                         ctx._text())), ctx)


def swapaxes(data, dim1=0, dim2=0):
    """The array with axes dim1 and dim2 exchanged (MXNet's SwapAxis), as a transpose."""
    if not isinstance(data, NDArray):
        raise TypeError('swapaxes: expected an NDArray, got %s' % type(data).__name__)
    axes = list(range(data.ndim))
    for d in (dim1, dim2):
        if not -data.ndim <= d < data.ndim:
            raise MXNetError('swapaxes: axis %d out of range for %d dimensions' % (d, data.ndim))
    a, b = dim1 % data.ndim, dim2 % data.ndim
    axes[a], axes[b] = axes[b], axes[a]
    return invoke('transpose', [data], axes=tuple(axes))


def full(shape, val, ctx=None, dtype=mx_real_t, out=None):
    """An array with every element `val`."""
    if out is not None and tuple(out.shape) != tuple(_shape(shape)):
        raise ValueError('full: out has shape %s, not %s' % (out.shape, tuple(_shape(shape))))
    out = empty(shape, ctx, dtype) if out is None else out
    out._handle.fill(float(val))
    return out


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of zeros (dense storage only)."""
    if stype not in (None, 'default'):
        raise ValueError("stype: Cohort's arrays are dense ('default'), got %r" % (stype,))
    return full(shape, 0, ctx, dtype or mx_real_t, out=_out_of(kwargs, 'zeros'))


def ones(shape, ctx=None, dtype=None, **kwargs):
    """An array of ones."""
    return full(shape, 1, ctx, dtype or mx_real_t, out=_out_of(kwargs, 'ones'))


def _out_of(kwargs, function):
    out = kwargs.pop('out', None)
    kwargs.pop('name', None)
    if kwargs:
        raise TypeError('%s: unknown argument(s) %s' % (function, ', '.join(sorted(kwargs))))
    if out is not None and not isinstance(out, NDArray):
        raise TypeError('%s: out must be an NDArray, got %s' % (function, type(out).__name__))
    return out


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
    """The array with axes `source` moved to `destination` (ints or sequences, numpy's
    moveaxis), as a transpose."""
    if not isinstance(tensor, NDArray):
        raise TypeError('moveaxis: expected an NDArray, got %s' % type(tensor).__name__)
    ndim = tensor.ndim

    def axes(value, what):
        values = [value] if isinstance(value, (int, np.integer)) else value
        try:
            values = [int(a) for a in values]
        except TypeError:
            raise TypeError('moveaxis: %s must be an int or a sequence of ints, got %r'
                            % (what, value)) from None
        for a in values:
            if not -ndim <= a < ndim:
                raise ValueError('moveaxis: %s axis %d out of range for an array of %d '
                                 'dimensions' % (what, a, ndim))
        values = [a % ndim for a in values]
        if len(set(values)) != len(values):
            raise ValueError('moveaxis: repeated axis in %s %r' % (what, value))
        return values
    source, destination = axes(source, 'source'), axes(destination, 'destination')
    if len(source) != len(destination):
        raise ValueError('moveaxis: source and destination must have the same number of '
                         'elements')
    order = [a for a in range(ndim) if a not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
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
    from ..util import is_np_shape
    _cohort.save(str(fname), names, [a._handle for a in arrays], is_np_shape())


def _check_shape_semantics(source, numpy_shape):
    """MXNet's NDArray::Load: arrays saved under numpy shape semantics load only under them, and
    the others only outside them (a zero in a legacy shape meant 'unknown')."""
    from ..util import is_np_shape
    active = is_np_shape()
    for i, saved in enumerate(numpy_shape):
        if saved and not active:
            raise MXNetError('%s: array %d was saved in np shape semantics, must be loaded in the '
                             'same semantics. Please turn on np shape semantics in Python using '
                             '`with np_shape(True)` or decorator `use_np_shape` to scope the '
                             'code of loading the ndarray.' % (source, i))
        if active and not saved:
            raise MXNetError('%s: array %d was not saved in np shape semantics, but being loaded '
                             'in np shape semantics. Please turn off np shape semantics in Python '
                             'using `with np_shape(False)` to scope the code of loading the '
                             'ndarray.' % (source, i))


def load(fname):
    """A .params file's arrays: a dict when they are named, else a list."""
    if not isinstance(fname, str):
        raise TypeError('fname required to be a string')
    names, handles, numpy_shape = _cohort.load(fname)
    _check_shape_semantics(fname, numpy_shape)
    arrays = [NDArray(h) for h in handles]
    return dict(zip(names, arrays)) if names else arrays


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs):
    """A 2-D array with ones on the k-th diagonal (N rows, M columns, M=0 meaning N)."""
    return full_like_numpy(np.eye(int(N), int(M) or None, int(k)), ctx, dtype,
                           _out_of(kwargs, 'eye'))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=mx_real_t, **kwargs):
    """`num` evenly spaced values from start to stop (stop included with endpoint)."""
    values = np.linspace(float(start), float(stop), int(num), endpoint=bool(endpoint))
    return full_like_numpy(values, ctx, dtype, _out_of(kwargs, 'linspace'))


def full_like_numpy(values, ctx, dtype, out):
    result = array(values, ctx=ctx, dtype=dtype or mx_real_t)
    if out is None:
        return result
    result.copyto(out)
    return out


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """numpy's split: into `sections` equal parts, or at the given indices, along `axis`; each
    part is the slice_axis operator's output."""
    if not isinstance(ary, NDArray):
        raise TypeError('split_v2: expected an NDArray, got %s' % type(ary).__name__)
    bounds = _split_bounds(indices_or_sections, axis, ary.shape[axis])
    parts = []
    for begin, end in zip(bounds[:-1], bounds[1:]):
        part = invoke('slice_axis', [ary], axis=axis, begin=begin, end=max(begin, end))
        if squeeze_axis and part.shape[axis] == 1:
            part = part.reshape(part.shape[:axis % ary.ndim] + part.shape[axis % ary.ndim + 1:])
        parts.append(part)
    return parts if len(parts) > 1 else parts[0]


def from_numpy(ndarray, zero_copy=True):
    """An NDArray of a C-contiguous numpy array: sharing its memory with zero_copy (the numpy
    array is then made read-only, as MXNet does, so that writes go through the NDArray), else a
    copy. A non-contiguous array is a ValueError."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError('from_numpy: expected a numpy.ndarray, got %s' % type(ndarray).__name__)
    if not ndarray.flags['C_CONTIGUOUS']:
        raise ValueError('from_numpy: only C-contiguous arrays are supported (use '
                         'numpy.ascontiguousarray first)')
    if not zero_copy or ndarray.size == 0 or ndarray.ndim == 0:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags['WRITEABLE']:
        try:  # numpy exports only writeable memory through DLPack; read-only again below
            ndarray.flags['WRITEABLE'] = True
        except ValueError:
            raise ValueError('from_numpy: zero_copy needs an array whose memory may be '
                             'written (this one is a read-only view)') from None
    result = from_dlpack(ndarray)
    ndarray.flags['WRITEABLE'] = False
    return result


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


class CachedOp:
    """MXNet's CachedOp: a Symbol called like a function on NDArrays, its inputs in
    sym.list_inputs() order; runs the Executor's forward (one bound executor per input shapes
    and dtypes, kept), returns its output or the list of its outputs."""

    def __init__(self, sym, flags=()):
        from ..symbol import Symbol
        if not isinstance(sym, Symbol):
            raise TypeError('CachedOp: expected a Symbol, got %s' % type(sym).__name__)
        self._sym = sym
        self._inputs = sym.list_inputs()
        self._aux = set(sym.list_auxiliary_states())
        self._executors = {}

    def __call__(self, *args, **kwargs):
        out = kwargs.pop('out', None)
        if kwargs:
            raise TypeError('CachedOp: unknown argument(s) %s' % ', '.join(sorted(kwargs)))
        if len(args) != len(self._inputs):
            raise ValueError('CachedOp: %d inputs (%s), got %d' % (
                len(self._inputs), ', '.join(self._inputs), len(args)))
        for name, a in zip(self._inputs, args):
            if not isinstance(a, NDArray):
                raise TypeError('CachedOp: input %s must be an NDArray, got %s'
                                % (name, type(a).__name__))
        key = tuple((a.shape, str(a.dtype), str(a.context)) for a in args)
        exe = self._executors.get(key)
        if exe is None:
            arrays = dict(zip(self._inputs, args))
            exe = self._sym.bind(args[0].context if args else current_context(),
                                 args={k: v for k, v in arrays.items() if k not in self._aux},
                                 aux_states={k: v for k, v in arrays.items() if k in self._aux},
                                 grad_req='null')
            self._executors[key] = exe
        else:
            for name, a in zip(self._inputs, args):
                target = exe.aux_dict[name] if name in self._aux else exe.arg_dict[name]
                if target is not a and target.handle.address != a.handle.address:
                    a.copyto(target)
        outputs = [o.copy() for o in exe.forward(is_train=autograd.is_training())]
        autograd._record(self._sym, list(args), {}, outputs)
        if out is not None:
            targets = out if isinstance(out, (list, tuple)) else [out]
            for src, dst in zip(outputs, targets):
                src.copyto(dst)
            return out
        return outputs[0] if len(outputs) == 1 else outputs
