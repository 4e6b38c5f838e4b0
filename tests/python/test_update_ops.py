"""MXNet's optimizer update operators (nd.sgd_update, nd.adam_update, ...) against MXNet 1.9.1's
own results (tests/data/mxnet/update_ops.*, made by scripts/make_mxnet_update_fixtures.py): the
new weight and every state the op updates in place, called in place as optimizers call them."""
import json
import os

import numpy as np
import pytest

import cohort as mx


def cases(data_dir):
    with open(os.path.join(data_dir, 'mxnet', 'update_ops.json')) as f:
        return json.load(f)


@pytest.fixture
def expected(data_dir):
    return mx.nd.load(os.path.join(data_dir, 'mxnet', 'update_ops.params'))


def test_every_update_op_equals_mxnet(data_dir, expected):
    for name, op, attrs, in_place in cases(data_dir):
        count = sum(1 for k in expected if k.startswith(name + ':in:'))
        arrays = [expected['%s:in:%d' % (name, i)].copy() for i in range(count)]
        # In place, as MXNet's optimizers call them (LAMB's phase 1 outputs a direction).
        out = arrays[0] if in_place else mx.nd.zeros(arrays[0].shape)
        result = getattr(mx.nd, op)(*arrays, out=out, **attrs)
        assert result is out
        # Bit for bit: the same operations in the same order (Note [Update operators]).
        np.testing.assert_array_equal(out.asnumpy(), expected[name + ':out'].asnumpy(),
                                      err_msg=name + ' output')
        for i, a in enumerate(arrays):  # grad unchanged, states as MXNet left them
            np.testing.assert_array_equal(a.asnumpy(),
                                          expected['%s:after:%d' % (name, i)].asnumpy(),
                                          err_msg='%s input %d' % (name, i))


def test_update_in_place_and_by_keyword():
    w = mx.nd.array([1.0, -2.0])
    g = mx.nd.array([0.5, 0.5])
    mom = mx.nd.zeros(2)
    mx.nd.sgd_mom_update(w, g, mom, out=w, lr=0.1, momentum=0.9)
    np.testing.assert_allclose(mom.asnumpy(), [-0.05, -0.05], rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), [0.95, -2.05], rtol=1e-6)
    new = mx.nd.sgd_update(weight=w, grad=g, lr=1.0, wd=0.0)
    np.testing.assert_allclose(new.asnumpy(), [0.45, -2.55], rtol=1e-6)
    w64 = mx.nd.array([1.0], dtype='float64')
    out = mx.nd.adam_update(w64, mx.nd.array([2.0], dtype='float64'),
                            mx.nd.zeros(1, dtype='float64'), mx.nd.zeros(1, dtype='float64'),
                            lr=0.1)
    assert out.dtype == np.float64
    # In double, with MXNet's float parameters: m = (1 - b1) g, v = (1 - b2) g^2.
    lr, b1, b2, eps = (float(np.float32(x)) for x in (0.1, 0.9, 0.999, 1e-8))
    m, v = (1 - b1) * 2, (1 - b2) * 4
    np.testing.assert_allclose(out.asnumpy(), [1 - lr * m / (np.sqrt(v) + eps)], rtol=1e-15)


def test_bad_update_calls_name_what_is_wrong():
    w, g = mx.nd.ones(3), mx.nd.ones(3)
    with pytest.raises(mx.MXNetError, match='lr'):
        mx.nd.sgd_update(w, g)
    with pytest.raises(TypeError, match=r'takes 3 input array\(s\) \(weight, grad, mom\)'):
        mx.nd.sgd_mom_update(w, g, lr=0.1)
    with pytest.raises(mx.MXNetError, match='mom'):
        mx.nd.sgd_mom_update(w, g, mx.nd.ones(4), lr=0.1)
    with pytest.raises(mx.MXNetError, match='int32'):
        mx.nd.sgd_update(w.astype('int32'), g.astype('int32'), lr=0.1)
    with pytest.raises(mx.MXNetError, match='clip_gradient'):
        mx.nd.ftml_update(w, g, w, w, w, lr=0.1, t=1, clip_gradient=1.0)  # ftml's is clip_grad
    # No gradient: the ops are training steps, not model parts.
    sym = mx.sym.sgd_update(mx.sym.var('w'), mx.sym.var('g'), lr=0.1)
    with pytest.raises(mx.MXNetError, match='non-differentiable'):
        sym.simple_bind(mx.cpu(), w=(2,), g=(2,))
