"""Helpers for tests (the part of MXNet 1.x's mxnet.test_utils that its unit tests use):
default contexts and dtypes, random arrays and shapes, comparisons that name where arrays
differ, forward, backward and numeric-gradient checks (_test_checks.py), optimizer comparisons,
MNIST from local files, and environment variables.

No __all__: `from mxnet.test_utils import *` gives MXNet's tests every public name of the
module, the imported ones too (np, mx, rnd, array, ...), as MXNet's module has none either."""
import contextlib
import gzip
import json
import logging
import numbers
import os
import shutil
import struct
import sys
import time
from collections import OrderedDict

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

import cohort as mx  # the package, whose import is running this one
from ._test_checks import (
    assert_allclose, assert_almost_equal_ignore_nan, check_numeric_gradient,
    check_symbolic_backward, check_symbolic_forward, collapse_sum_like, create_2d_tensor,
    create_vector, default_atols, default_numeric_eps, default_rtols, effective_dtype,
    environment, get_etol, get_tolerance, get_tols, numeric_grad, rand_coord_2d, retry,
    same_array, simple_forward)
from .context import Context, current_context
from .io import DataIter
from .ndarray import NDArray
from .ndarray.ndarray import array
from .symbol import Symbol
from .util import getenv, setenv, use_np


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


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """Asserts two states (arrays, nested tuples of them, or None) almost equal."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default',
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """One update of opt1 and opt2 from the same random weight and gradient (a list of shapes:
    opt2 updates `ntensors` weights in one call, opt1 one at a time): states and weights almost
    equal. Dense arrays only."""
    from . import random as _random
    from .ndarray import array
    if w_stype != 'default' or g_stype != 'default':
        raise ValueError("compare_optimizer: Cohort's arrays are dense ('default'), got %r and "
                         "%r" % (w_stype, g_stype))
    ctx = default_context()
    if not isinstance(shape, list):
        if ntensors != 1:
            raise AssertionError('compare_optimizer: one shape is one tensor')
        w2 = _random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        w1 = w2.copyto(ctx)
        g2 = _random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        g1 = g2.copyto(ctx)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    w1 = tuple(_random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(_random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2 = tuple(array(w, dtype=w.dtype) for w in w1)
    g2 = tuple(array(g, dtype=g.dtype) for g in g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


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


def random_sample(population, k):
    """k elements of population in a random order (np.random decides)."""
    assert 0 <= k <= len(population)
    population_copy = population[:]
    np.random.shuffle(population_copy)
    return population_copy[0:k]


@contextlib.contextmanager
def discard_stderr():
    """Discards what is written to the process's stderr (file descriptor 2) inside the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, 'w') as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


_FASHION_MNIST = '/usr/share/datasets/fashion-mnist'
_MNIST_FILES = ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 't10k-images-idx3-ubyte',
                't10k-labels-idx1-ubyte']


def get_mnist_ubyte():
    """The MNIST-format files under ./data. MXNet downloads MNIST; Cohort has no network, so
    files already in ./data are used, or else Debian's Fashion-MNIST (dataset-fashion-mnist: the
    same format and sizes, 60,000 and 10,000 images of 28x28) is unpacked there."""
    os.makedirs('data', exist_ok=True)
    for name in _MNIST_FILES:
        path = os.path.join('data', name)
        if os.path.exists(path):
            continue
        source = os.path.join(_FASHION_MNIST, name + '.gz')
        if not os.path.exists(source):
            raise FileNotFoundError('%s is missing and there is no network to download MNIST: '
                                    'put the file there, or install dataset-fashion-mnist (%s)'
                                    % (path, source))
        with gzip.open(source, 'rb') as src, open(path + '.part', 'wb') as dst:
            shutil.copyfileobj(src, dst)
        os.replace(path + '.part', path)


def get_mnist():
    """MNIST as numpy arrays (train_data, train_label, test_data, test_label; images (n, 1, 28,
    28) float32 in [0, 1], labels int8), from the files get_mnist_ubyte provides."""
    get_mnist_ubyte()

    def read(labels, images):
        with open(os.path.join('data', labels), 'rb') as f:
            struct.unpack('>II', f.read(8))
            label = np.frombuffer(f.read(), dtype=np.int8)
        with open(os.path.join('data', images), 'rb') as f:
            _, _, rows, cols = struct.unpack('>IIII', f.read(16))
            image = np.frombuffer(f.read(), dtype=np.uint8).reshape(len(label), 1, rows, cols)
        return label, image.astype(np.float32) / 255

    train_label, train_data = read('train-labels-idx1-ubyte', 'train-images-idx3-ubyte')
    test_label, test_data = read('t10k-labels-idx1-ubyte', 't10k-images-idx3-ubyte')
    return {'train_data': train_data, 'train_label': train_label, 'test_data': test_data,
            'test_label': test_label}


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """(train, val) MNISTIters over get_mnist_ubyte's files; flat unless input_shape is 3-d."""
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train = mx.io.MNISTIter(image='data/train-images-idx3-ubyte',
                            label='data/train-labels-idx1-ubyte', input_shape=input_shape,
                            batch_size=batch_size, shuffle=True, flat=flat, num_parts=num_parts,
                            part_index=part_index)
    val = mx.io.MNISTIter(image='data/t10k-images-idx3-ubyte', label='data/t10k-labels-idx1-ubyte',
                          input_shape=input_shape, batch_size=batch_size, flat=flat,
                          num_parts=num_parts, part_index=part_index)
    return train, val


def list_gpus():
    """The GPU ids this process sees."""
    return list(range(mx.context.num_gpus()))


class DummyIter(DataIter):
    """The first batch of real_iter, again and again (benchmarks without data loading)."""

    def __init__(self, real_iter):
        super(DummyIter, self).__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        return self.the_batch


def get_cifar10():
    """The CIFAR-10 record files under ./data/cifar. MXNet downloads them; Cohort has no network,
    so they must be there already (train.rec, test.rec, train.lst, test.lst)."""
    missing = [n for n in ('train.rec', 'test.rec', 'train.lst', 'test.lst')
               if not os.path.exists(os.path.join('data', 'cifar', n))]
    if missing:
        raise FileNotFoundError('data/cifar lacks %s and there is no network to download '
                                'CIFAR-10: put the files there' % ', '.join(missing))


def _tolerance(tol, dtype, default):
    if isinstance(tol, dict):
        return tol.get(np.dtype(dtype), default)
    return default if tol is None else tol


_DEFAULT_RTOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4,
                 np.dtype(np.float64): 1e-5, np.dtype(np.uint8): 0, np.dtype(np.int32): 0,
                 np.dtype(np.int64): 0}
_DEFAULT_ATOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3,
                 np.dtype(np.float64): 1e-20, np.dtype(np.uint8): 0, np.dtype(np.int32): 0,
                 np.dtype(np.int64): 0}


def check_consistency(sym, ctx_list, scale=1.0, grad_req='write', arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64):
    """Runs `sym` (or one symbol per context) forward and backward on every context of ctx_list
    (dicts of ctx, input shapes and type_dict) from the same random inputs, and checks that
    outputs and gradients agree with those of the most precise run (or ground_truth). Returns
    the ground truth: output and gradient arrays by name, as numpy arrays."""
    if not isinstance(ctx_list, (list, tuple)) or not ctx_list:
        raise ValueError('check_consistency: ctx_list must be a non-empty list of dicts')
    syms = list(sym) if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    if len(syms) != len(ctx_list):
        raise ValueError('check_consistency: %d symbols for %d contexts'
                         % (len(syms), len(ctx_list)))
    output_names = syms[0].list_outputs()
    arg_names = syms[0].list_arguments()
    exes = []
    for s, spec in zip(syms, ctx_list):
        spec = dict(spec)
        ctx = spec.pop('ctx')
        type_dict = spec.pop('type_dict', {})
        if s.list_arguments() != arg_names:
            raise ValueError('check_consistency: the symbols have different arguments')
        exes.append(s.simple_bind(ctx=ctx, grad_req=grad_req, type_dict=type_dict, **spec))
    arg_params = dict(arg_params or {})
    aux_params = dict(aux_params or {})
    for name, arr in exes[0].arg_dict.items():
        if name not in arg_params:
            arg_params[name] = (np.random.uniform(-scale, scale, arr.shape) if use_uniform
                                else np.random.normal(size=arr.shape, scale=scale)
                                ).astype(rand_type)
    for name, arr in exes[0].aux_dict.items():
        if name not in aux_params:
            aux_params[name] = np.zeros(arr.shape, dtype=rand_type)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = np.asarray(arg_params[name]).astype(arr.dtype)
        for name, arr in exe.aux_dict.items():
            arr[:] = np.asarray(aux_params[name]).astype(arr.dtype)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    max_idx = int(np.argmax([np.dtype(d).itemsize for d in dtypes]))

    def check(results, what):
        truth = results[max_idx] if ground_truth is None else ground_truth
        for i, result in enumerate(results):
            if i == max_idx and ground_truth is None:
                continue
            for name in truth:
                if name not in result:
                    continue
                r = _tolerance(rtol, dtypes[i], _DEFAULT_RTOL.get(dtypes[i], 1e-4))
                a = _tolerance(atol, dtypes[i], _DEFAULT_ATOL.get(dtypes[i], 1e-3))
                try:
                    assert_almost_equal(truth[name], result[name], rtol=r, atol=a,
                                        equal_nan=equal_nan,
                                        names=('%s %s of %s' % (what, name, ctx_list[max_idx]),
                                               '%s %s of %s' % (what, name, ctx_list[i])))
                except AssertionError as e:
                    print('Predict Err: ctx %d vs ctx %d at %s' % (i, max_idx, name))
                    if raise_on_err:
                        raise e
                    print(e)

    for exe in exes:
        exe.forward(is_train=False)
    check([dict(zip(output_names, [o.asnumpy() for o in exe.outputs])) for exe in exes],
          'forward')
    if grad_req == 'null':
        return {k: v for k, v in zip(output_names, [o.asnumpy() for o in exes[max_idx].outputs])}
    for exe in exes:
        exe.forward(is_train=True)
    out_grads = [np.random.normal(size=o.shape, scale=scale).astype(rand_type)
                 for o in exes[0].outputs]
    for exe in exes:
        exe.backward([array(g.astype(o.dtype), ctx=o.context)
                      for g, o in zip(out_grads, exe.outputs)])
    results = []
    for exe in exes:
        result = dict(zip(output_names, [o.asnumpy() for o in exe.outputs]))
        for name, g in exe.grad_dict.items():
            if g is not None:
                result[name] = g.asnumpy()
        results.append(result)
    check(results, 'train')
    return results[max_idx] if ground_truth is None else ground_truth


# The names MXNet's tests take from here with `import *` without this module using them.
_REEXPORTED = (json, logging, numbers, time, OrderedDict, rnd, npt, Symbol, use_np,
               assert_allclose, assert_almost_equal_ignore_nan, check_numeric_gradient,
               check_symbolic_backward, check_symbolic_forward, collapse_sum_like,
               create_2d_tensor, create_vector, default_atols, default_numeric_eps, default_rtols,
               effective_dtype, environment, get_etol, get_tolerance, get_tols, getenv,
               numeric_grad, rand_coord_2d, retry, same_array, setenv, simple_forward)
