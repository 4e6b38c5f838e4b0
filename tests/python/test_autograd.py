"""mx.autograd over recorded NDArray calls (Note [Imperative autograd]): gradients equal the
analytic ones and finite differences, grad_req 'add' accumulates, retain_graph, the refusals."""
import numpy as np
import pytest

import cohort as mx


def test_gradient_of_a_composition_is_analytic():
    x_np = np.random.RandomState(0).uniform(-1, 1, (3, 4)).astype('f')
    x = mx.nd.array(x_np)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(mx.nd.exp(x) * x + 2 * x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp(x_np) * (1 + x_np) + 2, rtol=1e-5)


def test_gradient_matches_finite_differences_through_fully_connected():
    rng = np.random.RandomState(1)
    data, weight, bias = (rng.randn(2, 5), rng.randn(3, 5), rng.randn(3))
    w = mx.nd.array(weight)
    w.attach_grad()
    with mx.autograd.record():
        out = mx.nd.FullyConnected(mx.nd.array(data), w, mx.nd.array(bias), num_hidden=3)
        loss = mx.nd.sum(mx.nd.tanh(out))
    loss.backward()

    def f(wv):
        return np.tanh(data @ wv.T + bias).sum()
    eps, numeric = 1e-3, np.zeros_like(weight)
    for idx in np.ndindex(*weight.shape):
        up, down = weight.copy(), weight.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (f(up) - f(down)) / (2 * eps)
    np.testing.assert_allclose(w.grad.asnumpy(), numeric, rtol=1e-2, atol=1e-3)


def test_head_gradient_and_add_accumulate():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad(grad_req='add')
    for _ in range(2):
        with mx.autograd.record():
            y = x * x
        y.backward(mx.nd.array([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.array([2.0, 40.0, 600.0]))


def test_indexing_is_recorded_and_gradient_lands_in_the_slice():
    x = mx.nd.array(np.arange(12).reshape(3, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = x[1:3, 2]
    y.backward()
    expected = np.zeros((3, 4))
    expected[1:3, 2] = 1
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_retain_graph_and_freed_graph():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(x * 3)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3.0, 3.0])
    with pytest.raises(mx.MXNetError, match='freed'):
        y.backward()


def test_grad_returns_new_arrays_and_keeps_dot_grad():
    x = mx.nd.array([2.0, 5.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * x * x
    (g,) = mx.autograd.grad(y, [x])
    np.testing.assert_allclose(g.asnumpy(), 3 * np.array([4.0, 25.0]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [0, 0])


def test_refusals_name_the_problem():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
        with pytest.raises(mx.MXNetError, match='Inplace operations'):
            y[:] = 1
        with pytest.raises(mx.MXNetError, match='Inplace operations'):
            y += 1
    with pytest.raises(mx.MXNetError, match='not computed inside autograd.record'):
        mx.nd.ones((2,)).backward()
    with pytest.raises(ValueError):
        x.attach_grad(grad_req='sometimes')


def test_scopes_set_and_restore_flags():
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    with mx.autograd.record():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with mx.autograd.pause():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        with mx.autograd.predict_mode():
            assert not mx.autograd.is_training()
    assert not mx.autograd.is_recording()


def test_runtime_features_and_np_shape_flag():
    features = mx.runtime.Features()
    assert features.is_enabled('INT64_TENSOR_SIZE')
    assert features.is_enabled('CUDA') == mx._cohort.build_features['CUDA']
    with pytest.raises(RuntimeError, match='unknown'):
        features.is_enabled('WARP_DRIVE')
    assert not mx.is_np_shape()
    with mx.np_shape(True):
        assert mx.is_np_shape()
        assert mx.sym.var('x').tojson().count('is_np_shape') == 1
    assert 'is_np_shape' not in mx.sym.var('x').tojson()


def test_from_numpy_shares_memory_and_locks_the_source():
    src = np.array([[1, 2], [3, 4]], dtype='float32')
    arr = mx.nd.from_numpy(src)
    with pytest.raises(ValueError):
        src[0, 0] = 9
    arr[1, 1] = 100
    assert src[1, 1] == 100
    with pytest.raises(ValueError, match='C-contiguous'):
        mx.nd.from_numpy(np.ones((3, 2)).T)
    copy = mx.nd.from_numpy(np.ones(3), zero_copy=False)
    assert copy.dtype == np.float64


def test_cached_op_runs_a_symbol_and_is_differentiated_whole():
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc') * 2
    op = mx.nd.CachedOp(net)
    data = mx.nd.array([[1.0, 2.0, 3.0]])
    weight = mx.nd.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    bias = mx.nd.array([0.5, -0.5])
    np.testing.assert_allclose(op(data, weight, bias).asnumpy(), [[9.0, 3.0]])
    bias[:] = 0  # the same executor, fresh inputs
    np.testing.assert_allclose(op(data, weight, bias).asnumpy(), [[8.0, 4.0]])
    weight.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(op(data, weight, bias) * 3)
    y.backward()
    np.testing.assert_allclose(weight.grad.asnumpy(), 6 * np.array([[1, 2, 3], [1, 2, 3]]))
    with pytest.raises(ValueError, match='3 inputs'):
        op(data)


def test_an_output_of_a_freed_record_is_a_constant_in_the_next():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
        z = mx.nd.sum(y * x)
    z.backward()
    with mx.autograd.record():
        w = mx.nd.sum(y * x)  # y's record was freed: y is a constant here
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), y.asnumpy())


def test_advanced_indexing_is_recorded_and_adds_repeated_positions():
    # Lists, arrays, None: recorded as take of the positions numpy selects (MXNet: gather_nd).
    x = mx.nd.array(np.arange(12).reshape(3, 4), dtype='int32')
    x.attach_grad()
    with mx.autograd.record():
        y = x[[0, 2, 0], 1:3]
    assert y.asnumpy().tolist() == [[1, 2], [9, 10], [1, 2]]
    y.backward()
    want = np.zeros((3, 4), dtype=np.int32)
    want[0, 1:3] = 2  # row 0 taken twice
    want[2, 1:3] = 1
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
    f = mx.nd.ones((2, 3))
    f.attach_grad()
    with mx.autograd.record():
        z = f[None, mx.nd.array([1], dtype='int64')]
    assert z.shape == (1, 1, 3)
    z.backward(mx.nd.ones((1, 1, 3)) * 5)
    assert f.grad.asnumpy().tolist() == [[0, 0, 0], [5, 5, 5]]
    # A recorded value written in place is refused, as MXNet refuses it.
    target = mx.nd.zeros((2, 3))
    v = mx.nd.ones(3)
    v.attach_grad()
    with pytest.raises(mx.MXNetError, match='Inplace operations'):
        with mx.autograd.record():
            target[0] = v


def test_take_copies_and_differentiates_any_dtype():
    for dtype in ('int32', 'int64', 'float64', 'float16'):
        table = mx.nd.array(np.arange(12).reshape(4, 3), dtype=dtype)
        table.attach_grad()
        with mx.autograd.record():
            rows = mx.nd.take(table, mx.nd.array([1, 3, 1], dtype='int32'))
        rows.backward(mx.nd.ones((3, 3), dtype=dtype))
        assert rows.dtype == np.dtype(dtype)
        assert rows.asnumpy().tolist() == [[3, 4, 5], [9, 10, 11], [3, 4, 5]]
        assert table.grad.asnumpy().tolist() == [[0] * 3, [2] * 3, [0] * 3, [1] * 3]


def test_one_element_values_fill_one_position():
    a = mx.nd.zeros((2, 3), dtype='int32')
    a[1, 2] = [7]  # MXNet broadcasts a (1,) value to a single position; numpy refuses it
    assert a.asnumpy().tolist() == [[0, 0, 0], [0, 0, 7]]
