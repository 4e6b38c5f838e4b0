"""cohort.nd: MXNet 1.x's NDArray API on Cohort's arrays and kernels."""
import sys as _sys

from .ndarray import (CachedOp, NDArray, add, arange, array, concat, concatenate, divide, empty,
                      equal, eye, from_dlpack, from_numpy, full, greater, greater_equal, invoke,
                      lesser, lesser_equal, linspace, load, load_frombuffer, maximum, minimum,
                      moveaxis, multiply, not_equal, onehot_encode, ones, power, save, split_v2,
                      subtract, swapaxes, to_dlpack_for_read, to_dlpack_for_write, waitall, zeros)
from . import register as _register
from . import random
from . import contrib

_internal = _register._internal
_sys.modules[__name__ + '._internal'] = _internal
_register.register(globals(), _internal, contrib)
