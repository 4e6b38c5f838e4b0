"""MXNet 1.x's mx.rnn: recurrent cells that unroll into symbols (RNN, LSTM, GRU, stacked,
bidirectional, with dropout or residual connections), the bucketing sentence iterator and the
RNN checkpoint helpers. The cells build graphs of FullyConnected, SliceChannel and Activation
nodes named as MXNet names them, so checkpoints travel between the two."""
from .rnn_cell import *  # noqa: F401,F403
from .io import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
