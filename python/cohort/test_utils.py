"""Helpers for tests (the part of MXNet 1.x's mxnet.test_utils that its executor, symbol,
NDArray, io and metric tests use): default contexts and dtypes, random arrays and shapes,
comparisons that name where arrays differ, and environment variables."""
import os

import numpy as np

from .context import Context, current_context
from .ndarray import NDArray
from .ndarray.ndarray import array

__all__ = ['default_context', 'set_default_context', 'default_dtype', 'get_atol', 'get_rtol',
           'random_arrays', 'rand_shape_2d', 'rand_shape_3d', 'rand_shape_nd', 'rand_ndarray',
           'same', 'almost_equal', 'assert_almost_equal', 'assert_exception', 'set_env_var',
           'np_reduce']


def default_context():
    return current_context()


def set_default_context(ctx):
    Context._default_ctx.value = ctx


def default_dtype():
    return np.float32


def get_atol(atol=None):
    return 1e-20 if atol is None else atol


def get_rtol(rtol=None):
    return 1e-5 if rtol is None else rtol


def random_arrays(*shapes):
    """Standard normal numpy arrays of the given shapes (one array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def rand_shape_2d(dim0=10, dim1=10):
    return np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10):
    return (np.random.randint(1, dim0 + 1), np.random.randint(1, dim1 + 1),
            np.random.randint(1, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    low = 0 if allow_zero_size else 1
    return tuple(np.random.randint(low, dim + 1, size=num_dim))


def rand_ndarray(shape, stype='default', density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A dense NDArray of standard normal values (Cohort's arrays are dense)."""
    if stype != 'default':
        raise ValueError("rand_ndarray: Cohort's arrays are dense ('default'), got %r" % stype)
    return array(random_arrays(shape), dtype=dtype, ctx=ctx or default_context())


def _numpy(a):
    return a.asnumpy() if isinstance(a, NDArray) else np.asarray(a)


def same(a, b):
    return np.array_equal(_numpy(a), _numpy(b))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    return np.allclose(_numpy(a), _numpy(b), rtol=get_rtol(rtol), atol=get_atol(atol),
                       equal_nan=equal_nan)


def assert_almost_equal(a, b, rtol=None, atol=None, names=('a', 'b'), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """AssertionError naming the largest relative difference and where it is."""
    a, b = _numpy(a), _numpy(b)
    rtol, atol = get_rtol(rtol), get_atol(atol)
    if not use_broadcast and a.shape != b.shape:
        raise AssertionError('%s and %s have shapes %s and %s' % (names[0], names[1], a.shape,
                                                                 b.shape))
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    a, b = np.broadcast_arrays(a, b)
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    tolerance = atol + rtol * np.abs(b.astype(np.float64))
    violation = np.where(np.isnan(diff), np.inf, diff / np.maximum(tolerance, 1e-300))
    index = np.unravel_index(np.argmax(violation), violation.shape)
    raise AssertionError('Items are not equal: error %f exceeds tolerance rtol=%g, atol=%g. '
                         'Location of maximum error: %s, %s=%f, %s=%f'
                         % (violation[index], rtol, atol, str(index), names[0], a[index],
                            names[1], b[index]))


def assert_exception(f, exception_type, *args, **kwargs):
    """AssertionError unless f(*args, **kwargs) raises exception_type."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError('%s did not raise %s' % (getattr(f, '__name__', f),
                                                  exception_type.__name__))


def set_env_var(key, val, default_val=''):
    """Sets environment variable `key` to `val`; returns its previous value (default_val when it
    had none)."""
    prev_val = os.environ.get(key, default_val)
    os.environ[key] = val
    return prev_val


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """numpy_reduce_func over the axes (an int, a tuple, or None for all)."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else range(len(dat.shape))
    ret = dat
    for i in reversed(sorted(axis)):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        keepdims_shape = list(dat.shape)
        for i in axis:
            keepdims_shape[i] = 1
        ret = ret.reshape(tuple(keepdims_shape))
    return ret
