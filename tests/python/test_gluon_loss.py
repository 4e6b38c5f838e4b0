"""gluon.loss on NDArrays and Symbols against MXNet 1.9.1's values (printed by MXNet 1.9.1 for
these inputs, numpy seed 0; MXNet's log_softmax is 3e-6 off the float64 value where Cohort's
is within 2e-7, hence the tolerance), and Symbol's comparison operators."""
import numpy as np
import pytest

import cohort as mx

L = mx.gluon.loss
np.random.seed(0)
PRED = np.random.uniform(-2, 2, (4, 3)).astype('float32')
LABEL = np.random.uniform(-1, 1, (4, 3)).astype('float32')
CLASSES = np.array([0, 2, 1, 1], dtype='float32')
BINARY = (LABEL > 0).astype('float32')

CASES = [  # loss, label, MXNet's output name, MXNet's values
    (L.L2Loss(), LABEL, 'l2loss', [0.268984, 0.240867, 0.356495, 0.479852]),
    (L.L1Loss(), LABEL, 'l1loss', [0.445904, 0.580373, 0.843482, 0.917990]),
    (L.SigmoidBCELoss(), BINARY, 'sigmoidbinarycrossentropyloss',
     [0.624194, 0.594115, 0.386884, 1.009387]),
    (L.SoftmaxCELoss(), CLASSES, 'softmaxcrossentropyloss',
     [1.431820, 0.731746, 0.914579, 0.434887]),
    (L.SoftmaxCELoss(sparse_label=False), np.abs(LABEL) / np.abs(LABEL).sum(1, keepdims=True),
     'softmaxcrossentropyloss', [1.024488, 1.215983, 1.240912, 1.702246]),
    (L.KLDivLoss(from_logits=False), np.abs(LABEL), 'kldivloss',
     [1.350368, 2.510949, 2.205616, 1.275629]),
    (L.HuberLoss(rho=0.5), LABEL, 'huberloss', [0.340858, 0.388708, 0.593482, 0.668981]),
    (L.HingeLoss(), np.sign(LABEL), 'hingeloss', [0.785014, 0.763525, 0.416550, 1.505851]),
    (L.SquaredHingeLoss(), np.sign(LABEL), 'squaredhingeloss',
     [0.886026, 0.682401, 0.520543, 2.542499]),
    (L.LogisticLoss(), np.sign(LABEL), 'logisticloss', [0.624194, 0.594115, 0.386884, 1.009387]),
]


@pytest.mark.parametrize('loss,label,name,expected', CASES, ids=[c[2] for c in CASES])
def test_loss_equals_mxnets_on_arrays_and_symbols(loss, label, name, expected):
    values = loss(mx.nd.array(PRED), mx.nd.array(label)).asnumpy()
    np.testing.assert_allclose(values, expected, atol=1e-5)
    weight = np.array([[0.5], [2.0], [0.0], [1.0]], dtype='float32')
    weighted = loss(mx.nd.array(PRED), mx.nd.array(label), mx.nd.array(weight)).asnumpy()
    np.testing.assert_allclose(weighted, values * weight[:, 0], rtol=1e-6)
    symbol = loss(mx.sym.var('pred'), mx.sym.var('label'))
    assert symbol.list_outputs()[0].startswith(name) and symbol.list_outputs()[0].endswith(
        '_output'), symbol.list_outputs()
    exe = symbol.bind(mx.cpu(), {'pred': mx.nd.array(PRED), 'label': mx.nd.array(label)})
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), values)


def test_l2_loss_weight_and_repr():
    loss = L.L2Loss(weight=0.3)
    assert repr(loss) == 'L2Loss(batch_axis=0, w=0.3)'
    np.testing.assert_allclose(loss(mx.nd.array(PRED), mx.nd.array(LABEL)).asnumpy(),
                               [0.080695, 0.072260, 0.106949, 0.143956], atol=1e-6)
    with pytest.raises(ValueError):
        L.LogisticLoss(label_format='other')


def test_a_loss_trains_under_make_loss():
    """MXNet's test_nadam builds its network's loss this way."""
    data, label = mx.sym.var('data'), mx.sym.var('label')
    out = mx.sym.FullyConnected(data, num_hidden=1, name='fc')
    mod = mx.mod.Module(mx.sym.make_loss(L.L1Loss()(out, label)), label_names=('label',))
    x = np.random.uniform(-1, 1, (40, 3)).astype('float32')
    y = x @ np.array([[0.5], [-1.0], [2.0]], dtype='float32')
    it = mx.io.NDArrayIter(x, y, batch_size=10, label_name='label')
    mod.fit(it, num_epoch=40, optimizer='adam', optimizer_params={'learning_rate': 0.05},
            eval_metric=mx.metric.Loss())
    assert mod.score(it, mx.metric.Loss())[0][1] < 0.1


def test_symbol_comparisons():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    x = np.array([1, 2, 3], dtype='float32')
    y = np.array([3, 2, 1], dtype='float32')
    for op, name in [('__gt__', 'greater'), ('__ge__', 'greater_equal'), ('__lt__', 'lesser'),
                     ('__le__', 'lesser_equal'), ('__eq__', 'equal'), ('__ne__', 'not_equal')]:
        with mx.name.NameManager():
            with_scalar, with_symbol = getattr(a, op)(2.0), getattr(a, op)(b)
        assert with_scalar.name == '_%s_scalar0' % name and with_symbol.name == '_%s0' % name
        expect = getattr(x, op)(y).astype('float32')
        got = with_symbol.bind(mx.cpu(), {'a': mx.nd.array(x), 'b': mx.nd.array(y)}).forward()
        np.testing.assert_array_equal(got[0].asnumpy(), expect)
        expect = getattr(x, op)(2.0).astype('float32')
        got = with_scalar.bind(mx.cpu(), {'a': mx.nd.array(x)}).forward()
        np.testing.assert_array_equal(got[0].asnumpy(), expect)
    assert len({a, b, a}) == 2  # symbols stay hashable
