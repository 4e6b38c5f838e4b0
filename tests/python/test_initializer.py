"""cohort.init as MXNet 1.x's mxnet.initializer: the rules by name, a variable's __init__
attribute, dumps()/create() round trips, seeded random fills with the scales MXNet computes,
Load, Mixed, Bilinear and LSTMBias values, custom initializers, and the errors."""
import numpy as np
import pytest

import cohort as mx


def desc(name, **attrs):
    return mx.init.InitDesc(name, attrs=attrs)


def test_rules_by_name():
    init = mx.init.Uniform(0.5)
    arrays = {n: mx.nd.ones((3, 4)) * 7 for n in ('fc_weight', 'fc_bias', 'bn_gamma', 'bn_beta',
                                                  'q_min', 'q_max')}
    for name, arr in arrays.items():
        init(desc(name), arr)
    w = arrays['fc_weight'].asnumpy()
    assert np.all(np.abs(w) <= 0.5) and len(np.unique(w)) == 12
    assert arrays['fc_bias'].asnumpy().sum() == 0 and arrays['bn_beta'].asnumpy().sum() == 0
    assert arrays['bn_gamma'].asnumpy().sum() == 12 and arrays['q_max'].asnumpy().sum() == 12
    assert arrays['q_min'].asnumpy().sum() == 0
    with pytest.raises(ValueError, match='Unknown initialization pattern for data'):
        init(desc('data'), mx.nd.zeros(2))
    with pytest.warns(DeprecationWarning):
        moving = mx.nd.zeros(3)
        init('bn_moving_var', moving)  # the legacy str form
    assert moving.asnumpy().tolist() == [1, 1, 1]


def test_a_variables_init_attribute_wins():
    var = mx.sym.var('stats', init=mx.init.Constant(0.25))
    attrs = var.attr_dict()['stats']
    assert attrs['__init__'] == '["constant", {"value": 0.25}]'
    arr = mx.nd.zeros((2, 2))
    mx.init.Xavier()(mx.init.InitDesc('stats', attrs=attrs), arr)
    assert arr.asnumpy().tolist() == [[0.25, 0.25], [0.25, 0.25]]


def test_dumps_and_create_round_trip():
    for init in (mx.init.Xavier(rnd_type='gaussian', factor_type='in', magnitude=2),
                 mx.init.Uniform(0.2), mx.init.Normal(0.3), mx.init.Constant(1.5), mx.init.One(),
                 mx.init.MSRAPrelu(slope=0.1), mx.init.Orthogonal(scale=2.0)):
        again = mx.init.create(init.dumps())
        assert again == init and again.dumps() == init.dumps()
    assert mx.init.MSRAPrelu(slope=0.1).dumps() == \
        '["msraprelu", {"factor_type": "avg", "slope": 0.1}]'
    assert isinstance(mx.init.create('zeros'), mx.init.Zero)
    assert mx.init.create('uniform', scale=0.3).scale == 0.3
    assert mx.init.Constant(np.array([1.0, 2.0])).dumps() == '["constant", {"value": [1.0, 2.0]}]'
    with pytest.raises(ValueError, match='Cannot find initializer nosuch'):
        mx.init.create('nosuch')


def test_random_fills_are_seeded_with_mxnets_scales():
    def xavier(seed):
        mx.random.seed(seed)
        arr = mx.nd.zeros((64, 32, 3, 3))
        mx.init.Xavier(factor_type='in', magnitude=2.34)(desc('conv_weight'), arr)
        return arr.asnumpy()

    a, b = xavier(5), xavier(5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, xavier(6))
    bound = np.sqrt(2.34 / (32 * 9))  # U(-bound, bound): std bound / sqrt(3)
    assert np.abs(a).max() <= bound
    assert abs(a.std() / (bound / np.sqrt(3)) - 1) < 0.03
    mx.random.seed(1)
    g = mx.nd.zeros((200, 300))
    mx.init.MSRAPrelu(factor_type='out', slope=0.0)(desc('fc_weight'), g)
    assert abs(g.asnumpy().std() / np.sqrt(2.0 / 200) - 1) < 0.03
    with pytest.raises(ValueError, match='requires at least 2D'):
        mx.init.Xavier()(desc('v_weight'), mx.nd.zeros(5))
    q = mx.nd.zeros((4, 6))
    mx.init.Orthogonal(scale=1.0)(desc('rnn_weight'), q)
    np.testing.assert_allclose(q.asnumpy() @ q.asnumpy().T, np.eye(4), atol=1e-5)


def test_load_mixed_bilinear_lstm_bias(tmp_path):
    path = str(tmp_path / 'p.params')
    mx.nd.save(path, {'arg:fc_weight': mx.nd.ones((2, 2)) * 3})
    loader = mx.init.Load(path, default_init=mx.init.Zero())
    w, other = mx.nd.zeros((2, 2)), mx.nd.ones(3)
    loader('fc_weight', w)
    loader('other_weight', other)
    assert w.asnumpy().sum() == 12 and other.asnumpy().sum() == 0
    with pytest.raises(AssertionError, match='Shape mismatch'):
        loader('fc_weight', mx.nd.zeros(3))
    mixed = mx.init.Mixed(['.*bias', '.*'], [mx.init.Zero(), mx.init.One()])
    b, k = mx.nd.ones(2), mx.nd.zeros(2)
    mixed('fc_bias', b)
    mixed('fc_weight', k)
    assert b.asnumpy().tolist() == [0, 0] and k.asnumpy().tolist() == [1, 1]
    kernel = mx.nd.zeros((1, 1, 4, 4))
    mx.init.Bilinear()(desc('up_weight'), kernel)
    # MXNet 1.9.1's values: the outer product of [0.25, 0.75, 0.75, 0.25].
    edge = np.array([0.25, 0.75, 0.75, 0.25])
    np.testing.assert_allclose(kernel.asnumpy()[0, 0], np.outer(edge, edge))
    bias = mx.nd.ones(8)
    mx.init.LSTMBias(forget_bias=2.0)(desc('lstm_bias', __init__=mx.init.LSTMBias(2.0).dumps()),
                                       bias)
    assert bias.asnumpy().tolist() == [0, 0, 2, 2, 0, 0, 0, 0]


def test_custom_initializers_register():
    @mx.init.register
    class Halves(mx.init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.5

    arr = mx.nd.zeros(3)
    mx.init.create('halves')(desc('x_weight'), arr)
    assert arr.asnumpy().tolist() == [0.5, 0.5, 0.5]
    with pytest.raises(AssertionError):
        mx.init.register(int)
