"""Base definitions shared by the package (MXNet 1.x's mxnet.base)."""
import numbers

import numpy as np

from ._cohort import MXNetError  # every error of Cohort's C++ core, with its message

__all__ = ['MXNetError', 'NotImplementedForSymbol', 'py_str', 'mx_real_t', 'string_types',
           'numeric_types', 'integer_types']

string_types = (str,)
numeric_types = (float, int, np.generic)
integer_types = (int, np.integer)
mx_real_t = np.float32


class NotImplementedForSymbol(MXNetError):
    """An NDArray operation asked of a Symbol (bool(symbol), for one)."""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__ if callable(function) else str(function)
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = 'Function {}'.format(self.function)
        if self.alias:
            msg += ' (namely operator "{}")'.format(self.alias)
        if self.args:
            msg += ' with arguments ({})'.format(', '.join(self.args))
        msg += ' is not implemented for Symbol and only available in NDArray.'
        return msg


def py_str(x):
    """Bytes from C as a Python str."""
    return x.decode('utf-8') if isinstance(x, bytes) else x


def is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, bool) or isinstance(x, np.generic)
