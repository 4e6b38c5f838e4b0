"""cohort.mod.Module: fit from given parameters equals MXNet 1.9.1's Module.fit
(tests/data/mxnet/module_fit.params, scripts/make_mxnet_module_fixtures.py), two devices equal
one, the step API (forward, backward, update, get_outputs, get_params, set_params), predict's
padding, checkpoints with optimizer states, fixed parameters, and errors."""
import json
import os

import numpy as np
import pytest

import cohort as mx


def network():
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=16, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(net, name='softmax')


@pytest.fixture
def mxnet_fit(data_dir):
    return mx.nd.load(os.path.join(data_dir, 'mxnet', 'module_fit.params'))


def fitted(saved, context, kvstore='local'):
    x, y = saved['data'].asnumpy(), saved['label'].asnumpy()
    init = {k[5:]: v.copy() for k, v in saved.items() if k.startswith('init:')}
    mod = mx.mod.Module(network(), context=context)
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=20, shuffle=False), num_epoch=2,
            arg_params=init, kvstore=kvstore, optimizer='sgd',
            optimizer_params={'learning_rate': 0.1, 'momentum': 0.9, 'wd': 0.001})
    return mod


def test_fit_equals_mxnet(mxnet_fit):
    mod = fitted(mxnet_fit, mx.cpu())
    args, aux = mod.get_params()
    assert sorted(args) == ['fc1_bias', 'fc1_weight', 'fc2_bias', 'fc2_weight'] and aux == {}
    for name, value in args.items():
        np.testing.assert_allclose(value.asnumpy(), mxnet_fit['final:' + name].asnumpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=name)
    x, y = mxnet_fit['data'].asnumpy(), mxnet_fit['label'].asnumpy()
    predicted = mod.predict(mx.io.NDArrayIter(x, y, batch_size=30))  # 100 rows, pad 20
    assert predicted.shape == (100, 3)
    np.testing.assert_allclose(predicted.asnumpy(), mxnet_fit['predict'].asnumpy(), rtol=1e-4,
                               atol=1e-5)
    score = mod.score(mx.io.NDArrayIter(x, y, batch_size=20), 'acc')
    assert score[0][0] == 'accuracy'
    assert score[0][1] == pytest.approx(mxnet_fit['score'].asscalar())


def test_two_devices_equal_one(mxnet_fit):
    one = fitted(mxnet_fit, mx.cpu(0)).get_params()[0]
    two = fitted(mxnet_fit, [mx.cpu(0), mx.cpu(1)]).get_params()[0]
    for name in one:
        np.testing.assert_allclose(two[name].asnumpy(), one[name].asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    # The devices' sums updating each device's copy (not the store's): alike.
    with mx.test_utils.environment('MXNET_UPDATE_ON_KVSTORE', '0'):
        three = fitted(mxnet_fit, [mx.cpu(0), mx.cpu(1)]).get_params()[0]
    for name in one:
        np.testing.assert_allclose(three[name].asnumpy(), one[name].asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    # Without a store each device steps with its own half batch, as in MXNet: not alike.
    alone = fitted(mxnet_fit, [mx.cpu(0), mx.cpu(1)], kvstore=None).get_params()[0]
    assert not np.allclose(alone['fc1_weight'].asnumpy(), one['fc1_weight'].asnumpy())


def test_step_api_and_checkpoints(tmp_path, mxnet_fit):
    x, y = mxnet_fit['data'].asnumpy()[:20], mxnet_fit['label'].asnumpy()[:20]
    mod = mx.mod.Module(network(), context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[('data', (20, 10))], label_shapes=[('softmax_label', (20,))])
    assert mod.output_shapes == [('softmax_output', (20, 3))]
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mod.forward(batch, is_train=True)
    out = mod.get_outputs()[0]
    assert out.shape == (20, 3)
    np.testing.assert_allclose(out.asnumpy().sum(axis=1), np.ones(20), rtol=1e-5)
    assert [o.shape for o in mod.get_outputs(merge_multi_context=False)[0]] == [(10, 3),
                                                                                (10, 3)]
    before = mod.get_params()[0]['fc2_bias'].asnumpy().copy()
    mod.backward()
    mod.update()
    after = mod.get_params()[0]['fc2_bias'].asnumpy()
    # fc2_bias's gradient is (softmax - onehot) summed over the batch; lr 0.5 / batch 20.
    onehot = np.eye(3)[y.astype(int)]
    np.testing.assert_allclose(before - after, 0.5 / 20 * (out.asnumpy() - onehot).sum(axis=0),
                               rtol=1e-4, atol=1e-6)
    metric = mx.metric.create('acc')
    mod.update_metric(metric, batch.label)
    assert metric.num_inst == 20

    prefix = str(tmp_path / 'mlp')
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    assert sorted(os.listdir(tmp_path)) == ['mlp-0001.params', 'mlp-0001.states',
                                            'mlp-symbol.json']
    again = mx.mod.Module.load(prefix, 1, load_optimizer_states=True,
                               context=[mx.cpu(0), mx.cpu(1)])
    again.bind(data_shapes=[('data', (20, 10))], label_shapes=[('softmax_label', (20,))])
    again.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(again.get_params()[0][name].asnumpy(), value.asnumpy())


def test_fixed_parameters_stay(mxnet_fit):
    x, y = mxnet_fit['data'].asnumpy(), mxnet_fit['label'].asnumpy()
    init = {k[5:]: v.copy() for k, v in mxnet_fit.items() if k.startswith('init:')}
    mod = mx.mod.Module(network(), fixed_param_names=['fc1_weight', 'fc1_bias'])
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=20), num_epoch=1, arg_params=init,
            optimizer_params={'learning_rate': 0.1})
    args = mod.get_params()[0]
    np.testing.assert_array_equal(args['fc1_weight'].asnumpy(), init['fc1_weight'].asnumpy())
    assert not np.array_equal(args['fc2_weight'].asnumpy(), init['fc2_weight'].asnumpy())


def test_bad_calls_say_what_is_wrong(mxnet_fit):
    with pytest.raises(TypeError, match='symbol must be a Symbol'):
        mx.mod.Module('net')
    with pytest.raises(ValueError, match="'pixels' is not an argument"):
        mx.mod.Module(network(), data_names=('pixels',))
    mod = mx.mod.Module(network())
    with pytest.raises(AssertionError, match='bind'):
        mod.init_params()
    with pytest.raises(AssertionError, match='number of epochs'):
        mod.fit(mx.io.NDArrayIter(np.zeros((4, 10)), np.zeros(4), batch_size=2))
    mod.bind(data_shapes=[('data', (2, 10))], label_shapes=[('softmax_label', (2,))])
    with pytest.raises(RuntimeError, match='fc1_bias is not presented'):
        mod.init_params(arg_params={'fc1_weight': mx.nd.zeros((16, 10))})
    with pytest.raises(ValueError, match='no parameter named extra_weight'):
        mod.init_params(arg_params={'extra_weight': mx.nd.zeros(1)}, allow_missing=True)
    with pytest.raises(ValueError, match='Cannot find optimizer nosuch'):
        mod.init_params()
        mod.init_optimizer(optimizer='nosuch')


def test_head_gradients_reach_every_device():
    # A network with no loss: backward takes the head gradients of the whole batch, each
    # device its rows; fc's weight gradient is head^T x over the batch.
    x = np.random.normal(size=(6, 4)).astype(np.float32)
    head = np.random.normal(size=(6, 3)).astype(np.float32)
    net = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc')
    for context in (mx.cpu(0), [mx.cpu(0), mx.cpu(1)]):
        mod = mx.mod.Module(net, label_names=None, context=context)
        mod.bind(data_shapes=[('data', (6, 4))])
        mod.init_params(mx.init.One())
        mod.init_optimizer(optimizer_params={'learning_rate': 1.0, 'rescale_grad': 1.0})
        mod.forward(mx.io.DataBatch([mx.nd.array(x)]), is_train=True)
        mod.backward([mx.nd.array(head)])
        mod.update()
        np.testing.assert_allclose(mod.get_params()[0]['fc_weight'].asnumpy(),
                                   1 - head.T @ x, rtol=1e-5, atol=1e-5)
    with pytest.raises(mx.MXNetError, match='whole batch of 6 rows'):
        mod.backward([mx.nd.zeros((3, 3))])


def test_executor_group_as_mxnets_module_uses_it():
    from cohort.module.executor_group import DataParallelExecutorGroup
    group = DataParallelExecutorGroup(network(), [mx.cpu(0), mx.cpu(1)], [1, 1],
                                      [('data', (4, 10))], [('softmax_label', (4,))],
                                      ['fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias'],
                                      for_training=True, inputs_need_grad=False,
                                      fixed_param_names=['fc1_bias'])
    assert group.param_names == ['fc1_weight', 'fc2_weight', 'fc2_bias']
    assert [len(p) for p in group.param_arrays] == [2, 2, 2]  # [parameter][device]
    assert group.get_output_shapes() == [('softmax_output', (4, 3))]
    group.set_params({n: mx.nd.ones(s) for n, s in [('fc1_weight', (16, 10)), ('fc1_bias', (16,)),
                                                     ('fc2_weight', (3, 16)),
                                                     ('fc2_bias', (3,))]}, {})
    group.forward(mx.io.DataBatch([mx.nd.ones((4, 10))], [mx.nd.zeros(4)]), is_train=True)
    assert [o.shape for o in group.get_outputs(merge_multi_context=False)[0]] == [(2, 3), (2, 3)]
    np.testing.assert_allclose(group.get_outputs()[0].asnumpy(), np.full((4, 3), 1 / 3.),
                               rtol=1e-6)
    group.backward()
    assert group.grad_arrays[0][0].shape == (16, 10)
    with pytest.raises(mx.MXNetError, match='grad_req'):
        DataParallelExecutorGroup(network(), [mx.cpu()], None, [('data', (4, 10))], None, [],
                                  True, False, grad_req='null')


def test_set_params_missing_and_extra_as_mxnet():
    mod = mx.mod.Module(network())
    mod.bind([('data', (2, 4))], [('softmax_label', (2,))])
    mod.init_params()
    params = {k: v.copy() for k, v in mod.get_params()[0].items()}
    missing = dict(params)
    del missing['fc2_bias']
    extra = dict(params, fc9_weight=mx.nd.ones((2,)))
    mod.set_params(missing, {}, allow_missing=True)
    with pytest.raises(RuntimeError):
        mod.set_params(missing, {})
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True)
    with pytest.raises(ValueError, match='fc9_weight'):
        mod.set_params(extra, {}, allow_missing=True)
    with pytest.raises(ValueError, match='fc9_weight'):
        mod.set_params(extra, {})
    params['fc1_bias'][:] = 7
    mod.set_params(params, {})
    assert mod.get_params()[0]['fc1_bias'].asnumpy().tolist() == [7] * 16


def test_forward_takes_any_batch_object_and_predict_an_array():
    from collections import namedtuple
    Batch = namedtuple('Batch', ['data'])  # no label, no pad
    mod = mx.mod.Module(mx.sym.var('data') * 2, label_names=None)
    mod.bind(data_shapes=[('data', (1, 10))])
    mod.init_params()
    mod.forward(Batch([mx.nd.ones((3, 5))]))  # another shape: the module reshapes
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.full((3, 5), 2))
    out = mod.predict(np.arange(4.0).reshape(1, 4))  # one batch, as MXNet's
    np.testing.assert_array_equal(out.asnumpy(), [[0, 2, 4, 6]])
    with pytest.raises(ValueError, match='NDArray or DataIter'):
        mod.predict([1, 2])


def test_update_without_parameters_is_a_no_op():
    mod = mx.mod.Module(mx.sym.Dropout(mx.sym.var('data'), 0.5))
    mod.bind(data_shapes=[('data', (4, 3))])
    mod.init_params()
    mod.init_optimizer()
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((4, 3))]))
    mod.update()
    assert set(mod.get_outputs()[0].asnumpy().ravel()) <= {0.0, 2.0}


def test_input_grads_over_two_devices_equal_one_executor():
    net = network()
    x = np.random.RandomState(3).uniform(-1, 1, (6, 4)).astype(np.float32)
    y = np.array([0, 1, 2, 0, 1, 2], dtype=np.float32)
    mod = mx.mod.Module(net, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (6, 4))], [('softmax_label', (6,))], inputs_need_grad=True)
    mod.init_params(mx.init.Xavier())
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    merged = mod.get_input_grads()[0].asnumpy()
    per_device = mod.get_input_grads(merge_multi_context=False)[0]
    assert [g.shape for g in per_device] == [(3, 4), (3, 4)]
    assert mod._exec_group.execs[0].grad_dict.get('softmax_label') is None  # labels take none
    args, _ = mod.get_params()
    exe = net.simple_bind(mx.cpu(), data=(6, 4), softmax_label=(6,))
    for name, value in args.items():
        exe.arg_dict[name][:] = value
    exe.forward(is_train=True, data=x, softmax_label=y)
    exe.backward()
    np.testing.assert_allclose(merged, exe.grad_dict['data'].asnumpy(), rtol=1e-5, atol=1e-7)
    assert np.abs(merged).max() > 0
    plain = mx.mod.Module(net)
    plain.bind([('data', (6, 4))], [('softmax_label', (6,))])
    plain.init_params()
    with pytest.raises(AssertionError, match='inputs_need_grad'):
        plain.get_input_grads()


def test_tnc_layout_splits_axis_one_and_equals_one_executor():
    """A 'TNC' input is split over the devices along N (axis 1), as is an output whose node
    has __layout__='TNC'; outputs, input and parameter gradients equal one executor's."""
    data = mx.sym.var('data')
    net = mx.sym.FullyConnected(data, num_hidden=5, flatten=False, name='fc')
    net = mx.sym.Activation(net, act_type='tanh', name='act', __layout__='TNC')
    rng = np.random.RandomState(5)
    x = rng.uniform(-1, 1, (3, 8, 4)).astype(np.float32)
    head = rng.uniform(-1, 1, (3, 8, 5)).astype(np.float32)
    mod = mx.mod.Module(net, label_names=None, context=[mx.cpu(0), mx.cpu(1)],
                        work_load_list=[3, 1])
    mod.bind([mx.io.DataDesc('data', (3, 8, 4), layout='TNC')], inputs_need_grad=True)
    mod.init_params(mx.init.Xavier())
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], None), is_train=True)
    mod.backward([mx.nd.array(head)])
    assert [o.shape for o in mod.get_outputs(merge_multi_context=False)[0]] == \
        [(3, 6, 5), (3, 2, 5)]
    assert [g.shape for g in mod.get_input_grads(merge_multi_context=False)[0]] == \
        [(3, 6, 4), (3, 2, 4)]
    args, _ = mod.get_params()
    exe = net.simple_bind(mx.cpu(), data=(3, 8, 4))
    for name, value in args.items():
        exe.arg_dict[name][:] = value
    exe.forward(is_train=True, data=x)
    exe.backward([mx.nd.array(head)])
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), exe.outputs[0].asnumpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(),
                               exe.grad_dict['data'].asnumpy(), rtol=1e-5, atol=1e-7)
    summed = sum(e.grad_dict['fc_weight'].asnumpy() for e in mod._exec_group.execs)
    np.testing.assert_allclose(summed, exe.grad_dict['fc_weight'].asnumpy(), rtol=1e-5,
                               atol=1e-6)


def test_outputs_without_a_batch_axis_concatenate_as_mxnet():
    """A loss of one value a device (MakeLoss of a sum) merges as MXNet's
    _merge_multi_context: the devices' values concatenated, (2,) for two devices."""
    data = mx.sym.var('data')
    net = mx.sym.MakeLoss(mx.sym.sum(mx.sym.FullyConnected(data, num_hidden=2, name='fc')))
    mod = mx.mod.Module(net, label_names=None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind([('data', (4, 3))])
    mod.init_params()
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], None), is_train=False)
    parts = [p.asnumpy() for p in mod.get_outputs(merge_multi_context=False)[0]]
    merged = mod.get_outputs()[0].asnumpy()
    assert merged.shape == (2,)
    np.testing.assert_array_equal(merged, np.concatenate(parts))


def test_float16_data_binds_the_network_in_float16():
    """MXNet's test_module_dtype: the data's dtype reaches the executors (type_dict)."""
    net = mx.sym.Activation(mx.sym.var('data'), act_type='relu', __layout__='TNC')
    mod = mx.mod.Module(net, ('data',), None, context=[mx.cpu(0), mx.cpu(1)])
    mod.bind(data_shapes=[mx.io.DataDesc('data', (3, 8, 7), np.float16, layout='TNC')])
    mod.init_params()
    x = np.random.RandomState(1).uniform(-1, 1, (3, 8, 7)).astype(np.float16)
    mod.forward(mx.io.DataBatch([mx.nd.array(x, dtype=np.float16)], None))
    out = mod.get_outputs()[0]
    assert out.dtype == np.float16 and out.shape == (3, 8, 7)
    np.testing.assert_array_equal(out.asnumpy(), np.maximum(x, 0))


def test_group2ctxs_places_layers_and_trains_as_one_context():
    # MXNet's model parallelism: each ctx_group's layers (and their parameters) on its context,
    # copies between; a fit over two devices, each with its groups, equals a plain one.
    def net():
        with mx.AttrScope(ctx_group='stage1'):
            h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=8,
                                                        name='fc1'), act_type='relu',
                                  name='relu1')
        with mx.AttrScope(ctx_group='stage2'):
            out = mx.sym.FullyConnected(h, num_hidden=3, name='fc2')
            return mx.sym.SoftmaxOutput(out, name='softmax')
    rs = np.random.RandomState(5)
    x = rs.uniform(-1, 1, (24, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float32) + (x[:, 1] > 0)
    params = {}
    for groups in (None, {'stage1': [mx.cpu(2), mx.cpu(4)], 'stage2': mx.cpu(3)},
                   [{'stage1': mx.cpu(2), 'stage2': mx.cpu(3)},
                    {'stage1': mx.cpu(4), 'stage2': mx.cpu(5)}]):
        mx.random.seed(1)
        mod = mx.mod.Module(net(), context=[mx.cpu(0), mx.cpu(1)], group2ctxs=groups)
        it = mx.io.NDArrayIter(x, y, batch_size=6)
        mod.fit(it, num_epoch=3, initializer=mx.init.Xavier(), optimizer='sgd',
                optimizer_params={'learning_rate': 0.5})
        if groups is not None:
            execs = mod._exec_group.execs
            assert execs[0].arg_dict['fc1_weight'].context == mx.cpu(2)
            assert execs[1].arg_dict['fc1_weight'].context == mx.cpu(4)
            assert execs[0].arg_dict['fc2_weight'].context == mx.cpu(3)
            assert execs[0].outputs[0].context == mx.cpu(3)
            nodes = json.loads(execs[0].get_optimized_symbol().tojson())['nodes']
            assert [n['name'] for n in nodes if n['op'] == '_CrossDeviceCopy'] == \
                ['relu1_0_copy']
        params[str(groups)] = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    first = params.pop('None')
    for placed in params.values():
        for name, value in first.items():
            np.testing.assert_array_equal(placed[name], value)
    with pytest.raises(AssertionError, match='length of group2ctxs'):
        mx.mod.Module(net(), context=[mx.cpu(0), mx.cpu(1)],
                      group2ctxs=[{'stage1': mx.cpu(2)}]).bind([('data', (6, 4))],
                                                               [('softmax_label', (6,))])


def bucket_sym_gen(seq_len):
    """An unrolled sum over seq_len steps of one shared FullyConnected: the parameters do not
    depend on the bucket, the graph does."""
    data = mx.sym.var('data')
    steps = mx.sym.SliceChannel(data, num_outputs=seq_len, axis=1, squeeze_axis=True)
    hidden = None
    weight, bias = mx.sym.var('fc_weight'), mx.sym.var('fc_bias')
    for t in range(seq_len):
        h = mx.sym.FullyConnected(steps[t], num_hidden=3, name='fc%d' % t, weight=weight,
                                  bias=bias)
        hidden = h if hidden is None else hidden + h
    out = mx.sym.SoftmaxOutput(hidden, name='softmax')
    return out, ('data',), ('softmax_label',)


def test_bucketing_module_shares_parameters_and_switches_by_key():
    rng = np.random.RandomState(0)
    mod = mx.mod.BucketingModule(bucket_sym_gen, default_bucket_key=4)
    mod.bind([('data', (2, 4, 5))], [('softmax_label', (2,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.1})
    args, _ = mod.get_params()
    assert sorted(args) == ['fc_bias', 'fc_weight']
    for key in (4, 2, 4, 3):
        x = rng.uniform(-1, 1, (2, key, 5)).astype(np.float32)
        y = np.array([0, 2], dtype=np.float32)
        batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=key,
                                provide_data=[mx.io.DataDesc('data', (2, key, 5))],
                                provide_label=[mx.io.DataDesc('softmax_label', (2,))])
        before = {k: v.copy() for k, v in mod.get_params()[0].items()}
        mod.forward_backward(batch)
        assert mod._curr_bucket_key == key and mod.symbol.list_arguments()[0] == 'data'
        # The bucket's gradient is the one network of key steps' gradient at these parameters.
        exe = bucket_sym_gen(key)[0].simple_bind(mx.cpu(), data=(2, key, 5), softmax_label=(2,))
        for name, value in before.items():
            exe.arg_dict[name][:] = value
        exe.forward(is_train=True, data=x, softmax_label=y)
        exe.backward()
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), exe.outputs[0].asnumpy(),
                                   rtol=1e-5)
        grad = mod._curr_module._exec_group.execs[0].grad_dict['fc_weight'].asnumpy()
        np.testing.assert_allclose(grad, exe.grad_dict['fc_weight'].asnumpy(), rtol=1e-5,
                                   atol=1e-7)
        mod.update()
        after = mod.get_params()[0]['fc_weight'].asnumpy()
        # SGD at rate 0.1, the gradient rescaled by 1 / batch size 2 (Module's default).
        np.testing.assert_allclose(after, before['fc_weight'].asnumpy() - 0.05 * grad, rtol=1e-5,
                                   atol=1e-7)
    with pytest.raises(AssertionError, match='default_bucket_key'):
        mx.mod.BucketingModule(bucket_sym_gen)


def test_bucketing_module_keys_of_any_hashable_type():
    """Keys that are not ints (here strings and a tuple, beside ints) each get their own graph,
    as MXNet's keys may be any hashable value."""
    lengths = {'short': 2, ('long', 1): 4, 3: 3, 4: 4}
    mod = mx.mod.BucketingModule(lambda key: bucket_sym_gen(lengths[key]),
                                 default_bucket_key=('long', 1))
    mod.bind([('data', (2, 4, 5))], [('softmax_label', (2,))])
    mod.init_params(mx.init.Xavier())
    for key in ('short', 3, ('long', 1), 4, 'short'):
        n = lengths[key]
        batch = mx.io.DataBatch([mx.nd.ones((2, n, 5))], [mx.nd.zeros((2,))], bucket_key=key,
                                provide_data=[mx.io.DataDesc('data', (2, n, 5))],
                                provide_label=[mx.io.DataDesc('softmax_label', (2,))])
        mod.forward(batch, is_train=False)
        assert mod.symbol.list_outputs() == ['softmax_output']
        # n steps of the shared layer on ones: the logits are n times one step's.
        exe = bucket_sym_gen(n)[0].simple_bind(mx.cpu(), data=(2, n, 5), softmax_label=(2,))
        for name, value in mod.get_params()[0].items():
            exe.arg_dict[name][:] = value
        exe.forward(data=np.ones((2, n, 5), np.float32))
        np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), exe.outputs[0].asnumpy(),
                                   rtol=1e-6)


def test_bucketing_module_checkpoint_round_trip(tmp_path):
    mod = mx.mod.BucketingModule(bucket_sym_gen, default_bucket_key=3)
    mod.bind([('data', (2, 3, 5))], [('softmax_label', (2,))])
    mod.init_params(mx.init.Xavier())
    prefix = str(tmp_path / 'bucketed')
    mod.save_checkpoint(prefix, 1)
    loaded = mx.mod.BucketingModule.load(prefix, 1, sym_gen=bucket_sym_gen, default_bucket_key=3)
    loaded.bind([('data', (2, 3, 5))], [('softmax_label', (2,))])
    for name, value in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][name].asnumpy(), value.asnumpy())


def test_grad_req_add_accumulates_over_backward_and_buckets():
    # MXNet 1.9.1's test_bucket_module_grad_req: d(sum(data * a))/da over a batch of 2 ones is 2;
    # 'add' keeps adding until the caller zeroes it, across buckets too (they share it).
    def sym_gen(_):
        a = mx.sym.Variable('a', shape=(1,), init=mx.init.One())
        return mx.sym.make_loss(mx.sym.broadcast_mul(mx.sym.var('data'), a)), ('data',), None

    for req, want in (('write', [2, 2, 2]), ('add', [2, 4, 6])):
        mod = mx.mod.BucketingModule(sym_gen=sym_gen, default_bucket_key=10)
        mod.bind(data_shapes=[['data', (2,)]], grad_req=req)
        mod.init_params()
        assert mod._curr_module._grad_req == req
        seen = []
        for key in (10, 5, 10):
            mod.forward_backward(mx.io.DataBatch(
                [mx.nd.ones((2,))], None, bucket_key=key,
                provide_data=[mx.io.DataDesc('data', (2,))]))
            seen.append(mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar())
        assert seen == want
        mod._curr_module._exec_group.execs[0].grad_dict['a'][:] = 0
        mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2,))], None, bucket_key=5,
                                             provide_data=[mx.io.DataDesc('data', (2,))]))
        assert mod._curr_module._exec_group.execs[0].grad_dict['a'].asscalar() == 2


def test_a_misspelt_keyword_names_the_closest_and_the_accepted_ones():
    data = mx.sym.var('data')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2), name='softmax')
    mod = mx.mod.Module(net)
    it = mx.io.NDArrayIter(np.zeros((4, 3), np.float32), np.zeros(4, np.float32), batch_size=2)
    with pytest.raises(TypeError, match=r"fit\(\) got an unexpected keyword argument "
                                        r"'num_epochs' \(did you mean 'num_epoch'\?\); it takes "
                                        r"allow_missing, arg_params, .*num_epoch"):
        mod.fit(it, num_epochs=1)
    with pytest.raises(TypeError, match=r"optimizer 'sgd' got an unexpected keyword argument "
                                        r"'learning_rte' \(did you mean 'learning_rate'\?\); "
                                        r"it takes .*momentum"):
        mx.optimizer.create('sgd', learning_rte=0.1)
    with pytest.raises(TypeError, match=r"NDArrayIter\(\) got an unexpected keyword argument "
                                        r"'batch_sise' \(did you mean 'batch_size'\?\)"):
        mx.io.NDArrayIter(np.zeros((4, 3)), batch_sise=2)
    with pytest.raises(TypeError, match=r"Module\(\) got an unexpected keyword argument "
                                        r"'contexts' \(did you mean 'context'\?\)"):
        mx.mod.Module(net, contexts=mx.cpu())
    # What the functions take still works, by keyword.
    assert mx.optimizer.create('sgd', learning_rate=0.1, momentum=0.9).momentum == 0.9


def _fit_params(native, contexts, optimizer='sgd', optimizer_params=None, symbol=None, **kwargs):
    """Module.fit on the C++ loop (native) or MXNet's Python loop, from one seed."""
    from cohort.module import native_fit
    native_fit.ENABLED = native
    try:
        mx.random.seed(3)
        np.random.seed(5)  # NDArrayIter's shuffle seed
        rs = np.random.RandomState(0)
        x = rs.uniform(-1, 1, (60, 5)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.float32) + (x[:, 1] > 0)
        mod = mx.mod.Module(network() if symbol is None else symbol, context=contexts)
        calls = []
        callbacks = dict(
            batch_end_callback=lambda p: calls.append((p.epoch, p.nbatch, p.eval_metric.get()[1])),
            epoch_end_callback=lambda e, s, a, x: calls.append(('end', e, sorted(a))))
        callbacks.update(kwargs)
        mod.fit(mx.io.NDArrayIter(x, y, batch_size=10, shuffle=True),
                eval_data=mx.io.NDArrayIter(x, y, batch_size=10), num_epoch=3,
                optimizer=optimizer, optimizer_params=optimizer_params or {},
                initializer=mx.init.Xavier(), **callbacks)
        return mod, {k: v.asnumpy() for k, v in mod.get_params()[0].items()}, calls
    finally:
        native_fit.ENABLED = True


@pytest.mark.parametrize('devices', [1, 2])
@pytest.mark.parametrize('optimizer,params', [
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3}),
    ('adam', {'learning_rate': 0.01,
              'lr_scheduler': None}),
    ('rmsprop', {'learning_rate': 0.01, 'centered': True}),
])
def test_fit_on_the_cpp_loop_equals_the_python_loop(devices, optimizer, params):
    # The C++ loop (cohort-train's Trainer::Fit over the Module's manager) and MXNet's Python
    # loop give the same parameters bit for bit, and the callbacks the same arguments.
    contexts = [mx.cpu(i) for i in range(devices)]
    params = dict(params)
    if 'lr_scheduler' in params:
        params['lr_scheduler'] = mx.lr_scheduler.FactorScheduler(step=4, factor=0.5)
    native, got, native_calls = _fit_params(True, contexts, optimizer, params)
    if 'lr_scheduler' in params:
        params['lr_scheduler'] = mx.lr_scheduler.FactorScheduler(step=4, factor=0.5)
    python, want, python_calls = _fit_params(False, contexts, optimizer, params)
    assert native._native_trainer is not None and python._native_trainer is None
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    assert native_calls == python_calls
    assert native_calls[0][:2] == (0, 0) and native_calls[-1][:2] == ('end', 2)


def float16_network():
    """network() computing in float16 from float32 data: its weights infer float16."""
    data = mx.sym.Cast(mx.sym.var('data'), dtype='float16')
    net = mx.sym.FullyConnected(data, num_hidden=16, name='fc1')
    net = mx.sym.Activation(net, act_type='relu', name='relu1')
    net = mx.sym.FullyConnected(net, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(mx.sym.Cast(net, dtype='float32'), name='softmax')


@pytest.mark.parametrize('optimizer,params', [
    ('sgd', {'learning_rate': 0.1, 'momentum': 0.9, 'wd': 1e-3}),
    ('adam', {'learning_rate': 0.01}),
])
def test_float16_weights_with_multi_precision_fit_on_the_cpp_loop(optimizer, params,
                                                                   monkeypatch):
    # Note [Multi-precision weights]: float16 weights keep float32 master copies in the C++
    # optimizer, whose updates are the Python loop's (mp_sgd_mom_update, mp_adam_update). One
    # device gives the same float16 weights bit for bit and the same callbacks. Two devices (which
    # the Python loop cannot train: its store sums float32 values) sum their float16 gradients in
    # float32: one device's weights within float16's rounding.
    params = dict(params, multi_precision=True)
    native, got, native_calls = _fit_params(True, [mx.cpu()], optimizer, params,
                                            float16_network())
    python, want, python_calls = _fit_params(False, [mx.cpu()], optimizer, params,
                                             float16_network())
    assert native._native_trainer is not None and python._native_trainer is None
    for name, value in want.items():
        assert got[name].dtype == np.float16, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    assert native_calls == python_calls
    for overlap in ('0', '1'):  # the sums made after backward, or during it
        monkeypatch.setenv('COHORT_KVSTORE_OVERLAP', overlap)
        two, got2, _ = _fit_params(True, [mx.cpu(0), mx.cpu(1)], optimizer, params,
                                   float16_network())
        assert two._native_trainer is not None
        for name, value in got.items():
            assert got2[name].dtype == np.float16, name
            np.testing.assert_allclose(got2[name], value, rtol=0, atol=2e-3, err_msg=name)
    contexts = [mx.cpu()]
    # Trained: the weights moved from where the same seed starts them.
    _, start, _ = _fit_params(True, contexts, optimizer, dict(params, learning_rate=0.0),
                              float16_network())
    assert not np.array_equal(got['fc1_weight'], start['fc1_weight'])
    # Without multi_precision float16 weights are the Python loop's (it warns, as MXNet).
    from cohort.module import native_fit
    plain = mx.optimizer.create(optimizer, **dict(params, multi_precision=False))
    assert native_fit._optimizer_settings(plain, half_weights=True) is None
    assert native_fit._optimizer_settings(plain, half_weights=False) is not None


def test_every_cpp_optimizer_setting_comes_from_a_python_optimizer():
    # The C++ optimizers' settings are declared once (OptimizerOptions::Table): each one is an
    # attribute of some Python optimizer, which fit hands to the C++ loop under that name.
    from cohort import _cohort
    from cohort.module import native_fit
    keys = _cohort.optimizer_option_keys()
    assert {'lr', 'wd', 'momentum', 'beta1', 'epsilon', 'bias_correction'} <= set(keys)
    attributes = set(native_fit._RENAMED)
    for name in ('sgd', 'nag', 'adam', 'rmsprop', 'adagrad', 'adadelta', 'adamax', 'signum',
                 'ftml', 'ftrl', 'lamb'):
        attributes |= set(vars(mx.optimizer.create(name)))
    assert set(keys) - attributes == set()
    # The settings fit hands over are read, not dropped: a centered RMSProp with its gamma2.
    settings = native_fit._optimizer_settings(
        mx.optimizer.create('rmsprop', centered=True, gamma2=0.5, clip_weights=2.0))
    assert settings[0] == 'rmsprop'
    assert settings[1]['centered'] == 1.0 and settings[1]['gamma2'] == 0.5
    assert settings[1]['clip_weights'] == 2.0


def test_fit_falls_back_to_the_python_loop_and_keeps_cpp_state_apart(tmp_path):
    class Halving(mx.optimizer.SGD):  # a Python optimizer: no C++ counterpart
        pass
    mod, _, _ = _fit_params(True, [mx.cpu()], Halving(learning_rate=0.1))
    assert mod._native_trainer is None
    # MXNet's 'device' store over host arrays sums on the host: the C++ loop's local store.
    mod, _, _ = _fit_params(True, [mx.cpu(0), mx.cpu(1)], 'sgd', {'learning_rate': 0.1},
                            kvstore='device')
    assert mod._native_trainer is not None
    mod, _, _ = _fit_params(True, [mx.cpu()], 'sgd', {'learning_rate': 0.1, 'momentum': 0.9})
    assert mod._native_trainer is not None
    # The C++ optimizer holds the momentum: saved from there; update() says how to go on.
    states = str(tmp_path / 'fit.states')
    mod.save_optimizer_states(states)
    assert os.path.getsize(states) > 0
    with pytest.raises(mx.MXNetError, match='init_optimizer\\(force_init=True\\)'):
        mod.update()
    mod.init_optimizer(optimizer='sgd', force_init=True)
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((10, 5))], [mx.nd.zeros((10,))]))
    mod.update()


def test_a_failing_callback_stops_the_cpp_loop_with_its_exception():
    def fails(param):
        if param.nbatch == 2:
            raise KeyError('from the callback')
    with pytest.raises(KeyError, match='from the callback'):
        _fit_params(True, [mx.cpu(0), mx.cpu(1)], 'sgd', {'learning_rate': 0.1},
                    batch_end_callback=fails)
