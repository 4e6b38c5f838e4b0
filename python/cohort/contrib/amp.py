"""Mixed precision, MXNet 1.x's mx.contrib.amp over Cohort's graph pass (Note [AMP pass],
symbol/amp_convert.h): convert_symbol inserts amp_cast nodes so that the target ops
(FullyConnected, Convolution, dot, batch_dot: list_fp16_ops) compute in the target type
with their products summed in float32, and everything else stays float32; parameters stay
float32 (their low-precision copies are made in the graph, so the optimizer keeps float32
master weights)."""
from .. import _cohort
from ..base import MXNetError
from ..symbol import Symbol

__all__ = ['convert_symbol', 'convert_model', 'list_fp16_ops', 'list_fp32_ops']

_TARGETS = ('float16', 'bfloat16')


def _check_target(target_dtype):
    if target_dtype not in _TARGETS:
        raise ValueError("target_dtype must be 'float16' or 'bfloat16', got %r" % (target_dtype,))


def list_fp16_ops(target_dtype='float16'):
    """The ops convert_symbol runs in the target type by default."""
    _check_target(target_dtype)
    return sorted(_cohort.amp_default_ops()[0])


def list_fp32_ops(target_dtype='float16'):
    """The ops kept in float32 whatever their kernels take."""
    _check_target(target_dtype)
    return sorted(_cohort.amp_default_ops()[1])


def convert_symbol(sym, target_dtype='float16', target_dtype_ops=None, fp32_ops=None,
                   conditional_fp32_ops=None, excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """A copy of `sym` with amp_cast nodes (MXNet's amp.convert_symbol). target_dtype_ops and
    fp32_ops replace the default lists; excluded_sym_names keeps those nodes in float32.
    conditional_fp32_ops (ops kept in float32 for some attribute values) is not supported;
    data_names and cast_optional_params change nothing here (inputs and parameters stay
    float32, cast inside the graph)."""
    _check_target(target_dtype)
    if not isinstance(sym, Symbol):
        raise TypeError('convert_symbol: sym must be a Symbol, got %s' % type(sym).__name__)
    if conditional_fp32_ops:
        raise MXNetError('convert_symbol: conditional_fp32_ops is not supported by Cohort')
    for name, ops in (('target_dtype_ops', target_dtype_ops), ('fp32_ops', fp32_ops),
                      ('excluded_sym_names', excluded_sym_names)):
        if ops is not None and not isinstance(ops, (list, tuple, set)):
            raise TypeError('convert_symbol: %s must be a list of names' % name)
    handle = _cohort.amp_convert_symbol(sym.handle, target_dtype, set(target_dtype_ops or ()),
                                        set(fp32_ops or ()), set(excluded_sym_names or ()))
    return Symbol(handle)


def convert_model(sym, arg_params, aux_params, target_dtype='float16', target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """(converted symbol, arg_params, aux_params), as MXNet's amp.convert_model: the parameters
    stay float32 (the graph casts them)."""
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                               conditional_fp32_ops, excluded_sym_names, None,
                               cast_optional_params)
    return converted, dict(arg_params), dict(aux_params)
