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
    assert [name for _, name, _ in result] == ['softmax_output']
    np.testing.assert_allclose(float(result[0][2]), 0.5)  # two equal classes
