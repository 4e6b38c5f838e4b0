"""Checkpoints of recurrent models (MXNet 1.x's mx.rnn.rnn): the cells' weights saved unpacked
per gate, as MXNet writes them, and packed again on load."""
from .. import model
from .rnn_cell import BaseRNNCell

__all__ = ['save_rnn_checkpoint', 'load_rnn_checkpoint', 'do_rnn_checkpoint']


def _cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """model.save_checkpoint with each cell's weights unpacked."""
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    model.save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """(symbol, arg_params, aux_params) of model.load_checkpoint, the cells' weights packed."""
    sym, arg, aux = model.load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback that saves an RNN checkpoint every `period` epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
