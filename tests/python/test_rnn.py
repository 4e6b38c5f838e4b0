"""mx.rnn: cells unroll into MXNet's graph (names, shapes, values against MXNet 1.9.1's,
scripts/make_mxnet_rnn_fixture.py), weights pack and unpack, BucketSentenceIter batches by
length, and an LSTM language model trains through BucketingModule."""
import json
import os

import numpy as np
import pytest

import cohort as mx


@pytest.fixture
def fixture(data_dir):
    with open(os.path.join(data_dir, 'mxnet', 'rnn_cells.json')) as f:
        return json.load(f)


def stack_graph():
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=4, prefix='lstm_l%d_' % i))
    stack.add(mx.rnn.GRUCell(num_hidden=3, prefix='gru_'))
    stack.add(mx.rnn.RNNCell(num_hidden=3, prefix='rnn_'))
    embed = mx.sym.Embedding(mx.sym.Variable('data'), input_dim=10, output_dim=5, name='embed')
    outputs, states = stack.unroll(3, inputs=embed, merge_outputs=True)
    return stack, embed, outputs, states


def test_cells_build_mxnets_graph_and_values(fixture):
    stack, embed, outputs, states = stack_graph()
    assert outputs.list_arguments() == fixture['arguments']
    assert [s.list_outputs()[0] for s in states] == fixture['state_outputs']
    assert list(outputs.infer_shape(data=(2, 3))[1][0]) == fixture['output_shape']
    # The begin states are zeros of shape (0, hidden): binding gives them the batch.
    ex = outputs.simple_bind(mx.cpu(), data=(2, 3))
    rs = np.random.RandomState(0)
    for name, arr in sorted(ex.arg_dict.items()):
        arr[:] = rs.randint(0, 10, size=arr.shape) if name == 'data' else \
            rs.uniform(-0.5, 0.5, size=arr.shape)
    ex.forward()
    np.testing.assert_allclose(ex.outputs[0].asnumpy().ravel(), fixture['output'], rtol=1e-5,
                               atol=1e-6)
    bi = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(2, prefix='l_'), mx.rnn.GRUCell(2, prefix='r_'))
    bi_out, _ = bi.unroll(3, inputs=embed, merge_outputs=True)
    assert bi_out.list_arguments() == fixture['bidirectional_arguments']
    assert list(bi_out.infer_shape(data=(2, 3))[1][0]) == fixture['bidirectional_shape']


def test_weights_unpack_per_gate_and_pack_back(fixture):
    stack, _, outputs, _ = stack_graph()
    shapes = outputs.infer_shape(data=(2, 3))[0]
    rs = np.random.RandomState(1)
    args = {n: mx.nd.array(rs.uniform(size=s)) for n, s in zip(outputs.list_arguments(), shapes)}
    unpacked = stack.unpack_weights(args)
    assert sorted(unpacked) == fixture['unpacked']
    # The forget gate's rows of an LSTM's i2h weight are the second quarter.
    np.testing.assert_array_equal(unpacked['lstm_l0_i2h_f_weight'].asnumpy(),
                                  args['lstm_l0_i2h_weight'].asnumpy()[4:8])
    packed = stack.pack_weights(unpacked)
    assert sorted(packed) == sorted(args)
    for name, value in args.items():
        np.testing.assert_array_equal(packed[name].asnumpy(), value.asnumpy(), err_msg=name)


def test_begin_states_as_variables_and_modifier_cells():
    cell = mx.rnn.LSTMCell(3, prefix='l_')
    states = cell.begin_state(func=mx.sym.Variable)
    assert [s.name for s in states] == ['l_begin_state_0', 'l_begin_state_1']
    assert states[0].attr('__layout__') == 'NC'
    out, _ = cell.unroll(2, inputs=mx.sym.Variable('x'), begin_state=states, merge_outputs=True)
    arg_shapes, out_shapes, _ = out.infer_shape(x=(4, 2, 5), l_begin_state_0=(4, 3),
                                                l_begin_state_1=(4, 3))
    assert out_shapes == [(4, 2, 3)]
    residual = mx.rnn.ResidualCell(mx.rnn.GRUCell(5, prefix='g_'))
    out, _ = residual.unroll(2, inputs=mx.sym.Variable('x'), merge_outputs=True)
    assert out.infer_shape(x=(4, 2, 5))[1] == [(4, 2, 5)]
    with pytest.raises(mx.MXNetError, match='modifier'):
        residual.base_cell.begin_state()
    dropped, _ = mx.rnn.DropoutCell(0.5).unroll(2, inputs=mx.sym.Variable('x'),
                                                 merge_outputs=True)
    assert dropped.infer_shape(x=(4, 2, 5))[1] == [(4, 2, 5)]
    with pytest.raises(mx.MXNetError, match='stack LSTMCell cells'):
        mx.rnn.FusedRNNCell(8, num_layers=2, mode='lstm')


def test_encode_sentences_and_bucket_sentence_iter(fixture, capsys):
    sentences, vocab = mx.rnn.encode_sentences([['a', 'b'], ['b', 'c', 'a']], invalid_label=0,
                                               start_label=0)
    assert sentences == fixture['encoded'] and vocab == fixture['vocab']
    with pytest.raises(KeyError, match="'d'"):
        mx.rnn.encode_sentences([['d']], vocab=vocab)
    data = [[1, 2, 3], [4, 5], [1, 2, 3, 4], [5, 6, 7, 8, 9], [3, 3], list(range(1, 12))]
    it = mx.rnn.BucketSentenceIter(data, batch_size=2, buckets=[3, 5], invalid_label=0)
    assert 'discarded 1 sentences' in capsys.readouterr().out
    assert it.default_bucket_key == 5 and it.provide_data[0].shape == (2, 5)
    seen = {}
    for batch in it:
        d, l = batch.data[0].asnumpy(), batch.label[0].asnumpy()
        assert d.shape == (2, batch.bucket_key)
        np.testing.assert_array_equal(l[:, :-1], d[:, 1:])  # the next word
        assert (l[:, -1] == 0).all()
        seen[batch.bucket_key] = sorted(tuple(row) for row in d.astype(int).tolist())
    # Bucket 3 holds three sentences: one batch of two of them (shuffled); bucket 5 two.
    assert sorted(seen) == [3, 5] and seen[5] == [(1, 2, 3, 4, 0), (5, 6, 7, 8, 9)]
    assert set(seen[3]) < {(1, 2, 3), (4, 5, 0), (3, 3, 0)} and len(seen[3]) == 2
    tn = mx.rnn.BucketSentenceIter(data, batch_size=2, buckets=[3, 5], layout='TN')
    assert tn.provide_data[0].shape == (5, 2) and next(iter(tn)).data[0].shape[1] == 2


def test_lstm_language_model_trains_through_bucketing_module(tmp_path):
    # Sequences counting 1..8 cyclically from random starts: an LSTM learns the next number.
    rs = np.random.RandomState(0)
    sentences = []
    for _ in range(160):
        start, length = rs.randint(1, 9), rs.randint(4, 11)
        sentences.append([(start + i - 1) % 8 + 1 for i in range(length)])
    mx.random.seed(1)
    it = mx.rnn.BucketSentenceIter(sentences, batch_size=16, buckets=[5, 10], invalid_label=0)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(num_hidden=16, prefix='lstm_l0_'))

    def sym_gen(seq_len):
        embed = mx.sym.Embedding(mx.sym.Variable('data'), input_dim=9, output_dim=8,
                                 name='embed')
        stack.reset()
        outputs, _ = stack.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.FullyConnected(mx.sym.Reshape(outputs, shape=(-1, 16)), num_hidden=9,
                                     name='pred')
        label = mx.sym.Reshape(mx.sym.Variable('softmax_label'), shape=(-1,))
        return mx.sym.SoftmaxOutput(pred, label, name='softmax'), ('data',), ('softmax_label',)

    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=it.default_bucket_key)
    metric = mx.metric.Perplexity(0)
    perplexities = []
    mod.fit(it, eval_metric=metric, num_epoch=8, optimizer='adam',
            optimizer_params={'learning_rate': 0.02}, initializer=mx.init.Xavier(),
            epoch_end_callback=lambda *a: perplexities.append(metric.get()[1]),
            batch_end_callback=None)
    assert perplexities[-1] < 1.5 < perplexities[0], perplexities  # chance is 8
    prefix = str(tmp_path / 'lm')
    mx.rnn.save_rnn_checkpoint(stack, prefix, 1, mod.symbol, *mod.get_params())
    saved = mx.nd.load(prefix + '-0001.params')
    assert 'arg:lstm_l0_i2h_f_weight' in saved and 'arg:lstm_l0_i2h_weight' not in saved
    _, args, _ = mx.rnn.load_rnn_checkpoint(stack, prefix, 1)
    np.testing.assert_array_equal(args['lstm_l0_i2h_weight'].asnumpy(),
                                  mod.get_params()[0]['lstm_l0_i2h_weight'].asnumpy())


def test_module_state_inputs_carry_between_batches():
    # Note [State inputs]: state_names are inputs the caller sets; each device takes its rows,
    # and the outputs equal one executor's given the same states.
    cell = mx.rnn.SequentialRNNCell()
    for i in range(2):
        cell.add(mx.rnn.LSTMCell(num_hidden=3, prefix='l%d_' % i))
    begin = cell.begin_state(func=mx.sym.Variable)
    _, states = cell.unroll(3, begin_state=begin, inputs=mx.sym.Variable('data'))
    net = mx.sym.Group(states)
    names = [s.name for s in begin]
    mod = mx.mod.Module(net, context=[mx.cpu(0), mx.cpu(1)], label_names=None, state_names=names)
    mod.bind(data_shapes=[('data', (5, 3, 2))], label_shapes=None, for_training=False)
    mod.init_params(initializer=mx.init.Uniform(0.5))
    x = mx.nd.array(np.random.RandomState(2).uniform(-1, 1, (5, 3, 2)))
    batch = mx.io.DataBatch(data=[x], label=[])
    args, _ = mod.get_params()
    ex = net.simple_bind(mx.cpu(), data=(5, 3, 2), **{n: (5, 3) for n in names})

    def expected(state_values):
        feed = dict(args, data=x, **dict(zip(names, state_values)))
        for name, arr in ex.arg_dict.items():
            arr[:] = feed[name]
        ex.forward()
        return [o.asnumpy() for o in ex.outputs]

    mod.set_states(value=0.5)
    assert all((s.asnumpy() == 0.5).all() for s in mod.get_states())
    mod.forward(batch)
    first = [o.asnumpy() for o in mod.get_outputs()]
    for got, want in zip(first, expected([mx.nd.full((5, 3), 0.5)] * 4)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # The outputs, per device, become the next batch's states.
    mod.set_states(states=mod.get_outputs(merge_multi_context=False))
    np.testing.assert_array_equal(mod.get_states()[1].asnumpy(), first[1])
    assert [p.shape for p in mod.get_states(merge_multi_context=False)[0]] == [(2, 3), (3, 3)]
    mod.forward(batch)
    for got, want in zip(mod.get_outputs(), expected([mx.nd.array(f) for f in first])):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match='2 states given for 4'):
        mod.set_states(states=first[:2])
