"""cohort.sym: MXNet 1.x's Symbol API on Cohort's graphs."""
import sys as _sys

from .symbol import (Group, Symbol, Variable, full, load, load_json, maximum, minimum, ones,
                     split_v2, var, zeros)
from . import register as _register

_internal = _register._internal
_sys.modules[__name__ + '._internal'] = _internal
contrib = _register.contrib
_sys.modules[__name__ + '.contrib'] = contrib
_register.register(globals(), _internal, contrib)
