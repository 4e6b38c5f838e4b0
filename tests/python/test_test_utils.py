"""cohort.test_utils' checks, which MXNet's unit tests lean on: each passes on right values and
fails on wrong ones (a check that cannot fail would hide every defect it is used for)."""
import os

import numpy as np
import pytest

import cohort as mx
from cohort import test_utils as tu


def test_star_import_gives_mxnets_names():
    names = {}
    exec('from cohort.test_utils import *', names)
    for name in ('np', 'mx', 'rnd', 'array', 'assert_almost_equal', 'check_numeric_gradient',
                 'compare_optimizer', 'default_context', 'retry'):
        assert name in names, name


def test_numeric_gradient_catches_a_wrong_gradient():
    data = mx.sym.var('data')
    net = mx.sym.tanh(mx.sym.FullyConnected(data, num_hidden=3, name='fc'))
    location = {'data': np.random.normal(size=(2, 4)), 'fc_weight': np.random.normal(size=(3, 4)),
                'fc_bias': np.random.normal(size=(3,))}
    tu.check_numeric_gradient(net, location, rtol=1e-2, atol=1e-2)  # float32, eps 1/512
    # BlockGrad's gradient is zero where the function's is not: the check must say so.
    x = mx.sym.var('x')
    with pytest.raises(AssertionError, match='NUMERICAL_x'):
        tu.check_numeric_gradient(mx.sym.BlockGrad(x) * 1.0 + x * 0.0, {'x': np.ones((2, 2))})


def test_symbolic_forward_and_backward_checks():
    a, b = mx.sym.var('a'), mx.sym.var('b')
    prod = a * b
    x, y = np.array([[1., 2.]]), np.array([[3., 4.]])
    tu.check_symbolic_forward(prod, [x, y], [x * y])
    with pytest.raises(AssertionError):
        tu.check_symbolic_forward(prod, [x, y], [x + y])
    head = np.array([[1., 10.]])
    tu.check_symbolic_backward(prod, {'a': x, 'b': y}, [head], {'a': head * y, 'b': head * x})
    tu.check_symbolic_backward(prod, [x, y], [head], [head * y, head * x], grad_req='add')
    with pytest.raises(AssertionError):
        tu.check_symbolic_backward(prod, [x, y], [head], [head * x, head * y])
    assert tu.simple_forward(prod, a=x, b=y).tolist() == [[3, 8]]


def test_compare_optimizer_tells_optimizers_apart():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                         mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1),
                             mx.optimizer.SGD(learning_rate=0.2), (3, 4), np.float32)
    with pytest.raises(ValueError, match='dense'):
        tu.compare_optimizer(mx.optimizer.SGD(), mx.optimizer.SGD(), (3, 4), np.float32,
                             w_stype='row_sparse')


def test_small_helpers():
    with tu.environment({'COHORT_TEST_VAR': '1'}):
        assert os.environ['COHORT_TEST_VAR'] == '1'
    assert 'COHORT_TEST_VAR' not in os.environ
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) == 2

    flaky()
    assert len(calls) == 2
    np.testing.assert_array_equal(tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)),
                                  np.full((3, 1), 8))
    base = mx.nd.zeros((4, 2))
    assert tu.same_array(base, base[1:3]) is False and tu.same_array(base[1], base[1])
    assert not tu.same_array(base, base.copy())
    assert tu.get_tols(np.ones(2, np.float16), np.ones(2, np.float32), None, None) == (1e-2, 1e-1)
    assert tu.create_2d_tensor(3, 2).asnumpy().tolist() == [[0, 0], [1, 1], [2, 2]]
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 2.0]))
    tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
