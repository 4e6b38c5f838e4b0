"""cohort.optimizer against MXNet 1.9.1: three steps of every optimizer through get_updater equal
MXNet's bit for bit (tests/data/mxnet/optimizers.*, made by
scripts/make_mxnet_optimizer_fixtures.py), and the base class's rates, multipliers, counts,
multi-precision states and pickled states behave as MXNet's."""
import json
import os
import pickle

import numpy as np
import pytest

import cohort as mx


def test_every_optimizer_equals_mxnet(data_dir):
    expected = mx.nd.load(os.path.join(data_dir, 'mxnet', 'optimizers.params'))
    with open(os.path.join(data_dir, 'mxnet', 'optimizers.json')) as f:
        cases = json.load(f)
    assert len(cases) == 20
    for case, name, kwargs, dtype in cases:
        opt = mx.optimizer.create(name, param_idx2name={0: 'fc_weight'}, **kwargs)
        updater = mx.optimizer.get_updater(opt)
        weight = expected[case + ':w0'].copy()
        assert weight.dtype == np.dtype(dtype)
        for step in (1, 2, 3):
            updater(0, expected['%s:g%d' % (case, step)].copy(), weight)
            want = expected['%s:w%d' % (case, step)].asnumpy()
            if name == 'lamb':  # its norms: MXNet's scaled sum of squares rounds differently
                np.testing.assert_allclose(weight.asnumpy(), want, rtol=2e-6, atol=0,
                                           err_msg='%s step %d' % (case, step))
            else:
                np.testing.assert_array_equal(weight.asnumpy(), want,
                                              err_msg='%s step %d' % (case, step))


class Halving(object):
    """A scheduler as MXNet's: base_lr, called with the update count."""

    def __init__(self, base_lr=1.0):
        self.base_lr = base_lr

    def __call__(self, num_update):
        return self.base_lr / 2 ** num_update


def test_rates_decay_and_counts_as_mxnet():
    opt = mx.optimizer.SGD(learning_rate=0.5, wd=0.1,
                           param_idx2name={0: 'fc_weight', 1: 'fc_bias', 2: 'bn_gamma'})
    assert opt.learning_rate == 0.5 and opt.lr_mult == {} and opt.wd_mult == {'fc_bias': 0.0}
    assert [opt._get_wd(i) for i in range(3)] == [0.1, 0.0, 0.1]
    opt.set_lr_mult({'fc_bias': 2.0})
    assert opt._get_lr(1) == 1.0 and opt._get_lr(0) == 0.5
    opt.set_learning_rate(0.25)
    assert opt.learning_rate == 0.25
    opt._update_count(0)
    opt._update_count([0, 1])
    assert opt._index_update_count == {0: 2, 1: 1} and opt.num_update == 2

    sched = Halving(1.0)
    with_sched = mx.optimizer.create('sgd', lr_scheduler=sched)
    assert with_sched.learning_rate == 1.0  # num_update 0
    with pytest.raises(UserWarning):
        with_sched.set_learning_rate(0.1)
    mx.optimizer.Optimizer(learning_rate=0.3, lr_scheduler=sched)
    assert sched.base_lr == 0.3  # the optimizer's rate wins, as in MXNet
    assert mx.optimizer.Optimizer().learning_rate == 0.01


def test_symbol_multipliers_reach_the_optimizer():
    data = mx.sym.var('data')
    w = mx.sym.var('fc_weight', lr_mult=0.5, wd_mult=3.0)
    net = mx.sym.FullyConnected(data, weight=w, num_hidden=2, name='fc')
    opt = mx.optimizer.SGD(sym=net, wd=0.1, param_idx2name={0: 'fc_weight', 1: 'fc_bias'})
    assert opt.lr_mult == {'fc_weight': 0.5}
    assert opt.wd_mult == {'fc_bias': 0.0, 'fc_weight': 3.0}
    assert opt._get_lr(0) == 0.005 and abs(opt._get_wd(0) - 0.3) < 1e-12


def test_registry_and_custom_optimizers():
    with pytest.raises(ValueError, match='Cannot find optimizer nosuch'):
        mx.optimizer.create('nosuch')

    @mx.optimizer.register
    class HalfStep(mx.optimizer.Optimizer):
        def create_state(self, index, weight):
            return mx.nd.zeros(weight.shape)

        def update(self, index, weight, grad, state):
            weight[:] -= 0.5 * grad
            state[:] += 1

    opt = mx.optimizer.create('HALFSTEP')
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.ones(3)
    updater(7, mx.nd.ones(3), w)
    updater(7, mx.nd.ones(3), w)
    assert w.asnumpy().tolist() == [0, 0, 0]
    assert updater.states[7].asnumpy().tolist() == [2, 2, 2]
    with pytest.raises(TypeError):
        mx.optimizer.get_updater('sgd')


def test_updater_states_round_trip_and_multi_precision():
    opt = mx.optimizer.Adam(multi_precision=True)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array([0.5, -0.25], dtype='float16')
    updater(0, mx.nd.array([1, 1], dtype='float16'), w)
    master, (mean, var) = updater.states[0]
    assert master.dtype == np.float32 and mean.dtype == np.float32
    np.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(np.float16))
    blob = updater.get_states(dump_optimizer=True)
    other = mx.optimizer.get_updater(mx.optimizer.SGD())
    other.set_states(blob)
    assert isinstance(other.optimizer, mx.optimizer.Adam)
    assert other.optimizer._index_update_count == {0: 1}
    np.testing.assert_array_equal(other.states[0][1][0].asnumpy(), mean.asnumpy())
    assert other.states_synced == {0: False}
    sgd = mx.optimizer.SGD(momentum=0.9, multi_precision=True)
    mom, master = sgd.create_state_multi_precision(0, w)  # SGD keeps the master copy last
    assert master.dtype == np.float32 and mom.dtype == np.float32
    with pytest.warns(UserWarning, match='multi_precision'):
        mx.optimizer.SGD(momentum=0.9).create_state_multi_precision(0, w)
    assert pickle.loads(pickle.dumps(sgd)).momentum == 0.9


def test_lamb_multi_precision_moves_its_master_copy():
    # MXNet 1.9.1's does not (mp_lamb_update_phase2 leaves weight32 alone, so every step starts
    # again from the first weights); here the float32 master takes each step.
    opt = mx.optimizer.LAMB(learning_rate=0.1, multi_precision=True)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.array([0.5, -0.25, 0.1], dtype='float16')
    seen = []
    for _ in range(3):
        updater(0, mx.nd.array([1, 1, 1], dtype='float16'), w)
        master = updater.states[0][0]
        np.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(np.float16))
        seen.append(master.asnumpy().copy())
    assert seen[0][0] > seen[1][0] > seen[2][0]  # a positive gradient: down each step
    # Step 1 equals MXNet's: [0.4673, -0.2827, 0.0672] in float16.
    np.testing.assert_allclose(seen[0].astype(np.float16), [0.4673, -0.2827, 0.0672], atol=1e-4)


@pytest.mark.parametrize('name', ['lamb', 'sgd', 'adam'])
def test_aggregated_update_equals_one_tensor_at_a_time(name):
    """MXNet 1.9's aggregated call (lists of indices, weights, gradients, states: its
    compare_optimizer(ntensors=...) and test_multilamb make it) updates as separate calls."""
    rng = np.random.RandomState(4)
    shapes = [(5, 3), (7,), (2, 2, 2)]
    weights = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    grads = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    kwargs = {'learning_rate': 0.1, 'wd': 0.01, 'rescale_grad': 0.5}
    together, alone = mx.optimizer.create(name, **kwargs), mx.optimizer.create(name, **kwargs)
    w1 = [mx.nd.array(w) for w in weights]
    w2 = [mx.nd.array(w) for w in weights]
    s1 = [together.create_state_multi_precision(i, w) for i, w in enumerate(w1)]
    s2 = [alone.create_state_multi_precision(i, w) for i, w in enumerate(w2)]
    for _ in range(2):
        together.update_multi_precision(list(range(3)), w1, [mx.nd.array(g) for g in grads], s1)
        for i in range(3):
            alone.update_multi_precision(i, w2[i], mx.nd.array(grads[i]), s2[i])
    for a, b, w in zip(w1, w2, weights):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
        assert not np.array_equal(a.asnumpy(), w)
