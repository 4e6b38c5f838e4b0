"""MXNet 1.x's mxnet.util: the NumPy-shape semantics switch (np_shape, is_np_shape,
set_np_shape, use_np_shape) and the related decorators. Cohort's arrays are MXNet's legacy
NDArrays: with np_shape active, Symbol.tojson records `is_np_shape` as MXNet does, and a dimension
of 0 still means unknown in shape inference (MXNet's NumPy mode, where it means zero-size, is not
supported)."""
import difflib
import functools
import inspect
import threading

__all__ = ['np_shape', 'is_np_shape', 'set_np_shape', 'use_np_shape', 'np_array',
           'is_np_array', 'use_np_array', 'use_np', 'set_np', 'reset_np', 'get_gpu_count',
           'getenv', 'setenv']

_state = threading.local()


def is_np_shape():
    return getattr(_state, 'np_shape', False)


def set_np_shape(active):
    """Turns NumPy-shape semantics on or off for this thread; returns the previous state."""
    previous = is_np_shape()
    _state.np_shape = bool(active)
    return previous


def is_np_array():
    return getattr(_state, 'np_array', False)


def _set_np_array(active):
    previous = is_np_array()
    _state.np_array = bool(active)
    return previous


class _Scope:
    def __init__(self, setter, active):
        self._setter = setter
        self._active = active
        self._previous = None

    def __enter__(self):
        self._previous = self._setter(self._active)
        return self

    def __exit__(self, *exc):
        self._setter(self._previous)


def np_shape(active=True):
    """`with np_shape(True):` NumPy-shape semantics inside the block."""
    return _Scope(set_np_shape, active)


def np_array(active=True):
    return _Scope(_set_np_array, active)


def _decorate(scope_factory, func):
    if isinstance(func, type):
        for name, method in list(vars(func).items()):
            if callable(method) and not name.startswith('__'):
                setattr(func, name, _decorate(scope_factory, method))
        return func
    if not callable(func):
        raise TypeError('expected a function or a class, got %s' % type(func).__name__)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        with scope_factory():
            return func(*args, **kwargs)
    return wrapped


def use_np_shape(func):
    return _decorate(lambda: np_shape(True), func)


def use_np_array(func):
    return _decorate(lambda: np_array(True), func)


def use_np(func):
    return use_np_shape(use_np_array(func))


def set_np(shape=True, array=True):
    set_np_shape(shape)
    _set_np_array(array)


def reset_np():
    set_np(shape=False, array=False)


def get_gpu_count():
    from .context import num_gpus
    return num_gpus()


def getenv(name):
    import os
    return os.environ.get(name)


def setenv(name, value):
    import os
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def check_keywords(what, kwargs, accepted):
    """Raises TypeError for a keyword `what` does not take, naming the closest one it takes and
    all of them (a misspelt `num_epochs` to fit is not lost in a generic message)."""
    for key in kwargs:
        if key in accepted:
            continue
        close = difflib.get_close_matches(key, list(accepted), n=1)
        raise TypeError("%s got an unexpected keyword argument '%s'%s; it takes %s"
                        % (what, key, " (did you mean '%s'?)" % close[0] if close else '',
                           ', '.join(sorted(accepted))))


def keyword_names(function):
    """The keyword arguments `function` names (not *args, **kwargs or self)."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [name for name, p in inspect.signature(function).parameters.items()
            if p.kind in kinds and name != 'self']


def keywords_checked(function):
    """Decorator: a keyword argument the function does not take is refused by check_keywords
    before the call."""
    accepted = frozenset(keyword_names(function))
    what = function.__qualname__.replace('.__init__', '') + '()'

    @functools.wraps(function)
    def checked(*args, **kwargs):
        check_keywords(what, kwargs, accepted)
        return function(*args, **kwargs)
    return checked
