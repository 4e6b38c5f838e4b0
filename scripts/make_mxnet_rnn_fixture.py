"""MXNet 1.9.1's mx.rnn cells on one graph (tests/python/test_rnn.py's fixture): a stack of two
LSTMCells, a GRUCell and an RNNCell unrolled over an Embedding, and a BidirectionalCell; their
argument and output names, shapes, the stack's forward values from seeded weights, the unpacked
weight names and encode_sentences' result. Writes tests/data/mxnet/rnn_cells.json.
    /work/mxvenv/bin/python scripts/make_mxnet_rnn_fixture.py"""
import json
import os

import mxnet as mx
import numpy as np


def stack_graph():
    stack = mx.rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(mx.rnn.LSTMCell(num_hidden=4, prefix='lstm_l%d_' % i))
    stack.add(mx.rnn.GRUCell(num_hidden=3, prefix='gru_'))
    stack.add(mx.rnn.RNNCell(num_hidden=3, prefix='rnn_'))
    embed = mx.sym.Embedding(mx.sym.Variable('data'), input_dim=10, output_dim=5, name='embed')
    outputs, states = stack.unroll(3, inputs=embed, merge_outputs=True)
    return stack, embed, outputs, states


def main():
    stack, embed, outputs, states = stack_graph()
    ex = outputs.simple_bind(mx.cpu(), data=(2, 3))
    rs = np.random.RandomState(0)
    for name, arr in sorted(ex.arg_dict.items()):
        arr[:] = rs.randint(0, 10, size=arr.shape) if name == 'data' else \
            rs.uniform(-0.5, 0.5, size=arr.shape)
    ex.forward()
    bi = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(2, prefix='l_'), mx.rnn.GRUCell(2, prefix='r_'))
    bi_out, _ = bi.unroll(3, inputs=embed, merge_outputs=True)
    shapes = outputs.infer_shape(data=(2, 3))[0]
    unpacked = stack.unpack_weights({n: mx.nd.zeros(s) for n, s in
                                     zip(outputs.list_arguments(), shapes)})
    sentences, vocab = mx.rnn.encode_sentences([['a', 'b'], ['b', 'c', 'a']], invalid_label=0,
                                               start_label=0)
    fixture = {
        'arguments': outputs.list_arguments(),
        'state_outputs': [s.list_outputs()[0] for s in states],
        'output_shape': list(outputs.infer_shape(data=(2, 3))[1][0]),
        'output': ex.outputs[0].asnumpy().ravel().tolist(),
        'bidirectional_arguments': bi_out.list_arguments(),
        'bidirectional_shape': list(bi_out.infer_shape(data=(2, 3))[1][0]),
        'unpacked': sorted(unpacked),
        'encoded': sentences,
        'vocab': vocab,
    }
    path = os.path.join(os.path.dirname(__file__), '..', 'tests', 'data', 'mxnet',
                        'rnn_cells.json')
    with open(path, 'w') as f:
        json.dump(fixture, f, indent=1)


if __name__ == '__main__':
    main()
