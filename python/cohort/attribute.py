"""Attributes given to every symbol made inside `with AttrScope(...)` (MXNet 1.x's
mxnet.attribute), such as ctx_group."""
import threading

__all__ = ['AttrScope']


class AttrScope:
    """`with AttrScope(ctx_group='dev1'):` adds `__ctx_group__='dev1'` to the symbols made
    inside; scopes nest, the inner one winning on a key both set."""
    _current = threading.local()

    def __init__(self, **kwargs):
        self._old_scope = None
        for value in kwargs.values():
            if not isinstance(value, str):
                raise ValueError('Attributes need to be string')
        self._attr = kwargs

    def get(self, attr):
        """The scope's attributes (as __key__) merged under `attr`, which wins."""
        if self._attr:
            ret = {'__%s__' % k: v for k, v in self._attr.items()}
            if attr:
                ret.update(attr)
            return ret
        return attr if attr else {}

    def __enter__(self):
        if not hasattr(AttrScope._current, 'value'):
            AttrScope._current.value = AttrScope()
        self._old_scope = AttrScope._current.value
        attr = AttrScope._current.value._attr.copy()
        attr.update(self._attr)
        self._attr = attr
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        assert self._old_scope
        AttrScope._current.value = self._old_scope

    @classmethod
    def current(cls):
        if not hasattr(cls._current, 'value'):
            cls._current.value = AttrScope()
        return cls._current.value
