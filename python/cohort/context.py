"""Devices (MXNet 1.x's mxnet.context): cpu(i), gpu(i), cpu_pinned(i), and the default context
that `with ctx:` sets."""
import threading

__all__ = ['Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus']


class Context:
    """A device: Context('cpu', 0), Context('gpu', 1), or a copy of another Context. As a
    context manager it is the default device of the arrays made inside."""
    _default_ctx = threading.local()
    devtype2str = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
    devstr2type = {'cpu': 1, 'gpu': 2, 'cpu_pinned': 3, 'cpu_shared': 5}

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            self.device_typeid = device_type.device_typeid
            self.device_id = device_type.device_id
        else:
            if device_type not in Context.devstr2type:
                raise ValueError("device_type: expected one of %s, got %r"
                                 % (sorted(Context.devstr2type), device_type))
            if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
                raise ValueError("device_id: expected an int >= 0, got %r" % (device_id,))
            self.device_typeid = Context.devstr2type[device_type]
            self.device_id = device_id
        self._old_ctx = None

    @property
    def device_type(self):
        return Context.devtype2str[self.device_typeid]

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return isinstance(other, Context) and self.device_typeid == other.device_typeid and \
            self.device_id == other.device_id

    def __str__(self):
        return '%s(%d)' % (self.device_type, self.device_id)

    def __repr__(self):
        return self.__str__()

    def __enter__(self):
        if not hasattr(Context._default_ctx, 'value'):
            Context._default_ctx.value = Context('cpu', 0)
        self._old_ctx = Context._default_ctx.value
        Context._default_ctx.value = self
        return self

    def __exit__(self, ptype, value, trace):
        Context._default_ctx.value = self._old_ctx

    def empty_cache(self):
        """Cohort's caching pool keeps freed GPU blocks for reuse; nothing to do on the host."""

    # How the C++ core names a device ("cpu:0"); cpu_shared is host memory as cpu is.
    def _text(self):
        kind = 'cpu' if self.device_type == 'cpu_shared' else self.device_type
        return '%s:%d' % (kind, self.device_id)


def _from_text(text):
    kind, _, index = text.partition(':')
    return Context(kind, int(index or 0))


def cpu(device_id=0):
    """The CPU context; device_id is a label (several CPU devices share the host's cores)."""
    return Context('cpu', device_id)


def cpu_pinned(device_id=0):
    """Page-locked host memory, for fast copies to GPUs."""
    return Context('cpu_pinned', device_id)


def gpu(device_id=0):
    """GPU number device_id."""
    return Context('gpu', device_id)


def num_gpus():
    """The number of GPUs this process can see."""
    from . import _cohort
    return _cohort.num_gpus()


def current_context():
    """The default context: the innermost `with ctx:`, else cpu(0)."""
    if not hasattr(Context._default_ctx, 'value'):
        Context._default_ctx.value = Context('cpu', 0)
    return Context._default_ctx.value
