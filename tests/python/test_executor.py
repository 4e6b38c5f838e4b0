"""cohort.executor.Executor from MXNet 1.x's Executor API: a ResNet block built in Python gives
MXNet 1.9.1's outputs, gradients and BatchNorm statistics (scripts/make_mxnet_symbol_fixtures.py,
the same code); an MLP's gradients equal finite differences; bind, reshape, grad_req add,
copy_params_from and monitor callbacks."""
import os

import numpy as np
import pytest

import cohort as mx


def resblock():
    x = mx.sym.Convolution(mx.sym.var("data"), kernel=(3, 3), pad=(1, 1), num_filter=16,
                           no_bias=True, name="conv0")
    x = mx.sym.BatchNorm(x, fix_gamma=False, eps=2e-5, momentum=0.9, name="bn0")
    x = mx.sym.Activation(x, act_type="relu", name="relu0")
    b = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True,
                           name="stage1_conv1")
    b = mx.sym.BatchNorm(b, fix_gamma=False, eps=2e-5, name="stage1_bn1")
    b = mx.sym.Activation(b, act_type="relu", name="stage1_relu1")
    b = mx.sym.Convolution(b, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True,
                           name="stage1_conv2")
    b = mx.sym.BatchNorm(b, fix_gamma=False, eps=2e-5, name="stage1_bn2")
    x = mx.sym.Activation(b + x, act_type="relu", name="stage1_relu")
    x = mx.sym.Pooling(x, global_pool=True, kernel=(1, 1), pool_type="avg", name="pool")
    x = mx.sym.FullyConnected(mx.sym.Flatten(x, name="flatten"), num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def test_resblock_step_equals_mxnet(data_dir):
    check = mx.nd.load(os.path.join(data_dir, 'symbols', 'resblock-check.params'))
    exe = resblock().simple_bind(mx.cpu(), data=(4, 3, 8, 8), grad_req='write')
    for name, arr in exe.arg_dict.items():
        arr[:] = check['arg:' + name]
    for name, arr in exe.aux_dict.items():
        arr[:] = check['aux:' + name]
    bn_inputs = {}  # the BatchNorms' inputs, seen through a monitor callback
    exe.set_monitor_callback(lambda name, arr: bn_inputs.__setitem__(name, arr.asnumpy())
                             if name.endswith('conv0_output') or 'conv' in name else None)
    exe.forward(is_train=True)
    exe.backward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), check['out:0'].asnumpy(), rtol=1e-4,
                               atol=1e-6)
    assert len(exe.grad_dict) == 13
    for name, grad in exe.grad_dict.items():
        if name != 'softmax_label':
            np.testing.assert_allclose(grad.asnumpy(), check['grad:' + name].asnumpy(),
                                       rtol=1e-3, atol=1e-5, err_msg=name)
    # MXNet 1.9.1 left the graph's moving statistics unchanged (tests/executor/graph_test.cc):
    # they are checked against their definition, 0.9 * moving + 0.1 * the batch's statistic.
    for bn, conv in [('bn0', 'conv0'), ('stage1_bn1', 'stage1_conv1'),
                     ('stage1_bn2', 'stage1_conv2')]:
        x = bn_inputs[conv + '_output']
        mean0, var0 = check['aux:%s_moving_mean' % bn].asnumpy(), \
            check['aux:%s_moving_var' % bn].asnumpy()
        np.testing.assert_allclose(exe.aux_dict[bn + '_moving_mean'].asnumpy(),
                                   0.9 * mean0 + 0.1 * x.mean(axis=(0, 2, 3)), atol=1e-5)
        np.testing.assert_allclose(exe.aux_dict[bn + '_moving_var'].asnumpy(),
                                   0.9 * var0 + 0.1 * x.var(axis=(0, 2, 3)), atol=1e-5)


def mlp_loss():
    x = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=5, name='fc1')
    x = mx.sym.Activation(x, act_type='tanh', name='t')
    x = mx.sym.FullyConnected(x, num_hidden=3, name='fc2')
    return mx.sym.MakeLoss(mx.sym.sum(mx.sym.square(x)), name='loss')


def test_gradients_equal_finite_differences():
    rng = np.random.RandomState(0)
    net = mlp_loss()
    exe = net.simple_bind(mx.cpu(), data=(4, 6))
    values = {n: rng.uniform(-1, 1, a.shape).astype('f') for n, a in exe.arg_dict.items()}
    for n, v in values.items():
        exe.arg_dict[n][:] = v

    def loss(vals):
        return float(net.eval(mx.cpu(), **{n: mx.nd.array(v) for n, v in vals.items()})[0]
                     .asnumpy().sum())

    exe.forward(is_train=True)
    exe.backward()
    eps = 1e-2
    for name in ['fc1_weight', 'fc2_bias', 'data']:
        grad = exe.grad_dict[name].asnumpy()
        for index in [(0,) * grad.ndim, tuple(s - 1 for s in grad.shape)]:
            plus = {n: v.copy() for n, v in values.items()}
            minus = {n: v.copy() for n, v in values.items()}
            plus[name][index] += eps
            minus[name][index] -= eps
            numeric = (loss(plus) - loss(minus)) / (2 * eps)
            assert abs(grad[index] - numeric) < 2e-2 * max(1, abs(numeric)), (name, index)


def test_forward_kwargs_are_checked_and_copied():
    exe = mlp_loss().simple_bind(mx.cpu(), data=(2, 6))
    data = np.ones((2, 6), 'f')
    out = exe.forward(data=data)
    assert out is exe.outputs
    assert exe.arg_dict['data'].asnumpy().tolist() == data.tolist()
    with pytest.raises(TypeError, match='Unknown argument'):
        exe.forward(nodata=data)
    with pytest.raises(ValueError, match='Shape not match'):
        exe.forward(data=np.ones((3, 6), 'f'))
    with pytest.raises(ValueError):
        exe.forward(data=[1, 2])


def test_bind_writes_into_the_callers_gradients_and_add_accumulates():
    x = mx.sym.var('x')
    y = mx.sym.MakeLoss(mx.sym.sum(x * x), name='l')
    xv = mx.nd.array([1, 2, 3])
    gx = mx.nd.zeros(3)
    exe = y.bind(mx.cpu(), args={'x': xv}, args_grad={'x': gx}, grad_req='add')
    for _ in range(2):
        exe.forward(is_train=True)
        exe.backward()
    np.testing.assert_allclose(gx.asnumpy(), [4, 8, 12])  # 2 * (2x)
    assert exe.grad_arrays[0] is gx
    with pytest.raises(ValueError):
        y.bind(mx.cpu(), args=[])


def test_reshape_shares_parameters():
    exe = mlp_loss().simple_bind(mx.cpu(), data=(4, 6))
    exe.arg_dict['fc1_weight'][:] = 0.5
    small = exe.reshape(data=(2, 6))
    assert small.arg_dict['data'].shape == (2, 6)
    assert small.arg_dict['fc1_weight'].handle.address == exe.arg_dict['fc1_weight'].handle.address
    with pytest.raises(mx.MXNetError):
        exe.reshape(data=(8, 6))  # larger needs allow_up_sizing
    assert exe.reshape(allow_up_sizing=True, data=(8, 6)).arg_dict['data'].shape == (8, 6)


def test_copy_params_from_and_monitor():
    exe = mlp_loss().simple_bind(mx.cpu(), data=(2, 6))
    exe.copy_params_from({'fc1_bias': mx.nd.ones(5)})
    assert exe.arg_dict['fc1_bias'].asnumpy().tolist() == [1] * 5
    with pytest.raises(mx.MXNetError):
        exe.copy_params_from({'nothing': mx.nd.ones(5)})
    exe.copy_params_from({'nothing': mx.nd.ones(5)}, allow_extra_params=True)
    seen = []
    exe.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)))
    exe.forward()
    assert ('fc1_output', (2, 5)) in seen and ('loss_output', (1,)) in seen
    assert 'Total' in exe.debug_str()


def test_variables_of_one_name_are_one_input():
    # As MXNet 1.9.1 binds them: list_arguments holds the name twice and both read the last
    # array given under it. Their gradient is refused (MXNet returns one reader's share; binding
    # it crashed the interpreter here).
    y = mx.sym.var('a') * mx.sym.var('a')
    assert y.list_arguments() == ['a', 'a']
    x, z = mx.nd.array([2.0, 3.0]), mx.nd.array([5.0, 7.0])
    exe = y.bind(mx.cpu(), args=[x, z], grad_req='null')
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), [25, 49])
    with pytest.raises(mx.MXNetError, match="2 variables are named 'a'"):
        y.bind(mx.cpu(), args=[x, z], args_grad=[mx.nd.zeros((2,)), mx.nd.zeros((2,))])
    with pytest.raises(mx.MXNetError, match="named 'a'"):
        y.simple_bind(mx.cpu(), a=(2,))


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64'])
def test_optimized_symbol_merges_common_expressions(monkeypatch, dtype):
    # MXNet 1.9.1's counts (its test_eliminate_common_expr): (a+5)+(a+5) loses a node, outputs
    # that became one get a copy, Dropout stays twice; results equal with the pass off.
    a, b = mx.sym.var('a'), mx.sym.var('b')
    d = a + 1
    cases = [((a + 5) + (a + 5), 1), ((a + 1) + (a + 2), 0), ((1 + a) + (a + 1), 1),
             (mx.sym.Group([a * d, a * d]), 0), (mx.sym.Group([a * d + b, a * d + b]), 1),
             (mx.sym.Dropout(a) + mx.sym.Dropout(a), 0)]
    data = {'a': np.array([[0.5, 1.5], [2, -1]], dtype), 'b': np.array([[1, 2], [3, 4]], dtype)}
    for sym, saved in cases:
        inputs = {k: data[k] for k in sym.list_arguments()}
        shapes = {k: v.shape for k, v in inputs.items()}
        runs = []
        for on in ('0', '1'):
            monkeypatch.setenv('MXNET_ELIMINATE_COMMON_EXPR', on)
            exe = sym.simple_bind(mx.cpu(), type_dict={k: dtype for k in shapes}, **shapes)
            outs = exe.forward(is_train=True, **inputs)
            exe.backward([mx.nd.ones_like(o) for o in outs])
            runs.append((len(exe.get_optimized_symbol().get_internals()),
                         [o.asnumpy() for o in outs], [g.asnumpy() for g in exe.grad_arrays]))
        assert runs[0][0] - runs[1][0] == saved
        if 'dropout' not in sym.tojson():
            for x, y in zip(runs[0][1] + runs[0][2], runs[1][1] + runs[1][2]):
                np.testing.assert_array_equal(x, y)
