"""Random numbers (MXNet 1.x's mxnet.random): seed, and uniform and normal samples drawn by
Cohort's _random_uniform and _random_normal kernels (the same numbers on a CPU and a GPU)."""
from . import _cohort
from .ndarray.ndarray import _dtype_name, invoke

__all__ = ['seed', 'uniform', 'normal']


def seed(seed_state, ctx='all'):
    """Seeds the draws that follow (random arrays, Dropout called imperatively): the same seed
    gives the same numbers."""
    if not isinstance(seed_state, int) or isinstance(seed_state, bool):
        raise ValueError('seed_state must be int')
    _cohort.random_seed(seed_state & 0xFFFFFFFFFFFFFFFF)


def _shape(shape):
    if shape is None:
        return (1,)
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _like_out(out, shape, dtype, ctx):
    """Where out= is given, its shape, dtype and context unless named (as MXNet)."""
    if out is None:
        return shape, dtype, ctx
    return (out.shape if shape is None else shape, out.dtype if dtype is None else dtype,
            out.context if ctx is None else ctx)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples uniform on [low, high)."""
    shape, dtype, ctx = _like_out(out, shape, dtype, ctx)
    return invoke('_random_uniform', [], out=out, ctx=ctx, low=float(low), high=float(high),
                  shape=_shape(shape), dtype=_dtype_name(dtype) or 'float32')


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples of the normal distribution with mean loc and standard deviation scale."""
    shape, dtype, ctx = _like_out(out, shape, dtype, ctx)
    return invoke('_random_normal', [], out=out, ctx=ctx, loc=float(loc), scale=float(scale),
                  shape=_shape(shape), dtype=_dtype_name(dtype) or 'float32')
