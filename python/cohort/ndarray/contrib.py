"""cohort.nd.contrib: MXNet 1.x's mx.nd.contrib functions over registered operators (isinf,
isfinite, isnan, as MXNet writes them)."""
import numpy as np

__all__ = ['isinf', 'isfinite', 'isnan']


def isinf(data):
    """1 where the element is +inf or -inf, else 0."""
    return data.abs() == np.inf


def isfinite(data):
    """1 where the element is neither infinite nor NaN, else 0."""
    return (data.abs() != np.inf) * (data == data)


def isnan(data):
    """1 where the element is NaN, else 0."""
    return data != data
