"""cohort.nd against numpy: creation, dtypes, zero-copy sharing, views, indexing and
assignment, arithmetic through Cohort's kernels, save/load, and errors for bad arguments."""
import os

import numpy as np
import pytest

import cohort as mx


def test_array_defaults_to_float32_as_mxnet():
    assert mx.nd.array([[1, 2], [3, 4]]).dtype == np.float32
    assert mx.nd.array(np.arange(4, dtype=np.float64)).dtype == np.float32
    assert mx.nd.array(np.arange(4), dtype='int32').dtype == np.int32
    a = mx.nd.array(np.arange(6, dtype=np.int64).reshape(2, 3), dtype=np.int64)
    assert a.dtype == np.int64 and a.shape == (2, 3) and a.size == 6 and a.ndim == 2
    assert mx.nd.array(a).dtype == np.int64  # an NDArray keeps its own dtype
    assert a.context == mx.cpu(0) and a.stype == 'default'


def test_creation_functions():
    np.testing.assert_array_equal(mx.nd.zeros((2, 3)).asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(mx.nd.ones(4).asnumpy(), np.ones(4))
    np.testing.assert_array_equal(mx.nd.full((2, 2), 7.5).asnumpy(), np.full((2, 2), 7.5))
    assert mx.nd.zeros((2,), dtype='int32').dtype == np.int32
    assert mx.nd.empty((3, 1)).shape == (3, 1)
    np.testing.assert_array_equal(mx.nd.arange(0, 5).asnumpy(), np.arange(0, 5, dtype='f'))
    np.testing.assert_array_equal(mx.nd.arange(1, 7, 2).asnumpy(), [1, 3, 5])


def test_numpy_shares_host_memory_without_a_copy():
    a = mx.nd.zeros((3, 4))
    view = np.asarray(a)
    assert view.ctypes.data == a.handle.address  # the same bytes
    view[1, 2] = 5
    assert a.asnumpy()[1, 2] == 5
    copy = a.asnumpy()
    copy[0, 0] = 9
    assert a.asnumpy()[0, 0] == 0  # asnumpy is a copy, as in MXNet


def test_rows_and_slices_are_views():
    a = mx.nd.array(np.arange(12).reshape(3, 4))
    row = a[1]
    assert row.shape == (4,) and row.handle.address == a.handle.address + 16
    row[:] = 0
    np.testing.assert_array_equal(a.asnumpy()[1], np.zeros(4))
    part = a[1:3]
    assert part.shape == (2, 4) and part.handle.shares_storage_with(a.handle)
    assert a[-1].asnumpy().tolist() == [8, 9, 10, 11]
    with pytest.raises(IndexError):
        a[3]
    np.testing.assert_array_equal(a[:, 1].asnumpy(), [1, 0, 9])  # a copy, through numpy


def test_assignment():
    a = mx.nd.zeros((3, 2))
    a[:] = 1
    a[0] = 2
    a[1:] = mx.nd.array([[3, 4], [5, 6]])
    np.testing.assert_array_equal(a.asnumpy(), [[2, 2], [3, 4], [5, 6]])
    a[:] = np.array([[1, 1], [2, 2], [3, 3]])
    np.testing.assert_array_equal(a.asnumpy(), [[1, 1], [2, 2], [3, 3]])


def test_arithmetic_runs_the_kernels_and_matches_numpy():
    x = np.array([[1.5, -2], [3, 4]], dtype='f')
    y = np.array([[0.5, 2], [-1, 8]], dtype='f')
    a, b = mx.nd.array(x), mx.nd.array(y)
    for got, want in [(a + b, x + y), (a - b, x - y), (a * b, x * y), (a / b, x / y),
                      (a + 2, x + 2), (2 + a, 2 + x), (a - 2, x - 2), (2 - a, 2 - x),
                      (a * 3, x * 3), (3 * a, 3 * x), (a / 4, x / 4), (4 / a, 4 / x), (-a, -x),
                      (a + np.ones((2, 2), 'f'), x + 1)]:
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
        assert got.dtype == np.float32
    row = mx.nd.array([[10, 20]])
    np.testing.assert_array_equal((a + row).asnumpy(), x + [[10, 20]])  # broadcast
    np.testing.assert_array_equal((a == b).asnumpy(), (x == y).astype('f'))
    np.testing.assert_array_equal((a > 2).asnumpy(), (x > 2).astype('f'))
    c = a.copy()
    c += b
    c *= 2
    np.testing.assert_allclose(c.asnumpy(), (x + y) * 2)
    np.testing.assert_allclose(a.asnumpy(), x)  # copy() was a copy


def test_operators_by_name_and_fluent_methods():
    x = np.array([[1, -2, 3], [-4, 5, -6]], dtype='f')
    a = mx.nd.array(x)
    np.testing.assert_array_equal(mx.nd.relu(a).asnumpy(), np.maximum(x, 0))
    np.testing.assert_allclose(mx.nd.sum(a, axis=1).asnumpy(), x.sum(axis=1))
    np.testing.assert_allclose(a.sum().asnumpy(), x.sum())
    np.testing.assert_allclose(a.T.asnumpy(), x.T)
    np.testing.assert_allclose(mx.nd.dot(a, a.T).asnumpy(), x @ x.T)
    np.testing.assert_allclose(mx.nd.exp(a).asnumpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(mx.nd.softmax(a).asnumpy(),
                               np.exp(x) / np.exp(x).sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(mx.nd.Flatten(mx.nd.zeros((2, 3, 4))).shape, (2, 12))
    np.testing.assert_array_equal(mx.nd.flatten(mx.nd.zeros((2, 3, 4))).shape, (2, 12))  # alias
    out = mx.nd.zeros((2, 3))
    assert mx.nd.relu(a, out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(x, 0))
    w = mx.nd.array(np.ones((4, 3), 'f'))
    fc = mx.nd.FullyConnected(a, weight=w, no_bias=True, num_hidden=4)
    np.testing.assert_allclose(fc.asnumpy(), x @ np.ones((3, 4)))


def test_reshape_is_a_view_with_mxnet_codes():
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert a.reshape((6, 4)).shape == (6, 4)
    assert a.reshape(0, -1).shape == (2, 12)
    assert a.reshape(-1).handle.address == a.handle.address
    # MXNet's codes, shapes as MXNet 1.9.1 gives them; -2, -3, -4 and reverse stay views.
    assert a.reshape(-2).shape == (2, 3, 4) and a.reshape(-3, -1).shape == (6, 4)
    assert a.reshape(0, -4, 3, -1, 0).shape == (2, 3, 1, 4)
    assert a.reshape(-1, 0, reverse=True).shape == (6, 4)
    assert a.reshape(-3, -2).handle.address == a.handle.address
    with pytest.raises(ValueError, match='Cannot reshape array of size 24'):
        a.reshape((5, 5))
    with pytest.raises(mx.MXNetError, match='one and only one'):
        a.reshape(-1, -1)
    flat = a.flatten(inplace=True)
    flat[0] = -1  # a view: the source changes
    assert a.asnumpy()[0].min() == -1 and flat.shape == (2, 12)
    assert a.expand_dims(1, inplace=True).shape == (2, 1, 3, 4)
    assert mx.nd.ones((1, 3, 1)).squeeze(inplace=True).shape == (3,)


def test_save_and_load_round_trip(tmp_path):
    path = str(tmp_path / 'x.params')
    d = {'arg:w': mx.nd.array([[1, 2]]), 'aux:n': mx.nd.array([3], dtype='int64')}
    mx.nd.save(path, d)
    back = mx.nd.load(path)
    assert sorted(back) == ['arg:w', 'aux:n']
    np.testing.assert_array_equal(back['arg:w'].asnumpy(), [[1, 2]])
    assert back['aux:n'].dtype == np.int64
    mx.nd.save(path, [mx.nd.ones(2)])
    assert isinstance(mx.nd.load(path), list)


def test_numpy_shape_files_load_only_under_numpy_shape(tmp_path):
    # MXNet's NDArray::Load: V3 arrays (saved with np_shape on) need np_shape on, V2 ones off.
    path = str(tmp_path / 'x.params')
    arrays = [mx.nd.zeros((2, 0, 1)), mx.nd.arange(3)]
    mx.nd.save(path, arrays)
    with mx.np_shape(True):
        with pytest.raises(mx.MXNetError, match='not saved in np shape semantics'):
            mx.nd.load(path)
        mx.nd.save(path, arrays + [mx.nd.array(5)])
        back = mx.nd.load(path)
    assert [a.shape for a in back] == [(2, 0, 1), (3,), ()]
    np.testing.assert_array_equal(back[2].asnumpy(), 5)
    with pytest.raises(mx.MXNetError, match='saved in np shape semantics'):
        mx.nd.load(path)


def test_pickle_state_is_mxnets(tmp_path):
    import pickle
    a = mx.nd.array([[1, 2], [3, 4]], dtype='int32')
    state = a.__getstate__()
    # MXNet 1.9.1's bytes for the same array: V2 magic, dense, ndim 2 (2, 2), cpu(0), int32, data.
    assert bytes(state['handle']).hex() == (
        'c9fa93f9' '00000000' '02000000' '0200000000000000' '0200000000000000'
        '01000000' '00000000' '04000000' '01000000' '02000000' '03000000' '04000000')
    b = mx.nd.zeros(1)
    b.__setstate__(state)
    assert b.dtype == np.int32
    np.testing.assert_array_equal(b.asnumpy(), [[1, 2], [3, 4]])
    # MXNet's state of mx.nd.arange(1, ctx=mx.gpu()) loads into host memory.
    gpu_state = bytearray(b'\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00'
                          b'\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00'
                          b'\x00\x00\x00\x00\x00\x00\x00\x00')
    b.__setstate__({'handle': gpu_state})
    assert b.context == mx.cpu() and b.shape == (1,) and b.asscalar() == 0
    with pytest.raises(mx.MXNetError, match='unexpected bytes after the array'):
        b.__setstate__({'handle': gpu_state + b'\x00'})
    with pytest.raises(TypeError):
        b.__setstate__({'handle': 3})
    assert pickle.loads(pickle.dumps(a)).asnumpy().tolist() == [[1, 2], [3, 4]]


def test_reads_mxnet_written_params(data_dir):
    params = mx.nd.load(os.path.join(data_dir, 'mxnet', 'checkpoint_v2.params'))
    np.testing.assert_array_equal(params['arg:fc1_bias'].asnumpy(), [1, 4, 4, 4, 5, 6])
    assert params['arg:conv0_weight'].shape == (2, 3, 3, 3)  # as cohort-params shows them


def test_scalars_repr_bool_and_len():
    assert mx.nd.array([2.5]).asscalar() == 2.5
    with pytest.raises(ValueError):
        mx.nd.ones(2).asscalar()
    assert bool(mx.nd.array([1])) and not bool(mx.nd.array([0]))
    with pytest.raises(ValueError):
        bool(mx.nd.ones(2))
    assert len(mx.nd.zeros((5, 2))) == 5
    assert repr(mx.nd.array([[1, 2]])) == '\n[[1. 2.]]\n<NDArray 1x2 @cpu(0)>'


def test_bad_arguments_are_python_exceptions():
    with pytest.raises(TypeError):
        mx.nd.zeros('a')
    with pytest.raises(TypeError):
        mx.nd.zeros((2,), dtype='no such type')
    with pytest.raises(TypeError):
        mx.nd.array(object())
    with pytest.raises(TypeError):
        mx.nd.relu(3)
    with pytest.raises(TypeError):
        mx.nd.FullyConnected(mx.nd.ones((2, 2)), num_hidden=2, nonsense=mx.nd.ones(2))
    with pytest.raises(mx.MXNetError, match='unknown'):
        mx.nd.relu(mx.nd.ones(2), frobnicate=3)
    with pytest.raises(mx.MXNetError):
        mx.nd.ones((2, 3)) + mx.nd.ones((4, 5))  # shapes that do not broadcast
    with pytest.raises(mx.MXNetError):
        mx.nd.load('/nonexistent/x.params')
    with pytest.raises(TypeError):
        mx.nd.save('/tmp/x.params', {1: mx.nd.ones(1)})
    with pytest.raises(ValueError):
        mx.Context('tpu', 0)


def test_random_samples_follow_the_seed():
    mx.random.seed(7)
    a = mx.random.uniform(-1, 3, shape=(200, 500)).asnumpy()
    b = mx.nd.random.normal(2, 0.5, shape=(100000,)).asnumpy()
    mx.random.seed(7)
    np.testing.assert_array_equal(mx.random.uniform(-1, 3, shape=(200, 500)).asnumpy(), a)
    np.testing.assert_array_equal(mx.nd.random.normal(2, 0.5, shape=(100000,)).asnumpy(), b)
    assert a.min() >= -1 and a.max() < 3 and abs(a.mean() - 1) < 0.02
    assert abs(b.mean() - 2) < 0.01 and abs(b.std() - 0.5) < 0.01
    assert not np.array_equal(mx.random.uniform(shape=(10,)).asnumpy(),
                              mx.random.uniform(shape=(10,)).asnumpy())
    assert mx.random.uniform().shape == (1,)
    with pytest.raises(ValueError):
        mx.random.seed('x')


def test_elementwise_functions_match_numpy():
    x = np.array([[-2.5, -0.5, 0.0, 0.5, 1.5, 2.5]], dtype='f')
    a = mx.nd.array(x)
    np.testing.assert_array_equal(mx.nd.floor(a).asnumpy(), np.floor(x))
    np.testing.assert_array_equal(a.ceil().asnumpy(), np.ceil(x))
    np.testing.assert_array_equal(mx.nd.rint(a).asnumpy(), np.rint(x))  # halves to even
    np.testing.assert_array_equal(mx.nd.round(a).asnumpy(),
                                  np.sign(x) * np.floor(np.abs(x) + 0.5))  # away from zero
    np.testing.assert_array_equal(mx.nd.fix(a).asnumpy(), np.fix(x))
    np.testing.assert_array_equal(mx.nd.sign(a).asnumpy(), np.sign(x))
    np.testing.assert_array_equal(abs(a).asnumpy(), np.abs(x))
    for name, fn in [('sin', np.sin), ('cos', np.cos), ('tan', np.tan), ('arctan', np.arctan),
                     ('sinh', np.sinh), ('cosh', np.cosh), ('arcsinh', np.arcsinh),
                     ('expm1', np.expm1), ('degrees', np.degrees), ('radians', np.radians)]:
        np.testing.assert_allclose(getattr(mx.nd, name)(a).asnumpy(), fn(x), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    u = np.array([0.1, 0.5, 0.9], dtype='f')
    for name, fn in [('arcsin', np.arcsin), ('arccos', np.arccos), ('arctanh', np.arctanh),
                     ('log10', np.log10), ('log2', np.log2), ('log1p', np.log1p),
                     ('reciprocal', np.reciprocal), ('rsqrt', lambda v: 1 / np.sqrt(v)),
                     ('cbrt', np.cbrt)]:
        np.testing.assert_allclose(getattr(mx.nd, name)(mx.nd.array(u)).asnumpy(), fn(u),
                                   rtol=1e-5, err_msg=name)


def test_shape_functions_as_mxnet():
    # Shapes printed by MXNet 1.9.1 for the same calls.
    assert mx.nd.squeeze(mx.nd.ones((1, 1))).shape == (1,)
    assert mx.nd.squeeze(mx.nd.ones((2, 1, 3, 1))).shape == (2, 3)
    assert mx.nd.squeeze(mx.nd.ones((2, 1, 3, 1)), axis=1).shape == (2, 3, 1)
    assert mx.nd.ones((2, 3)).expand_dims(axis=-1).shape == (2, 3, 1)
    with pytest.raises(mx.MXNetError):
        mx.nd.squeeze(mx.nd.ones((2, 3)), axis=0)
    np.testing.assert_array_equal(mx.nd.zeros_like(mx.nd.ones(3)).asnumpy(), [0, 0, 0])
    np.testing.assert_array_equal(mx.nd.ones((2, 2)).zeros_like().asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(mx.nd.ones_like(mx.nd.zeros(2)).asnumpy(), [1, 1])


def test_module_level_arithmetic_takes_arrays_and_numbers():
    x = np.array([[1, -2], [3, 0.5]], dtype='f')
    a = mx.nd.array(x)
    np.testing.assert_array_equal(mx.nd.maximum(a, 0).asnumpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(mx.nd.maximum(0, a).asnumpy(), np.maximum(x, 0))
    np.testing.assert_array_equal(mx.nd.minimum(a, a * 2).asnumpy(), np.minimum(x, x * 2))
    np.testing.assert_allclose(mx.nd.divide(a, 4).asnumpy(), x / 4)
    np.testing.assert_allclose(mx.nd.power(mx.nd.abs(a), 2).asnumpy(), np.abs(x) ** 2, rtol=1e-6)
    np.testing.assert_array_equal(mx.nd.subtract(1, a).asnumpy(), 1 - x)
    np.testing.assert_array_equal(mx.nd.lesser(a, 1).asnumpy(), (x < 1).astype('f'))
    assert mx.nd.maximum(2, 3) == 3 and mx.nd.add(1, 2) == 3
    with pytest.raises(TypeError):
        mx.nd.maximum('a', a)


def test_argmax_and_numpy_dispatch():
    x = np.array([[0.3, 0.7, 0.1], [0.9, 0.2, 0.9]], dtype='f')
    a = mx.nd.array(x)
    got = np.argmax(a, axis=1)  # numpy calls NDArray.argmax, as with MXNet's arrays
    assert isinstance(got, mx.nd.NDArray)
    np.testing.assert_array_equal(got.asnumpy(), [1, 0])  # the first of equal maxima
    np.testing.assert_array_equal(mx.nd.argmin(a, axis=0).asnumpy(), [0, 1, 0])
    assert a.argmax().asnumpy().tolist() == [3]  # flattened
    np.testing.assert_array_equal(mx.nd.argmax_channel(a).asnumpy(), [1, 0])


def test_dlpack_both_ways_without_a_copy():
    a = mx.nd.array(np.arange(6).reshape(2, 3), dtype='int32')
    n = np.from_dlpack(a)  # numpy consumes Cohort's capsule
    assert n.ctypes.data == a.handle.address and n.dtype == np.int32
    np.testing.assert_array_equal(n, [[0, 1, 2], [3, 4, 5]])
    src = np.arange(8, dtype=np.float64).reshape(2, 4)
    b = mx.nd.from_dlpack(src)  # Cohort consumes numpy's
    assert b.handle.address == src.ctypes.data and b.dtype == np.float64 and b.shape == (2, 4)
    src[0, 0] = 42  # the same memory
    assert b.asnumpy()[0, 0] == 42
    del src
    np.testing.assert_array_equal((b + 1).asnumpy()[1], [5, 6, 7, 8])  # still alive
    c = mx.nd.from_dlpack(mx.nd.to_dlpack_for_read(mx.nd.ones((3,))))
    np.testing.assert_array_equal(c.asnumpy(), [1, 1, 1])
    assert a.__dlpack_device__() == (1, 0)
    with pytest.raises(ValueError, match='row-major'):
        mx.nd.from_dlpack(np.ones((3, 4))[:, ::2])
    with pytest.raises(TypeError):
        mx.nd.from_dlpack(3)
    with pytest.raises(ValueError, match='empty'):
        mx.nd.from_dlpack(np.ones((0, 3)))


def test_mxnet_ndarray_helpers(tmp_path):
    """concatenate, moveaxis, onehot_encode and load_frombuffer as MXNet 1.x's test_ndarray
    uses them."""
    parts = [np.random.uniform(-1, 1, s).astype('f') for s in [(2, 3, 4), (2, 2, 4), (2, 1, 4)]]
    joined = mx.nd.concatenate([mx.nd.array(p) for p in parts], axis=1)
    np.testing.assert_array_equal(joined.asnumpy(), np.concatenate(parts, axis=1))
    x = mx.nd.array(np.arange(12).reshape(2, 2, 3))
    np.testing.assert_array_equal(mx.nd.moveaxis(x, 0, 2).asnumpy(),
                                  np.moveaxis(np.arange(12).reshape(2, 2, 3), 0, 2))
    assert mx.nd.moveaxis(x, 2, 0).shape == (3, 2, 2)
    out = mx.nd.zeros((3, 4))
    mx.nd.onehot_encode(mx.nd.array([1, 3, 0]), out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.eye(4)[[1, 3, 0]])
    fname = str(tmp_path / 'a.params')
    mx.nd.save(fname, {'w': mx.nd.ones((2, 2))})
    with open(fname, 'rb') as f:
        data = f.read()
    loaded = mx.nd.load_frombuffer(data)
    np.testing.assert_array_equal(loaded['w'].asnumpy(), np.ones((2, 2)))
    with pytest.raises(mx.MXNetError):
        mx.nd.load_frombuffer(data[:-10])  # torn: an error, as MXNet


def test_mxnet_creation_details():
    # Shapes and values as MXNet 1.9.1 gives them.
    assert mx.nd.array(np.ones([])).shape == ()
    out = mx.nd.zeros((2, 2))
    assert mx.nd.ones((2, 2), out=out) is out and out.asnumpy().sum() == 4
    mx.nd.full((2, 2), 3, out=out)
    assert out.asnumpy().sum() == 12
    with pytest.raises(ValueError, match='out has shape'):
        mx.nd.zeros((3,), out=out)
    x = mx.nd.zeros((1, 2, 3, 4))
    assert mx.nd.moveaxis(x, [0, 2], [3, 0]).shape == (3, 2, 4, 1)
    assert mx.nd.moveaxis(x, range(4), range(4)).shape == (1, 2, 3, 4)
    with pytest.raises(ValueError, match='repeated axis'):
        mx.nd.moveaxis(x, [0, 0], [1, 2])
    assert mx.nd.broadcast_to(mx.nd.ones((1, 4)), shape=np.array([3, 4])).shape == (3, 4)


def test_relu_and_maximum_keep_nan():
    x = mx.nd.array([np.nan, -1.0, 2.0])
    out = mx.nd.relu(x).asnumpy()
    assert np.isnan(out[0]) and list(out[1:]) == [0, 2]
    assert np.isnan(mx.nd.maximum(x, mx.nd.zeros((3,))).asnumpy()[0])


def test_add_n_and_element_wise_sum():
    arrays = [mx.nd.array(np.full((2, 3), v)) for v in (1.0, 2.0, 4.0)]
    np.testing.assert_array_equal(mx.nd.add_n(*arrays).asnumpy(), np.full((2, 3), 7.0))
    np.testing.assert_array_equal(mx.nd.ElementWiseSum(*arrays[:1]).asnumpy(), np.ones((2, 3)))
    ints = [mx.nd.array([2 ** 30, 1], dtype='int32')] * 2
    assert mx.nd.add_n(*ints).asnumpy().tolist() == [-(2 ** 31), 2]  # wraps as numpy
    with pytest.raises(mx.MXNetError):
        mx.nd.add_n(mx.nd.ones((2,)), mx.nd.ones((3,)))


def test_slice_assign_operators_and_int_slices():
    x = mx.nd.array(np.arange(15).reshape(3, 5))
    y = mx.nd._internal._crop_assign(x, -mx.nd.ones((2, 2)), begin=(0, 1), end=(2, None),
                                     step=(1, 2))
    expected = np.arange(15).reshape(3, 5).astype('f')
    expected[0:2, 1::2] = -1
    np.testing.assert_array_equal(y.asnumpy(), expected)
    mx.nd._internal._crop_assign_scalar(x, scalar=5, begin=(1, None), end=(3, None), out=x)
    expected = np.arange(15).reshape(3, 5).astype('f')
    expected[1:3] = 5
    np.testing.assert_array_equal(x.asnumpy(), expected)
    ints = mx.nd.array(np.arange(12).reshape(3, 4), dtype='int32')
    window = mx.nd.slice(ints, begin=(None, 3), end=(None, 0), step=(2, -2))
    assert window.dtype == np.int32
    np.testing.assert_array_equal(window.asnumpy(), np.arange(12).reshape(3, 4)[::2, 3:0:-2])
    with pytest.raises(mx.MXNetError, match='rhs'):
        mx.nd._internal._slice_assign(x, mx.nd.ones((3, 3)), begin=(0, 0), end=(2, 2))


def test_index_arrays_eye_linspace_split_v2_and_contrib():
    a = mx.nd.array([[1, 2], [3, 4]])
    assert a[mx.nd.array([1, 1, 0]), mx.nd.array([0, 1, 0])].asnumpy().tolist() == [3, 4, 1]
    np.testing.assert_array_equal(mx.nd.eye(3, 4, 1).asnumpy(), np.eye(3, 4, 1))
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5).asnumpy(), [0, 0.25, 0.5, 0.75, 1])
    parts = mx.nd.split_v2(mx.nd.array(np.arange(24).reshape(6, 4)), (2, 5))
    assert [p.shape for p in parts] == [(2, 4), (3, 4), (1, 4)]
    assert parts[2].asnumpy().tolist() == [[20, 21, 22, 23]]
    x = mx.nd.array([1.0, np.inf, np.nan])
    assert mx.nd.contrib.isinf(x).asnumpy().tolist() == [0, 1, 0]
    assert mx.nd.contrib.isfinite(x).asnumpy().tolist() == [1, 0, 0]
    assert mx.nd.contrib.isnan(x).asnumpy().tolist() == [0, 0, 1]


def test_pick_choose_and_fill_element_as_mxnet():
    # Values printed by MXNet 1.9.1 for the same calls.
    x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    assert mx.nd.pick(x, mx.nd.array([0, 1, 5]), axis=1).asnumpy().tolist() == [1, 4, 6]
    assert mx.nd.pick(x, mx.nd.array([0, -1, 5]), axis=1, mode='wrap').asnumpy().tolist() == \
        [1, 4, 6]
    assert mx.nd.pick(x, mx.nd.array([[1], [0], [1]]), keepdims=True).shape == (3, 1)
    assert mx.nd.choose_element_0index(x, mx.nd.array([1, 0, 1])).asnumpy().tolist() == \
        [2, 3, 6]
    filled = mx.nd.fill_element_0index(x, mx.nd.array([9, 8, 7]), mx.nd.array([1, 0, 1]))
    assert filled.asnumpy().tolist() == [[1, 9], [8, 4], [5, 7]]
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.pick(x, mx.nd.array([1, 0, 1]), axis=1)
    y.backward(mx.nd.array([10, 20, 30]))
    assert x.grad.asnumpy().tolist() == [[0, 10], [20, 0], [0, 30]]


def test_batch_take_as_mxnet():
    # Values printed by MXNet 1.9.1: positions are int32 and clipped to the row.
    x = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    take = mx.nd.batch_take(x, mx.nd.array([0, 1, 5], dtype='int32'))
    assert take.dtype == np.float32 and take.asnumpy().tolist() == [1, 4, 6]
    assert mx.nd.batch_take(x, mx.nd.array([-1, 1, 0], dtype='int32')).asnumpy().tolist() == \
        [1, 4, 5]
    ints = mx.nd.batch_take(x.astype('int64'), mx.nd.array([1, 0, 1], dtype='int32'))
    assert ints.dtype == np.int64 and ints.asnumpy().tolist() == [2, 3, 6]
    with pytest.raises(mx.MXNetError, match='one position for each of the 3 rows'):
        mx.nd.batch_take(x, mx.nd.array([0, 1], dtype='int32'))
    with pytest.raises(mx.MXNetError, match='indices'):
        mx.nd.batch_take(x, mx.nd.array([0, 1, 1]))  # float32 positions, as MXNet refuses
    # MXNet registers no gradient: binding one through it is refused, stop_gradient binds.
    a, i = mx.sym.var('a'), mx.sym.var('i')
    y = mx.sym.batch_take(a, i)
    assert y.infer_type(a=np.float64)[1] == [np.float64]
    assert y.infer_shape(a=(3, 4))[0] == [(3, 4), (3,)]
    exe = mx.sym.stop_gradient(y).simple_bind(mx.cpu(), a=(3, 2), type_dict={'i': np.int32})
    exe.forward(a=x, i=mx.nd.array([1, 1, 0], dtype='int32'))
    exe.backward()
    assert exe.outputs[0].asnumpy().tolist() == [2, 4, 5]
    with pytest.raises(mx.MXNetError, match="'batch_take.*non-differentiable"):
        y.simple_bind(mx.cpu(), a=(3, 2), type_dict={'i': np.int32})


def test_typed_unary_functions_as_mxnet():
    big = mx.nd.array([2 ** 31 - 1, -(2 ** 31), -5, 7], dtype='int32')
    for fn in (mx.nd.floor, mx.nd.ceil, mx.nd.round, mx.nd.rint, mx.nd.fix, mx.nd.trunc):
        out = fn(big)
        assert out.dtype == np.int32 and out.asnumpy().tolist() == big.asnumpy().tolist()
    # abs and square wrap as numpy's int32 does; clip and sign exact.
    np.testing.assert_array_equal(mx.nd.abs(big).asnumpy(), np.abs(big.asnumpy()))
    np.testing.assert_array_equal(mx.nd.square(big).asnumpy(), np.square(big.asnumpy()))
    assert mx.nd.clip(big, -6, 100).asnumpy().tolist() == [100, -6, -5, 7]
    assert mx.nd.sign(big).asnumpy().tolist() == [1, -1, -1, 1]
    halves = mx.nd.array([0.25, 4.0], dtype='float16')
    out = mx.nd.sqrt(halves)
    assert out.dtype == np.float16 and out.asnumpy().tolist() == [0.5, 2.0]
    assert mx.nd.ones_like(halves).asnumpy().tolist() == [1.0, 1.0]
    doubles = mx.nd.array([2.5, -2.5, 1 + 2 ** -40], dtype='float64')
    assert mx.nd.round(doubles).asnumpy().tolist() == [3.0, -3.0, 1.0]
    assert mx.nd.ceil(doubles).asnumpy().tolist() == [3.0, -2.0, 2.0]
    # float64 computes in double, as MXNet's float64 kernels and numpy do (float32 would lose
    # 2^-40).
    for name in ('exp', 'log1p', 'sqrt', 'sin', 'arctan', 'cbrt', 'expm1'):
        x = np.array([0.5, 1 + 2 ** -40, 2.25], dtype=np.float64)
        out = getattr(mx.nd, name)(mx.nd.array(x, dtype='float64'))
        assert out.dtype == np.float64
        np.testing.assert_allclose(out.asnumpy(), getattr(np, name)(x), rtol=1e-15, atol=0)
    x = mx.nd.array([0.5, 1 + 2 ** -40, 2.25], dtype='float64')
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.log(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 1 / x.asnumpy(), rtol=1e-15)


def test_typed_reductions_as_mxnet():
    # Values printed by MXNet 1.9.1 for the same int32 calls (sums wrap; the mean divides the
    # wrapped sum, truncating).
    a = mx.nd.array([[1, 2, 4], [2 ** 30, 2 ** 30, 5]], dtype='int32')
    assert a.sum().dtype == np.int32 and a.sum().asnumpy().tolist() == [-2147483636]
    assert a.sum(axis=1).asnumpy().tolist() == [7, -2147483643]
    assert a.mean(axis=1).asnumpy().tolist() == [2, -715827881]
    assert a.max(axis=0).asnumpy().tolist() == [2 ** 30, 2 ** 30, 5]
    assert a.min(axis=1).asnumpy().tolist() == [1, 5]
    assert a.prod(axis=1).asnumpy().tolist() == [8, 0]
    assert mx.nd.array([-3, 2], dtype='int32').mean().asnumpy().tolist() == [0]
    big = mx.nd.array([2 ** 53, 1, 1], dtype='int64')
    assert big.sum().asnumpy().tolist() == [2 ** 53 + 2]  # exact beyond float's 24 bits
    d = np.array([[1e-20, 1.0, -1.0], [0.1, 0.2, 0.3]])
    x = mx.nd.array(d, dtype='float64')
    np.testing.assert_array_equal(x.sum(axis=1).asnumpy(), d.sum(axis=1))  # in order, in double
    np.testing.assert_allclose(x.norm().asnumpy(), [np.sqrt((d ** 2).sum())], rtol=1e-15)
    h = mx.nd.array([0.5, 1.5, np.nan], dtype='float16')
    assert h.max().dtype == np.float16 and np.isnan(h.max().asnumpy()[0])
    assert mx.nd.nansum(h).asnumpy().tolist() == [2.0]
    with pytest.raises(mx.MXNetError, match='norm'):
        mx.nd.norm(a)


def test_argmax_and_argmin_take_the_first_nan_as_numpy():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [4.0, 2.0, 2.0, 1.0]], dtype='f')
    a = mx.nd.array(x)
    assert mx.nd.argmax(a, axis=1).asnumpy().tolist() == np.argmax(x, axis=1).tolist()
    assert mx.nd.argmin(a, axis=1).asnumpy().tolist() == np.argmin(x, axis=1).tolist()


def test_argmax_in_other_dtypes_gives_positions_in_that_dtype():
    for dtype in ('float64', 'float16', 'int32', 'int64'):
        a = mx.nd.array([[3, 9, 9], [-1, -5, 2]], dtype=dtype)
        out = mx.nd.argmax(a, axis=1)
        assert out.dtype == np.dtype(dtype) and out.asnumpy().tolist() == [1, 2]
        assert mx.nd.argmin(a, axis=0).asnumpy().tolist() == [1, 1, 1]


def test_sort_topk_argsort_in_other_dtypes_as_mxnet():
    # Values and dtypes printed by MXNet 1.9.1 for the same calls.
    a = mx.nd.array([[3, 2 ** 40 + 1, -7, 2 ** 40]], dtype='int64')
    assert mx.nd.sort(a).asnumpy().tolist() == [[-7, 3, 2 ** 40, 2 ** 40 + 1]]
    values, positions = mx.nd.topk(a, k=2, ret_typ='both', dtype='int32')
    assert values.dtype == np.int64 and values.asnumpy().tolist() == [[2 ** 40 + 1, 2 ** 40]]
    assert positions.dtype == np.int32 and positions.asnumpy().tolist() == [[1, 3]]
    assert mx.nd.argsort(a, dtype='float64').dtype == np.float64
    mask = mx.nd.topk(a, k=1, ret_typ='mask')
    assert mask.dtype == np.int64 and mask.asnumpy().tolist() == [[0, 1, 0, 0]]
    d = np.random.RandomState(2).uniform(-1, 1, (3, 7))
    x = mx.nd.array(d, dtype='float64')
    np.testing.assert_array_equal(mx.nd.sort(x, axis=1, is_ascend=False).asnumpy(),
                                  -np.sort(-d, axis=1))
    np.testing.assert_array_equal(mx.nd.argsort(x, axis=0).asnumpy(), np.argsort(d, axis=0))
    # The values' gradient goes back to their positions, whatever the positions' dtype.
    w = mx.nd.array([[0.5, 3.0, 1.0]])
    w.attach_grad()
    with mx.autograd.record():
        top = mx.nd.topk(w, k=2, ret_typ='value', dtype='int64')
    top.backward(mx.nd.array([[10.0, 20.0]]))
    assert w.grad.asnumpy().tolist() == [[0, 10, 20]]


def test_axis_none_reaches_the_operator_as_mxnet_passes_it():
    # MXNet passes an explicit None as 'None' where the parameter is "... or None": topk over
    # the flattened array, not the default last axis.
    a = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    assert mx.nd.topk(a, axis=None, k=5, ret_typ='value').asnumpy().tolist() == \
        [23, 22, 21, 20, 19]
    assert mx.nd.sort(a, axis=None).shape == (24,)
    assert mx.nd.softmax(a, use_length=None).shape == (2, 3, 4)  # a boolean's None: default


def test_cpu_shared_context_and_swapaxes():
    ctx = mx.Context('cpu_shared', 0)
    assert mx.nd.zeros((1, 2, 3), ctx=ctx).context == ctx
    assert mx.nd.array([1, 2], ctx=ctx).context == ctx
    assert mx.nd.zeros((1,)).context == mx.cpu(0)
    x = mx.nd.array(np.arange(24).reshape(2, 3, 4))
    np.testing.assert_array_equal(x.swapaxes(0, 2).asnumpy(),
                                  np.swapaxes(np.arange(24).reshape(2, 3, 4), 0, 2))
    assert mx.nd.swapaxes(x, 1, -1).shape == (2, 4, 3)


def test_contiguous_basic_indexing_is_a_view_and_elements_are_1d_as_mxnet():
    # Shapes and sharing as MXNet 1.9.1 gives them.
    a = mx.nd.array(np.arange(12).reshape(3, 4))
    assert a[1, 2].shape == (1,) and mx.nd.array([1, 2, 3])[1].shape == (1,)
    assert a[1:2, 1:3].shape == (1, 2) and a[:, 1].shape == (3,)
    row = a[2, 1:3]  # contiguous: a view
    row[:] = 7
    assert a.asnumpy()[2].tolist() == [8, 7, 7, 11]
    column = a[:, 1]  # strided: a copy
    column[:] = -1
    assert a.asnumpy()[:, 1].tolist() == [1, 5, 7]
    is_contiguous = mx.nd.NDArray._basic_indexing_slice_is_contiguous
    shape = (6, 7, 8)
    for key in [(slice(None), slice(None), slice(2)), (slice(1, 2), slice(3), slice(None)),
                (slice(None, None, 2), slice(0, 1), slice(None)), (slice(3, None, -2),) * 3]:
        assert is_contiguous(key, shape) == np.zeros(shape)[key].flags.contiguous, key
