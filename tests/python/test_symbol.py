"""cohort.sym: graphs built in Python equal MXNet 1.9.1's (its JSON fixtures), MXNet's naming,
listing, shape inference, attributes, JSON and pickling round trips."""
import copy
import json
import os
import inspect
import pickle

import numpy as np
import pytest

import cohort as mx


def mlp():  # scripts/make_mxnet_symbol_fixtures.py's networks, the same code
    x = mx.sym.Flatten(mx.sym.var("data"), name="flatten")
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=128, name="fc1"), act_type="relu",
                          name="relu1")
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=64, name="fc2"), act_type="relu",
                          name="relu2")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def lenet():
    x = mx.sym.Convolution(mx.sym.var("data"), kernel=(5, 5), num_filter=20, name="conv1")
    x = mx.sym.Activation(x, act_type="tanh", name="tanh1")
    x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=50, name="conv2")
    x = mx.sym.Activation(x, act_type="tanh", name="tanh2")
    x = mx.sym.Pooling(x, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool2")
    x = mx.sym.Flatten(x, name="flatten")
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=500, name="fc1"), act_type="tanh",
                          name="tanh3")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def graph(json_text):
    """The graph of a symbol JSON: each node's op, name, inputs, and an operator's attributes."""
    nodes = json.loads(json_text)['nodes']
    return [(n['op'], n['name'], n['inputs'], n.get('attrs', {}) if n['op'] != 'null' else None)
            for n in nodes]


@pytest.mark.parametrize('name,build', [('mlp', mlp), ('lenet', lenet)])
def test_python_networks_equal_mxnets_json(data_dir, name, build):
    with open(os.path.join(data_dir, 'symbols', name + '-symbol.json')) as f:
        expected = f.read()
    net = build()
    assert graph(net.tojson()) == graph(expected)
    loaded = mx.sym.load(os.path.join(data_dir, 'symbols', name + '-symbol.json'))
    assert loaded.list_arguments() == net.list_arguments()
    assert loaded.infer_shape(data=(2, 1, 28, 28)) == net.infer_shape(data=(2, 1, 28, 28))


def test_listing_and_shape_inference():
    net = lenet()
    assert net.list_arguments() == [
        'data', 'conv1_weight', 'conv1_bias', 'conv2_weight', 'conv2_bias', 'fc1_weight',
        'fc1_bias', 'fc2_weight', 'fc2_bias', 'softmax_label']
    assert net.list_outputs() == ['softmax_output']
    args, outs, aux = net.infer_shape(data=(2, 1, 28, 28))
    assert args[1] == (20, 1, 5, 5) and args[5] == (500, 800) and outs == [(2, 10)] and aux == []
    assert net.infer_shape() == (None, None, None)
    partial = net.infer_shape_partial()
    assert partial[0][0] == () and partial[0][-1] == ()
    with pytest.raises(mx.MXNetError):
        net.infer_shape(data=(2, 1, 28, 28), conv1_weight=(7, 7, 7, 7))
    bn = mx.sym.BatchNorm(mx.sym.var('x'), name='bn')
    assert bn.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert bn.list_inputs() == ['x', 'bn_gamma', 'bn_beta', 'bn_moving_mean', 'bn_moving_var']


def test_automatic_names_follow_the_name_manager():
    x = mx.sym.var('x')
    with mx.name.NameManager():
        a = mx.sym.FullyConnected(x, num_hidden=3)
        b = mx.sym.FullyConnected(a, num_hidden=3)
        c = b + 1
        d = a + b
    assert (a.name, b.name, c.name, d.name) == (
        'fullyconnected0', 'fullyconnected1', '_plusscalar0', '_plus0')
    assert a.list_arguments() == ['x', 'fullyconnected0_weight', 'fullyconnected0_bias']
    with mx.name.Prefix('net_'):
        assert mx.sym.relu(x).name == 'net_relu0'


def test_indexing_groups_internals_and_children():
    x = mx.sym.var('x')
    fc = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    act = mx.sym.relu(fc, name='act')
    g = mx.sym.Group([fc, act])
    assert len(g) == 2 and g.list_outputs() == ['fc_output', 'act_output']
    assert g[1].name == 'act' and g['fc_output'].name == 'fc'
    internals = act.get_internals()
    assert 'fc_output' in internals.list_outputs()
    assert internals['fc_output'].list_arguments() == ['x', 'fc_weight', 'fc_bias']
    assert act.get_children().list_outputs() == ['fc_output']
    assert x.get_children() is None
    with pytest.raises(ValueError):
        g['nothing_output']
    with pytest.raises(mx.base.NotImplementedForSymbol):
        bool(x)


def test_attributes():
    with mx.AttrScope(ctx_group='dev1'):
        v = mx.sym.Variable('w', lr_mult=2, shape=(3, 4), dtype='float16')
        fc = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=3, name='fc')
    assert v.attr('ctx_group') == 'dev1' and v.attr('__lr_mult__') == '2'
    assert v.attr_dict()['w']['__shape__'] == '(3, 4)'
    assert v.attr_dict()['w']['__dtype__'] == '2'  # MXNet's type flag of float16
    assert fc.attr('num_hidden') == '3' and fc.attr('ctx_group') == 'dev1'
    assert json.loads(fc.tojson())['nodes'][-1]['attrs']['__ctx_group__'] == 'dev1'
    with pytest.raises(ValueError):
        mx.sym.Variable('w', lr=2)


def test_json_copies_and_pickling_round_trip():
    net = mlp()
    again = mx.sym.load_json(net.tojson())
    assert again.tojson() == net.tojson()
    assert copy.deepcopy(net).tojson() == net.tojson()
    assert copy.copy(net).tojson() == net.tojson()
    assert pickle.loads(pickle.dumps(net)).tojson() == net.tojson()


def test_bad_arguments():
    x = mx.sym.var('x')
    with pytest.raises(TypeError):  # MXNet's order: data, weight, bias, num_hidden
        mx.sym.FullyConnected(x, 3)
    with pytest.raises(TypeError):
        mx.sym.clip(x, 0, 1, 2)
    with pytest.raises(mx.MXNetError):
        mx.sym.FullyConnected(x, num_hidden=3, frobnicate=1)
    with pytest.raises(mx.MXNetError):
        mx.sym.FullyConnected(x, no_such_input=x, num_hidden=3)
    with pytest.raises(TypeError):
        mx.sym.Group([x, 1])
    with pytest.raises(mx.MXNetError):
        mx.sym.load_json('{"nodes": 3}')
    with pytest.raises(TypeError):
        mx.sym.Variable(3)
    with pytest.raises(TypeError):
        x.infer_shape(x=3)
    with pytest.raises(mx.MXNetError):
        x.infer_shape(y=(2,))


def test_parameters_by_position_in_mxnets_order():
    x = mx.sym.var('x')
    assert mx.sym.Dropout(x, 0.3).attr('p') == '0.3'
    c = mx.sym.clip(x, -1, 2, name='c')
    assert (c.attr('a_min'), c.attr('a_max')) == ('-1', '2')
    np.testing.assert_array_equal(mx.nd.one_hot(mx.nd.array([2, 0]), 3).asnumpy(),
                                  [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(mx.nd.array([[-2, 5]]).clip(0, 1).asnumpy(), [[0, 1]])
    with pytest.raises(TypeError):
        mx.sym.Dropout(x, 0.3, p=0.4)  # by position and by keyword
    params = inspect.signature(mx.sym.Convolution).parameters
    assert list(params)[:5] == ['data', 'weight', 'bias', 'kernel', 'stride']
    assert 'num_filter : int (non-negative), required' in mx.sym.Convolution.__doc__


def test_constructors_take_their_signatures_from_the_cpp_declarations():
    from cohort import _cohort
    for name in _cohort.op_names():
        spec = _cohort.op_spec(name)
        assert spec['doc'] and spec['inputs'] is not None, name
    # What Cohort's Pooling takes, not MXNet's: no Lp pooling (p_value), no 'same' convention.
    spec = _cohort.op_spec('Pooling')
    assert 'p_value' not in [p['name'] for p in spec['params']]
    pool_type = [p for p in spec['params'] if p['name'] == 'pool_type'][0]
    assert pool_type['type'] == "{'avg', 'max', 'sum'}" and pool_type['default'] == 'max'
    assert 'p_value' not in inspect.signature(mx.sym.Pooling).parameters
    assert "pool_type : {'avg', 'max', 'sum'}, optional, default=max" in mx.nd.Pooling.__doc__
    assert inspect.signature(mx.nd.Dropout).parameters['p'].default == 0.5
    # An alias has its operator's declaration.
    assert _cohort.op_spec('flatten') == _cohort.op_spec('Flatten')
    with pytest.raises(mx.MXNetError, match="unknown operator 'Poolnig'"):
        _cohort.op_spec('Poolnig')


def test_composition_replaces_inputs():
    head = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='head')
    body = mx.sym.relu(mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=5, name='body'))
    net = head(data=body)
    assert net.list_arguments() == ['x', 'body_weight', 'body_bias', 'head_weight', 'head_bias']
    assert net.infer_shape(x=(4, 7))[1] == [(4, 3)]
    assert head.list_arguments() == ['data', 'head_weight', 'head_bias']
    assert head(body).list_arguments() == net.list_arguments()  # by argument order
    with pytest.raises(TypeError):
        head(body, data=body)
    with pytest.raises(mx.MXNetError):
        head(nothing=body)


def test_lr_mult_and_wd_mult_are_attributes_of_the_node_and_its_parameters():
    s = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=3, lr_mult=2, wd_mult=0, name='fc')
    attrs = s.attr_dict()
    for name in ('fc', 'fc_weight', 'fc_bias'):
        assert attrs[name]['__lr_mult__'] == '2' and attrs[name]['lr_mult'] == '2'
        assert attrs[name]['__wd_mult__'] == '0'
    assert 'x' not in attrs  # given, not made by the node
    with mx.AttrScope(ctx_group='dev1'):
        t = mx.sym.FullyConnected(mx.sym.var('y'), num_hidden=3, name='fc2')
    assert t.attr_dict()['fc2_weight']['__ctx_group__'] == 'dev1'


def test_zeros_ones_full_symbols():
    z = mx.sym.zeros((2, 3))
    assert z.infer_shape()[1] == [(2, 3)] and z.infer_type()[1] == [np.float32]
    assert z.eval(mx.cpu())[0].asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]
    o = mx.sym.ones((4,), dtype='int32')
    out = o.eval(mx.cpu())[0]
    assert out.dtype == np.int32 and out.asnumpy().tolist() == [1, 1, 1, 1]
    f = mx.sym.full((2, 2), 2.5) + mx.sym.var('x')
    np.testing.assert_array_equal(f.eval(mx.cpu(), x=mx.nd.ones((2, 2)))[0].asnumpy(),
                                  np.full((2, 2), 3.5))
    # A dimension of 0 is unknown until the graph gives it (an RNN cell's begin state), as in
    # MXNet 1.x; alone it cannot be bound, and a negative one is refused.
    partial = mx.sym.zeros((0, 3)) + mx.sym.var('x')
    assert partial.infer_shape(x=(2, 3))[1] == [(2, 3)]
    assert partial.eval(mx.cpu(), x=mx.nd.ones((2, 3)))[0].asnumpy().tolist() == [[1] * 3] * 2
    with pytest.raises(mx.MXNetError, match="cannot infer output 0's shape"):
        mx.sym.zeros((0, 3)).eval(mx.cpu())
    with pytest.raises(mx.MXNetError, match='dimensions of 0 .unknown. or more'):
        mx.sym.zeros((-2, 3))


def test_split_v2_symbol_and_pick_fluent():
    x = mx.sym.var('x', shape=(6, 4))
    parts = x.split_v2((2, 5), axis=0)
    outs = parts.eval(mx.cpu(), x=mx.nd.array(np.arange(24).reshape(6, 4)))
    assert [o.shape for o in outs] == [(2, 4), (3, 4), (1, 4)]
    assert outs[2].asnumpy().tolist() == [[20, 21, 22, 23]]
    with pytest.raises(mx.MXNetError, match='must be known'):
        mx.sym.split_v2(mx.sym.var('y'), 2)
    a = mx.nd.array([[1, 2], [3, 4]])
    assert a.pick(mx.nd.array([1, 0])).asnumpy().tolist() == [2, 3]


def test_reshape_and_astype_fluent():
    x = mx.sym.var('x')
    r = x.reshape(shape=(-1, 2)).astype('float64')
    out = r.eval(mx.cpu(), x=mx.nd.array(np.arange(6)))[0]
    assert out.shape == (3, 2) and out.dtype == np.float64
    assert out.asnumpy().tolist() == [[0, 1], [2, 3], [4, 5]]


def test_mxnet_0_8_symbol_json_is_upgraded_as_mxnet_does(data_dir):
    # tests/data/mxnet_legacy/save_000800.json: MXNet's own 0.8-format test file (its
    # test_load_000800), "param"/"attr" nodes, BatchNorm without its auxiliary inputs.
    with mx.AttrScope(ctx_group='stage1'):
        data = mx.sym.Variable('data', lr_mult=0.2)
        weight = mx.sym.Variable(name='fc1_weight', lr_mult=1.2)
        fc1 = mx.sym.FullyConnected(data=data, weight=weight, name='fc1', num_hidden=128,
                                    wd_mult=0.3)
        act1 = mx.sym.Activation(data=fc1, name='relu1', act_type='relu')
    with mx.AttrScope(ctx_group='stage2'):
        fc2 = mx.sym.FullyConnected(data=act1, name='fc2', num_hidden=64, lr_mult=0.01)
        act2 = mx.sym.Activation(data=fc2, name='relu2', act_type='relu')
        fc3 = mx.sym.FullyConnected(data=act2, name='fc3', num_hidden=10)
        fc3 = mx.sym.BatchNorm(fc3, name='batchnorm0')
        sym1 = mx.sym.SoftmaxOutput(data=fc3, name='softmax')
    sym2 = mx.sym.load(os.path.join(data_dir, 'mxnet_legacy', 'save_000800.json'))
    assert sym2.list_arguments() == sym1.list_arguments()
    assert sym2.list_auxiliary_states() == sym1.list_auxiliary_states()
    attr1, attr2 = sym1.attr_dict(), sym2.attr_dict()
    for name, attrs in attr1.items():
        for key, value in attrs.items():
            if key.startswith('__') and key.endswith('__'):
                assert attr2[name][key] == value, (name, key, attr2.get(name))
    assert attr2['fc1_weight']['__lr_mult__'] == '1.2'
    group2ctx = {'stage1': mx.cpu(1), 'stage2': mx.cpu(2)}
    mx.test_utils.check_consistency(
        [sym1, sym2], [{'ctx': mx.cpu(0), 'group2ctx': group2ctx, 'data': (1, 200)}] * 2,
        arg_params={'softmax_label': np.array([3.0])})
    exe = sym1.simple_bind(mx.cpu(), group2ctx=group2ctx, data=(1, 200))
    assert exe.arg_dict['fc1_weight'].context == mx.cpu(1)
    assert exe.arg_dict['fc3_weight'].context == mx.cpu(2)
    assert exe.aux_dict['batchnorm0_moving_mean'].context == mx.cpu(2)
    assert exe.outputs[0].context == mx.cpu(2)
    with pytest.raises(mx.MXNetError, match="ctx_group 'stage2', which group2ctx does not place"):
        sym1.simple_bind(mx.cpu(), group2ctx={'stage1': mx.cpu(1)}, data=(1, 200))


def test_infer_shape_partial_with_unknown_dims():
    # MXNet 1.9.1's answers (its test_symbol_infer_shape): unknown dims are 0, unknown shapes ().
    data = mx.sym.Variable('data', shape=(1, 0, 0, 0))
    weight = mx.sym.Variable('weight')
    conv = mx.sym.Convolution(data=mx.sym.cast(data, dtype='float16'),
                              weight=mx.sym.cast(weight, dtype='float16'), pad=(3, 3),
                              num_filter=64, stride=(2, 2), no_bias=True, kernel=(7, 7))
    assert conv.infer_shape_partial() == ([(1, 0, 0, 0), (64, 0, 7, 7)], [(1, 64, 0, 0)], [])
    assert conv.infer_shape() == (None, None, None)
    d = mx.sym.Variable('d', shape=(2, 0))
    assert (d + mx.sym.Variable('e', shape=(0, 5))).infer_shape_partial() == (
        [(2, 5), (2, 5)], [(2, 5)], [])
    assert mx.sym.BatchNorm(mx.sym.Variable('b', shape=(0, 3, 4, 4))).infer_shape_partial() == (
        [(0, 3, 4, 4), (3,), (3,)], [(0, 3, 4, 4)], [(3,), (3,)])
    x2h = mx.sym.FullyConnected(data=mx.sym.var('x'), name='x2h', num_hidden=8)
    h2h = mx.sym.FullyConnected(data=mx.sym.var('prev'), name='h2h', num_hidden=8)
    arg, _, _ = (x2h + h2h).infer_shape_partial(x=(10, 4))
    assert arg == [(10, 4), (8, 4), (8,), (), (), ()]
