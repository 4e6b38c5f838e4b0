"""The numerical checks of MXNet 1.x's mxnet.test_utils (re-exported by cohort.test_utils):
forward and backward against expected values, gradients against central differences,
tolerances by dtype, and the small helpers MXNet's unit tests import with `from
mxnet.test_utils import *`."""
import contextlib
import numbers
import os

import numpy as np

from .util import setenv


def default_rtols():
    return {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
            np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0}


def default_atols():
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
            np.dtype(np.bool_): 0, np.dtype(np.int8): 0, np.dtype(np.uint8): 0,
            np.dtype(np.int32): 0, np.dtype(np.uint32): 0, np.dtype(np.int64): 0,
            np.dtype(np.uint64): 0}


def default_numeric_eps():
    """The finite-difference step by dtype."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def effective_dtype(dat):
    """The dtype a result was computed in (Cohort's float32 kernels have no TF32 mode)."""
    return np.dtype(dat.dtype)


def get_tolerance(dat, tol, default_tol):
    """tol when a number, else tol's (or default_tol's) entry for dat's dtype."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    return (tol or {}).get(dtype, default_tol[dtype])


def get_tols(x, y, rtol, atol):
    """The looser of x's and y's (rtol, atol)."""
    x = np.array(x) if isinstance(x, numbers.Number) else x
    y = np.array(y) if isinstance(y, numbers.Number) else y
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


def get_etol(etol=None):
    return 0 if etol is None else etol


def rand_coord_2d(x_low, x_high, y_low, y_high):
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def create_vector(size, dtype=np.int64):
    """0, 1, ..., size - 1 as an NDArray."""
    from .ndarray import arange
    return arange(start=0, stop=size, dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """Row r all r: an NDArray of shape (rows, columns)."""
    from .ndarray import array
    return array(np.repeat(np.arange(rows, dtype=dtype)[:, None], columns, axis=1), dtype=dtype)


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    from .test_utils import assert_almost_equal
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=('a', 'b')):
    """assert_almost_equal with the positions where either side is NaN left out."""
    from .test_utils import _numpy, assert_almost_equal
    a, b = np.copy(_numpy(a)), np.copy(_numpy(b))
    nan = np.logical_or(np.isnan(a), np.isnan(b))
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def retry(n):
    """Runs a test up to n times while it fails an assertion (tests of random numbers)."""
    if n <= 0:
        raise AssertionError('retry: n must be positive')

    def decorate(f):
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    f(*args, **kwargs)
                    return
                except AssertionError:
                    if i == n - 1:
                        raise
        return wrapper
    return decorate


@contextlib.contextmanager
def environment(*args):
    """Environment variables set (None: unset) inside the block: one dict, or a name and a
    value."""
    if len(args) == 1 and isinstance(args[0], dict):
        env_vars = args[0]
    elif len(args) == 2:
        env_vars = {args[0]: args[1]}
    else:
        raise AssertionError('Expecting one dict arg or two args: env var name and value')
    snapshot = {k: os.environ.get(k) for k in env_vars}
    for k, v in env_vars.items():
        setenv(k, v)
    try:
        yield
    finally:
        for k, v in snapshot.items():
            setenv(k, v)


def collapse_sum_like(a, shape):
    """numpy array a summed down to `shape` (a broadcast's inverse)."""
    if len(a.shape) < len(shape):
        raise AssertionError('collapse_sum_like: %s has fewer axes than %s' % (a.shape, shape))
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[i + lead]:
            if s != 1:
                raise AssertionError('collapse_sum_like: %s does not broadcast to %s'
                                     % (shape, a.shape))
            axes.append(i + lead)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def same_array(array1, array2):
    """Whether two NDArrays share their memory (a change to one shows in the other)."""
    from .test_utils import same
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """sym's outputs (numpy; one output alone) for numpy inputs by name."""
    from .ndarray import array
    from .test_utils import default_context
    exe = sym.bind(ctx or default_context(), args={k: array(v) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _check_dtype(dtype, allow_asnumpy=True):
    if not ((allow_asnumpy and isinstance(dtype, str) and dtype == 'asnumpy') or
            dtype in (np.float16, np.float32, np.float64)):
        raise AssertionError("dtype must be float16, float32, float64%s, got %r"
                             % (" or 'asnumpy'" if allow_asnumpy else '', dtype))


def _arrays(values, ctx, dtype):
    """numpy values (others as they are) as NDArrays of `dtype` ('asnumpy': their own)."""
    from .ndarray import array
    return {k: array(v, ctx=ctx, dtype=v.dtype if isinstance(dtype, str) else dtype)
            if isinstance(v, np.ndarray) else v for k, v in values.items()}


def _parse_location(sym, location, ctx, dtype=np.float32):
    """The arguments by name (a dict with every argument, or a list in argument order)."""
    _check_dtype(dtype)
    if isinstance(location, dict):
        if set(location) != set(sym.list_arguments()):
            raise ValueError('Symbol arguments and keys of the given location do not match.'
                             'symbol args:%s, location.keys():%s'
                             % (set(sym.list_arguments()), set(location)))
    elif isinstance(location, (list, tuple)):
        location = dict(zip(sym.list_arguments(), location))
    else:
        raise AssertionError('location must be a dict, list or tuple')
    return dict(sorted(_arrays(location, ctx, dtype).items()))


def _parse_aux_states(sym, aux_states, ctx, dtype=np.float32):
    _check_dtype(dtype)
    if aux_states is None:
        return None
    names = sym.list_auxiliary_states()
    if isinstance(aux_states, dict):
        if set(aux_states) != set(names):
            raise ValueError('Symbol aux_states names and given aux_states do not match.'
                             'symbol aux_names:%s, aux_states.keys:%s' % (set(names),
                                                                          set(aux_states)))
    else:
        aux_states = dict(zip(names, aux_states))
    from .ndarray import array
    return {k: array(v, ctx=ctx, dtype=v.dtype if isinstance(dtype, str) else dtype)
            for k, v in aux_states.items()}


def numeric_grad(executor, location, aux_states=None, eps=1e-4, use_forward_train=True,
                 dtype=np.float32):
    """Central differences of the sum of output 0 over each element of the floating arguments
    in `location` (numpy arrays by name), eps apart."""
    _check_dtype(dtype, allow_asnumpy=False)
    grads = {k: np.zeros(v.shape, dtype=dtype) for k, v in location.items()}
    location = {k: np.array(v, order='C', copy=True) for k, v in location.items()}
    for k, v in location.items():
        executor.arg_dict[k][:] = v.astype(dtype)

    def output_sum():
        if aux_states is not None:
            for key, val in aux_states.items():
                executor.aux_dict[key][:] = val
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy()

    for k, v in location.items():
        if v.dtype.kind != 'f':
            continue
        flat = v.reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps / 2.0
            executor.arg_dict[k][:] = v.astype(dtype)
            plus = output_sum()
            flat[i] = old - eps / 2.0
            executor.arg_dict[k][:] = v.astype(dtype)
            minus = output_sum()
            grads[k].reshape(-1)[i] = (plus - minus).sum() / eps
            flat[i] = old
        executor.arg_dict[k][:] = v.astype(dtype)
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float32):
    """Backward of sum(sym · a random projection) against central differences, for every
    argument (or grad_nodes: a list, or a dict of grad_req)."""
    from . import ndarray as nd
    from . import symbol as sym_mod
    from .test_utils import assert_almost_equal, default_context
    _check_dtype(dtype, allow_asnumpy=False)
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux_states is None else {k: v.asnumpy() for k, v in aux_states.items()}
    if grad_nodes is None:
        grad_nodes = sym.list_arguments()
    if isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
        grad_nodes = list(grad_nodes)
    elif isinstance(grad_nodes, (list, tuple)):
        grad_nodes = list(grad_nodes)
        grad_req = {k: 'write' for k in grad_nodes}
    else:
        raise ValueError('grad_nodes must be None, a list or a dict of grad_req')
    _, out_shape, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    out = sym_mod.make_loss(sym * sym_mod.Variable('__random_proj'))
    location['__random_proj'] = nd.array(np.random.rand(*out_shape[0]) + 0.1, ctx=ctx,
                                         dtype=dtype)
    grads_npy = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_nodes}
    grads_npy['__random_proj'] = np.random.normal(0, 0.01, size=out_shape[0])
    args_grad = {k: nd.array(v, ctx=ctx, dtype=dtype) for k, v in grads_npy.items()}
    executor = out.bind(ctx, grad_req=grad_req, args=location, args_grad=args_grad,
                        aux_states=aux_states)
    if len(executor.arg_arrays) != len(location):
        raise ValueError('Executor arg_arrays and and location len do not match.Got %d inputs '
                         'and %d locations' % (len(executor.arg_arrays), len(location)))
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16) and eps < 1e-5:
        raise AssertionError('numeric_eps %g is too small for %s' % (eps, np.dtype(dtype)))
    executor.backward()
    numeric = numeric_grad(executor, location_npy, aux_npy, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name in grad_nodes:
        names = ('NUMERICAL_%s' % name, 'BACKWARD_%s' % name)
        symbolic = executor.grad_dict[name].asnumpy()
        if grad_req[name] == 'write':
            assert_almost_equal(numeric[name], symbolic, rtol, atol, names)
        elif grad_req[name] == 'add':
            assert_almost_equal(numeric[name], symbolic - grads_npy[name], rtol, atol, names)
        elif grad_req[name] == 'null':
            assert_almost_equal(grads_npy[name], symbolic, rtol, atol, names)
        else:
            raise ValueError('Invalid grad_req %s for argument %s' % (grad_req[name], name))


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """sym's outputs at `location` against `expected` (a list, or a dict by output name)."""
    from . import ndarray as nd
    from .test_utils import assert_almost_equal, default_context
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    args_grad = {k: nd.zeros(v.shape, ctx=ctx, dtype=v.dtype) for k, v in location.items()}
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux_states)
    executor.forward(is_train=False)
    for name, expect, output in zip(sym.list_outputs(), expected, executor.outputs):
        assert_almost_equal(expect, output, rtol, atol, ('EXPECTED_%s' % name,
                                                         'FORWARD_%s' % name),
                            equal_nan=equal_nan)
    return executor.outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req='write', ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """sym's input gradients at `location` for head gradients `out_grads` against `expected`
    (a list in argument order or a dict), under grad_req (a str, list or dict)."""
    from . import ndarray as nd
    from .test_utils import assert_almost_equal, default_context
    ctx = ctx or default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux_states = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    grads_npy = {k: np.random.normal(size=v.shape) for k, v in sorted(expected.items())}
    args_grad = {k: nd.array(v, ctx=ctx, dtype=expected[k].dtype if isinstance(dtype, str)
                             else dtype) for k, v in grads_npy.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in sym.list_arguments()}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(sym.list_arguments(), grad_req))
    executor = sym.bind(ctx=ctx, args=location, args_grad=args_grad, aux_states=aux_states,
                        grad_req=grad_req)
    executor.forward(is_train=True)
    if isinstance(out_grads, (list, tuple)):
        out_grads = [nd.array(g, ctx=ctx, dtype=g.dtype if isinstance(dtype, str) else dtype)
                     if isinstance(g, np.ndarray) else g for g in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = _arrays(out_grads, ctx, dtype)
    elif out_grads is not None:
        raise AssertionError('out_grads must be a list, a dict or None')
    executor.backward(out_grads)
    for name in expected:
        names = ('EXPECTED_%s' % name, 'BACKWARD_%s' % name)
        got = args_grad[name].asnumpy()
        if grad_req[name] == 'write':
            assert_almost_equal(expected[name], got, rtol, atol, names, equal_nan=equal_nan)
        elif grad_req[name] == 'add':
            assert_almost_equal(expected[name], got - grads_npy[name], rtol, atol, names,
                                equal_nan=equal_nan)
        elif grad_req[name] == 'null':
            assert_almost_equal(grads_npy[name], got, rtol, atol, names, equal_nan=equal_nan)
        else:
            raise ValueError('Invalid grad_req %s for argument %s' % (grad_req[name], name))
    return args_grad
