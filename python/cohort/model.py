"""MXNet 1.x's mxnet.model checkpoint functions and BatchEndParam. Checkpoints go through the
trainer's checkpoint code (trainer/checkpoint.h), so PREFIX-symbol.json and PREFIX-NNNN.params
are written as cohort-train writes them: each file whole or not at all, the .params file last."""
import logging
from collections import namedtuple

from . import _cohort
from . import ndarray as nd
from . import symbol as sym
from .ndarray import NDArray

__all__ = ['BatchEndParam', 'save_checkpoint', 'load_params', 'load_checkpoint']

BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])


def _params_dict(params, what):
    if not isinstance(params, dict) or not all(
            isinstance(k, str) and isinstance(v, NDArray) for k, v in params.items()):
        raise TypeError('%s: expected a dict of str -> NDArray' % what)
    return {k: v._handle for k, v in params.items()}


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Writes PREFIX-symbol.json (when symbol is given) and PREFIX-EPOCH.params ('%04d')."""
    if not isinstance(prefix, str):
        raise TypeError('save_checkpoint: prefix must be a str')
    args, aux = _params_dict(arg_params, 'arg_params'), _params_dict(aux_params, 'aux_params')
    param_name = '%s-%04d.params' % (prefix, epoch)
    if symbol is None:
        saved = {'arg:' + k: v for k, v in arg_params.items()}
        saved.update({'aux:' + k: v for k, v in aux_params.items()})
        nd.save(param_name, saved)
    else:
        if not isinstance(symbol, sym.Symbol):
            raise TypeError('save_checkpoint: symbol must be a Symbol or None')
        _cohort.save_checkpoint(prefix, int(epoch), symbol._handle, args, aux)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """(arg_params, aux_params) of PREFIX-EPOCH.params."""
    args, aux = _cohort.load_arg_aux_params('%s-%04d.params' % (prefix, epoch))
    return ({k: NDArray(v) for k, v in args.items()}, {k: NDArray(v) for k, v in aux.items()})


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) of PREFIX-symbol.json and PREFIX-EPOCH.params."""
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return (symbol, arg_params, aux_params)
