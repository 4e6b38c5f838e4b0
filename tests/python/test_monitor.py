"""cohort.mon.Monitor as MXNet's: statistics of the matching arrays every interval-th batch,
from an Executor and through Module.install_monitor."""
import logging

import numpy as np

import cohort as mx


def test_monitor_collects_matching_arrays_every_interval(caplog):
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    exe = net.simple_bind(mx.cpu(), data=(3, 4), grad_req='null')
    exe.arg_dict['data'][:] = 1
    exe.arg_dict['fc_weight'][:] = 0.5
    exe.arg_dict['fc_bias'][:] = 0
    mon = mx.mon.Monitor(2, pattern='fc.*', sort=True)
    mon.install(exe)
    seen = []
    for step in range(3):
        mon.tic()
        exe.forward()
        seen.append(mon.toc())
    assert seen[1] == []  # step 1 is not an interval-th one
    names = [name for _, name, _ in seen[0]]
    assert names == sorted(names) and 'fc_output' in names and 'fc_weight' in names
    stats = {name: float(text) for _, name, text in seen[0]}
    assert stats['fc_weight'] == 0.5  # norm / sqrt(size) of a constant array
    assert stats['fc_output'] == 2.0  # every output 4 * 0.5
    caplog.set_level(logging.INFO)
    mon.tic()
    exe.forward()
    mon.toc_print()
    assert 'fc_output' not in caplog.text  # step 3: not collected
    mon.tic()
    exe.forward()
    mon.toc_print()
    assert 'Batch:       5 fc_output' in caplog.text


def test_module_installs_a_monitor():
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2,
                                                     name='fc'), name='softmax')
    mod = mx.mod.Module(net)
    mod.bind(data_shapes=[('data', (4, 3))], label_shapes=[('softmax_label', (4,))])
    mod.init_params(mx.init.One())
    mon = mx.mon.Monitor(1, stat_func=lambda x: mx.nd.array([x.asnumpy().max()]),
                         pattern='softmax.*')
    mod.install_monitor(mon)
    mon.tic()
    mod.forward(mx.io.DataBatch([mx.nd.ones((4, 3))], [mx.nd.zeros(4)]), is_train=False)
    result = mon.toc()
    # The outputs, then (as MXNet's toc) the arguments of the module's executors.
    assert [name for _, name, _ in result] == ['softmax_output', 'softmax_label']
    np.testing.assert_allclose(float(result[0][2]), 0.5)  # two equal classes


def test_module_monitor_sees_backward_outputs_as_mxnet():
    # MXNet 1.9.1's 21 entries for this network (its test_monitor): arguments, forward outputs and
    # each backward node's outputs, the gradients of its arguments.
    x = mx.sym.Variable('data')
    x = mx.sym.FullyConnected(name='fc_0', data=x, num_hidden=2)
    x = mx.sym.Activation(name='act_0', data=x, act_type='sigmoid')
    x = mx.sym.FullyConnected(name='fc_1', data=x, num_hidden=2)
    x = mx.sym.Activation(name='act_1', data=x, act_type='sigmoid')
    x = mx.sym.LinearRegressionOutput(data=x, name='softmax', grad_scale=2)
    mod = mx.mod.Module(x)
    mod.bind([('data', (1, 2))], [('softmax_label', (1, 2))])
    mod.init_params(mx.init.Uniform(0.5))
    stats = {}
    mon = mx.mon.Monitor(1, stat_func=lambda a: mx.nd.array(a.asnumpy().ravel()), sort=True)
    mod.install_monitor(mon)
    mon.tic()
    mod.forward_backward(mx.io.DataBatch([mx.nd.array([[0.05, 0.1]])],
                                         [mx.nd.array([[0.01, 0.99]])]))
    for _, name, text in mon.toc():
        stats[name] = np.array([float(v) for v in text.strip('[]\t').split()])
    assert sorted(stats) == sorted([
        'data', 'softmax_label', 'fc_0_weight', 'fc_0_bias', 'fc_1_weight', 'fc_1_bias',
        'fc_0_output', 'act_0_output', 'fc_1_output', 'act_1_output', 'softmax_output',
        'softmax_backward_output0', 'softmax_backward_output1', 'act_1_backward_output',
        'fc_1_backward_output0', 'fc_1_backward_output1', 'fc_1_backward_output2',
        'act_0_backward_output', 'fc_0_backward_output0', 'fc_0_backward_output1',
        'fc_0_backward_output2'])
    grads = mod._exec_group.execs[0].grad_dict
    np.testing.assert_allclose(stats['fc_1_backward_output1'],
                               grads["fc_1_weight"].asnumpy().ravel(), rtol=1e-4)
    np.testing.assert_allclose(stats['fc_0_backward_output2'], grads["fc_0_bias"].asnumpy(),
                               rtol=1e-4)
    # LinearRegressionOutput: grad_scale / 2 outputs a sample · (y - label); the data and the
    # label take none (zeros).
    y = stats['softmax_output']
    np.testing.assert_allclose(stats['softmax_backward_output0'], y - [0.01, 0.99], rtol=1e-4)
    assert not stats['softmax_backward_output1'].any() and not stats['fc_0_backward_output0'].any()
