"""cohort.nd: MXNet 1.x's NDArray API on Cohort's arrays and kernels."""
import sys as _sys

from .ndarray import (NDArray, arange, array, concat, empty, full, invoke, load, ones, save,
                      waitall, zeros)
from . import register as _register

_internal = _register._internal
_sys.modules[__name__ + '._internal'] = _internal
_register.register(globals(), _internal)
