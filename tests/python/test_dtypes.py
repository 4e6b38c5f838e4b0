"""Dtypes from Python, against MXNet 1.9.1's behaviour: infer_type's numpy types, Cast,
integer NDArray arithmetic (exact), simple_bind's type_dict and variables' dtype."""
import json

import numpy as np
import pytest

import cohort as mx


def test_infer_type_returns_numpy_types_as_mxnet():
    x, y = mx.sym.var('x', dtype='int32'), mx.sym.var('y')
    # MXNet 1.9.1: ([int32, int32], [int32], []) both with and without the keyword.
    assert (x + y).infer_type(x='int32') == ([np.int32, np.int32], [np.int32], [])
    assert (x + y).infer_type() == ([np.int32, np.int32], [np.int32], [])
    c = mx.sym.Cast(x, dtype='float16')
    assert c.infer_type(x=np.int32) == ([np.int32], [np.float16], [])
    fc = mx.sym.FullyConnected(mx.sym.var('d'), num_hidden=2)
    assert fc.infer_type(d='float16') == ([np.float16] * 3, [np.float16], [])
    # Positional, in list_arguments order.
    assert (mx.sym.var('a') * mx.sym.var('b')).infer_type(np.float64)[1] == [np.float64]


def test_infer_type_unknown_and_partial():
    s = mx.sym.var('a') + mx.sym.var('b')
    assert s.infer_type() == (None, None, None)
    assert s.infer_type_partial() == ([None, None], [None], [])


def test_infer_type_conflict_is_an_error_naming_the_node():
    s = mx.sym.elemwise_add(mx.sym.var('a'), mx.sym.var('b'), name='adder')
    with pytest.raises(mx.base.MXNetError, match='adder'):
        s.infer_type(a='int32', b='float32')
    with pytest.raises(TypeError):
        s.infer_type(a='no such type')


def test_integer_ndarray_arithmetic_is_exact():
    big = (1 << 30) + 1  # not a float32
    a = mx.nd.array([big, 7, -7, 3], dtype='int32')
    b = mx.nd.array([2, 2, 2, 1], dtype='int32')
    assert (a + b).dtype == np.int32
    np.testing.assert_array_equal((a + b).asnumpy(), [big + 2, 9, -5, 4])
    np.testing.assert_array_equal((a * b).asnumpy(), [(big * 2) - (1 << 32), 14, -14, 3])
    np.testing.assert_array_equal((a / b).asnumpy(), [big // 2, 3, -3, 3])  # truncates
    # MXNet converts the scalar to the array's type: +2.5 adds 2, -0.5 subtracts 0.
    np.testing.assert_array_equal((a + 2.5).asnumpy(), [big + 2, 9, -5, 5])
    np.testing.assert_array_equal((a - 0.5).asnumpy(), [big, 7, -7, 3])
    np.testing.assert_array_equal((2 / a[1:3]).asnumpy(), [0, 0])
    u = mx.nd.array([250, 3], dtype='uint8')
    np.testing.assert_array_equal((u + u).asnumpy(), [244, 6])  # wraps, as MXNet
    i64 = mx.nd.array([1 << 40, -(1 << 40)], dtype='int64')
    np.testing.assert_array_equal((i64 + 1).asnumpy(), [(1 << 40) + 1, -(1 << 40) + 1])


def test_integer_comparisons_powers_and_broadcasts_as_mxnet():
    a = mx.nd.array([7, -7, 3], dtype='int32')
    # MXNet 1.9.1: a ** 2 is [49 49 9] int32; comparisons give 1/0 in the array's dtype.
    sq = a ** 2
    assert sq.dtype == np.int32
    np.testing.assert_array_equal(sq.asnumpy(), [49, 49, 9])
    np.testing.assert_array_equal((a == 3).asnumpy(), [0, 0, 1])
    np.testing.assert_array_equal((a > 0).asnumpy(), [1, 0, 1])
    assert (a > 0).dtype == np.int32
    col = mx.nd.array([[1 << 40], [-2]], dtype='int64')
    row = mx.nd.array([[1, 2, 3]], dtype='int64')
    np.testing.assert_array_equal(mx.nd.broadcast_add(col, row).asnumpy(),
                                  np.array([[1 << 40], [-2]]) + np.array([[1, 2, 3]]))
    np.testing.assert_array_equal(mx.nd.broadcast_maximum(col, row).asnumpy(),
                                  np.maximum(np.array([[1 << 40], [-2]]), [[1, 2, 3]]))


def test_half_arithmetic_and_cast():
    h = mx.nd.array([1.5, 2.25], dtype='float16')
    assert (h * h).dtype == np.float16
    np.testing.assert_array_equal((h + 1).asnumpy(), [2.5, 3.25])
    a = mx.nd.array([7, -7, 3], dtype='int32')
    c = mx.nd.cast(a, dtype='float16')
    assert c.dtype == np.float16
    np.testing.assert_array_equal(mx.nd.Cast(a, dtype='uint8').asnumpy(), [7, 249, 3])
    third = mx.nd.array([1 / 3.0]).astype('float16')
    assert third.asnumpy()[0] == np.float16(1 / 3.0)


def test_simple_bind_type_dict_and_var_dtype():
    x = mx.sym.var('x')
    net = mx.sym.Cast(x * 2, dtype='float32')
    exe = net.simple_bind(mx.cpu(), x=(3,), type_dict={'x': 'float64'}, grad_req='write')
    assert exe.arg_dict['x'].dtype == np.float64
    assert exe.grad_dict['x'].dtype == np.float64
    exe.forward(is_train=True, x=np.array([1.0, 2.0, 3.0]))
    assert exe.outputs[0].dtype == np.float32
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [2, 4, 6])
    exe.backward(mx.nd.ones((3,)))
    np.testing.assert_array_equal(exe.grad_dict['x'].asnumpy(), [2, 2, 2])
    v = mx.sym.var('v', dtype='int64')
    exe = (v + 1).simple_bind(mx.cpu(), v=(2,), grad_req='null')
    assert exe.arg_dict['v'].dtype == np.int64


def test_a_kernel_without_the_dtype_is_refused_by_name():
    fc = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc1')
    with pytest.raises(mx.base.MXNetError, match='fc1'):
        fc.simple_bind(mx.cpu(), data=(2, 3), type_dict={'data': 'int32'})
    with pytest.raises(TypeError):
        fc.simple_bind(mx.cpu(), data=(2, 3), type_dict=['int32'])


def test_integer_indices_for_embedding_and_take():
    weight = mx.nd.array(np.arange(12).reshape(4, 3))
    for dtype in ('float32', 'int32', 'int64'):
        idx = mx.nd.array([[3, 0], [1, 1]], dtype=dtype)
        out = mx.nd.Embedding(idx, weight, input_dim=4, output_dim=3)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out.asnumpy()[0, 0], [9, 10, 11])
        np.testing.assert_array_equal(mx.nd.take(weight, idx).asnumpy(), out.asnumpy())
    with pytest.raises(mx.base.MXNetError, match='uint8'):
        mx.nd.take(weight, mx.nd.array([1], dtype='uint8'))


def test_arange_in_other_dtypes_as_mxnet():
    # MXNet's test_arange: exact int32 values up to 10000**2.
    got = mx.nd.arange(start=0, stop=10000 ** 2, step=10001, dtype='int32')
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got.asnumpy(), np.arange(0, 10000 ** 2, 10001, dtype=np.int32))
    assert mx.nd.arange(0, 3, dtype='float64').dtype == np.float64
    np.testing.assert_array_equal(mx.nd.arange(1, 4, repeat=2, dtype='int64').asnumpy(),
                                  [1, 1, 2, 2, 3, 3])


def test_integer_arrays_have_gradients_as_mxnet():
    # MXNet gives an int32 array an int32 gradient through indexing, reshape and topk.
    a = np.arange(4 * 5 * 6).reshape(4, 5, 6).astype(np.int32)
    for index in (1, slice(1, 3), (0, 2), (slice(0, 4, 2), 3, slice(1, 5, 2))):
        x = mx.nd.array(a, dtype='int32')
        x.attach_grad()
        with mx.autograd.record():
            y = x[index]
        y.backward()
        want = np.zeros_like(a)
        want[index] = 1
        assert x.grad.dtype == np.int32
        np.testing.assert_array_equal(x.grad.asnumpy(), want)
    v = mx.nd.array([5, 1, 9, 3], dtype='int32')
    v.attach_grad()
    with mx.autograd.record():
        top = mx.nd.topk(v, k=2, ret_typ='value')
    top.backward(mx.nd.array([10, 20], dtype='int32'))
    assert top.asnumpy().tolist() == [9, 5]
    assert v.grad.dtype == np.int32 and v.grad.asnumpy().tolist() == [20, 0, 10, 0]
    # Added to an existing gradient (grad_req add), wrapping as int32 does.
    w = mx.nd.array([[1, 2], [3, 4]], dtype='int32')
    w.attach_grad(grad_req='add')
    w.grad[:] = 2 ** 31 - 1
    with mx.autograd.record():
        row = w[1]
    row.backward()
    assert w.grad.asnumpy().tolist() == [[2 ** 31 - 1] * 2, [-(2 ** 31)] * 2]


def test_amp_casts_as_mxnet():
    # MXNet 1.9.1's amp_cast and amp_multicast (values from its infer_type and list_outputs).
    with mx.name.NameManager():  # a fresh counter: the first multicast is amp_multicast0
        s = mx.sym.amp_multicast(mx.sym.var('a'), mx.sym.var('b'), num_outputs=2)
    assert s.list_outputs() == ['amp_multicast0_output0', 'amp_multicast0_output1']
    assert s.list_arguments() == ['a', 'b']
    for a, b, narrow, want in [('float16', 'float32', False, [np.float32, np.float32]),
                               ('float16', 'float32', True, [np.float16, np.float16]),
                               ('float16', 'float16', False, [np.float16, np.float16]),
                               ('float16', 'int32', True, [np.float16, np.int32])]:
        s = mx.sym.amp_multicast(mx.sym.var('a'), mx.sym.var('b'), num_outputs=2,
                                 cast_narrow=narrow)
        assert s.infer_type(a=a, b=b)[1] == want
    assert mx.sym.amp_cast(mx.sym.var('a'), dtype='float16').infer_type(a='float64')[1] == \
        [np.float64]
    assert mx.nd.amp_cast(mx.nd.array([1, 2], dtype='int32'), dtype='float16').dtype == np.int32
    # Values: float16's rounding, and a list of outputs from the multicast.
    x = mx.nd.array([1 / 3, -2, 0.5])
    half = mx.nd.amp_cast(x, dtype='float16')
    assert half.dtype == np.float16
    assert half.asnumpy().tolist() == [0.333251953125, -2.0, 0.5]
    out = mx.nd.amp_multicast(half, x, num_outputs=2)
    assert [o.dtype for o in out] == [np.float32, np.float32]
    assert out[0].asnumpy().tolist() == [np.float32(0.333251953125), -2.0, 0.5]
    # The gradient goes back in the input's dtype.
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.amp_cast(mx.nd.amp_cast(x, dtype='float16') * 2, dtype='float32')
    y.backward()
    assert x.grad.dtype == np.float32 and x.grad.asnumpy().tolist() == [2, 2, 2]


def test_contrib_amp_convert_symbol():
    # MXNet's amp.convert_symbol over Cohort's pass: casts named as MXNet names them, made once,
    # removed again by tojson() and save() (remove_amp_cast=True, MXNet's default).
    from cohort.contrib import amp
    data = mx.sym.var('data')
    fc1 = mx.sym.FullyConnected(data, num_hidden=4, name='fc1')
    fc2 = mx.sym.FullyConnected(data, num_hidden=4, name='fc2')
    out = mx.sym.SoftmaxOutput(mx.sym.exp(fc1, name='exp0') + fc2, name='softmax')
    conv = amp.convert_symbol(out, target_dtype='bfloat16')
    names = [n['name'] for n in json.loads(conv.tojson(remove_amp_cast=False))['nodes']
             if n['op'] == 'amp_cast']
    assert names == ['data_amp_cast_bfloat16', 'fc1_weight_amp_cast_bfloat16',
                     'fc1_bias_amp_cast_bfloat16', 'fc1_output_amp_cast_float32',
                     'fc2_weight_amp_cast_bfloat16', 'fc2_bias_amp_cast_bfloat16',
                     'fc2_output_amp_cast_float32']
    assert conv.tojson() == out.tojson()
    assert conv.list_arguments() == out.list_arguments()
    float32 = {name: 'float32' for name in out.list_arguments()}  # as bound
    internals = conv.get_internals()
    types = dict(zip(internals.list_outputs(), internals.infer_type(**float32)[1]))
    assert types['fc1_output'] == 'bfloat16' and types['softmax_output'] == np.float32
    # Excluded nodes stay float32; fp32_ops and target_dtype_ops replace the lists.
    conv = amp.convert_symbol(out, target_dtype='float16', excluded_sym_names=['fc1'])
    types = dict(zip(conv.get_internals().list_outputs(),
                     conv.get_internals().infer_type(**float32)[1]))
    assert types['fc1_output'] == np.float32 and types['fc2_output'] == np.float16
    sym, args, aux = amp.convert_model(out, {'fc1_weight': mx.nd.ones((4, 3))}, {},
                                       target_dtype='bfloat16')
    assert args['fc1_weight'].dtype == np.float32
    assert 'FullyConnected' in amp.list_fp16_ops('bfloat16')
    with pytest.raises(ValueError, match='float16'):
        amp.convert_symbol(out, target_dtype='int8')
