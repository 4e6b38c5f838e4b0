"""cohort.model's checkpoints (written by the trainer's checkpoint code, read back, MXNet's files
read) and cohort.callback's batch and epoch callbacks with MXNet's log lines."""
import logging
import os

import numpy as np
import pytest

import cohort as mx


def net():
    return mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')


def test_checkpoint_round_trip_leaves_only_whole_files(tmp_path):
    prefix = str(tmp_path / 'model')
    args = {'fc_weight': mx.nd.arange(12).reshape((3, 4)), 'fc_bias': mx.nd.ones(3)}
    aux = {'bn_moving_var': mx.nd.ones(2) * 2}
    mx.model.save_checkpoint(prefix, 3, net(), args, aux)
    assert sorted(os.listdir(tmp_path)) == ['model-0003.params', 'model-symbol.json']
    symbol, args2, aux2 = mx.model.load_checkpoint(prefix, 3)
    assert symbol.tojson() == net().tojson()
    np.testing.assert_array_equal(args2['fc_weight'].asnumpy(), np.arange(12).reshape(3, 4))
    assert aux2['bn_moving_var'].asnumpy().tolist() == [2, 2]
    mx.model.save_checkpoint(prefix, 4, None, args, {})  # parameters only
    assert sorted(mx.model.load_params(prefix, 4)[0]) == ['fc_bias', 'fc_weight']
    with pytest.raises(mx.MXNetError, match='model-0009.params'):
        mx.model.load_checkpoint(prefix, 9)
    with pytest.raises(TypeError, match='arg_params'):
        mx.model.save_checkpoint(prefix, 5, net(), {'fc_weight': 3}, {})


def test_reads_an_mxnet_checkpoint(data_dir, tmp_path):
    import shutil
    shutil.copy(os.path.join(data_dir, 'mxnet', 'checkpoint_v2.params'),
                str(tmp_path / 'mx-0007.params'))  # written by MXNet 1.9.1's save_checkpoint
    args, aux = mx.model.load_params(str(tmp_path / 'mx'), 7)
    assert args['fc1_bias'].asnumpy().tolist() == [1, 4, 4, 4, 5, 6]
    assert args['conv0_weight'].shape == (2, 3, 3, 3)


def test_epoch_callbacks_checkpoint_every_period(tmp_path):
    prefix = str(tmp_path / 'cb')
    callback = mx.callback.do_checkpoint(prefix, period=2)
    for epoch in range(4):
        callback(epoch, net(), {'fc_weight': mx.nd.ones((3, 4)), 'fc_bias': mx.nd.ones(3)}, {})
    assert sorted(os.listdir(tmp_path)) == ['cb-0002.params', 'cb-0004.params', 'cb-symbol.json']

    class Saver(object):
        def __init__(self):
            self.calls = []

        def save_checkpoint(self, prefix, epoch, save_optimizer_states):
            self.calls.append((prefix, epoch, save_optimizer_states))

    mod = Saver()
    module_cb = mx.callback.module_checkpoint(mod, 'p', period=3, save_optimizer_states=True)
    for epoch in range(6):
        module_cb(epoch)
    assert mod.calls == [('p', 3, True), ('p', 6, True)]


def test_batch_callbacks_log_as_mxnet(caplog, monkeypatch):
    caplog.set_level(logging.INFO)
    metric = mx.metric.create('acc')
    metric.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    clock = iter([100.0, 102.0, 103.0])

    class Clock(object):  # the callback module's clock only (logging reads the real one)
        time = staticmethod(lambda: next(clock))

    monkeypatch.setattr(mx.callback, 'time', Clock)
    speedometer = mx.callback.Speedometer(batch_size=32, frequent=2)
    for nbatch in (0, 1, 2):
        speedometer(mx.model.BatchEndParam(epoch=1, nbatch=nbatch, eval_metric=metric,
                                           locals=None))
    assert 'Epoch[1] Batch [0-2]\tSpeed: 32.00 samples/sec\taccuracy=1.000000' in caplog.text
    assert metric.num_inst == 0  # auto_reset
    caplog.clear()
    metric.update([mx.nd.array([1])], [mx.nd.array([[0.9, 0.1]])])
    mx.callback.log_train_metric(1)(mx.model.BatchEndParam(3, 4, metric, None))
    mx.callback.LogValidationMetricsCallback()(mx.model.BatchEndParam(3, 4, metric, None))
    mx.callback.ProgressBar(total=4, length=8)(mx.model.BatchEndParam(0, 2, None, None))
    assert 'Iter[3] Batch[4] Train-accuracy=0.000000' in caplog.text
    assert 'Epoch[3] Validation-accuracy=0.000000' in caplog.text
    assert '[====----] 50%' in caplog.text
