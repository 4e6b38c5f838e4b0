"""Automatic names of symbols (MXNet 1.x's mxnet.name): `<op in lower case><n>`, counted per hint
within the current NameManager."""
import threading

__all__ = ['NameManager', 'Prefix']


class NameManager:
    """Names the symbols made without a name; `with NameManager():` starts the counts afresh."""
    _current = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """`name` when given, else the hint and its next count (fullyconnected0, ...)."""
        if name:
            return name
        if hint not in self._counter:
            self._counter[hint] = 0
        name = '%s%d' % (hint, self._counter[hint])
        self._counter[hint] += 1
        return name

    def __enter__(self):
        if not hasattr(NameManager._current, 'value'):
            NameManager._current.value = NameManager()
        self._old_manager = NameManager._current.value
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        assert self._old_manager
        NameManager._current.value = self._old_manager

    @classmethod
    def current(cls):
        if not hasattr(cls._current, 'value'):
            cls._current.value = NameManager()
        return cls._current.value


class Prefix(NameManager):
    """Prefixes every name made inside with `prefix`."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        name = super().get(name, hint)
        return self._prefix + name
