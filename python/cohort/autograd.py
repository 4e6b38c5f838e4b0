"""MXNet 1.x's mxnet.autograd on Cohort's engine (Note [Imperative autograd]).

Note [Imperative autograd]
Inside `record()`, every operator call whose inputs include an array with attach_grad() (or the
result of such a call) is written down: the operator, its attributes, its input arrays. backward()
turns what was written, from the heads back to the leaves, into a Symbol (one node per call), binds
it on the leaves' arrays with their .grad arrays as args_grad and their grad_req, and runs the
executor's forward and backward: the gradients are the Executor's own, from the same kernels, so
nothing is implemented twice. The forward pass is computed again (a random operator, Dropout,
draws afresh). Without retain_graph the record is freed, and a second backward over it is an
error, as in MXNet. A CachedOp call is written down as its Symbol, composed in whole. Basic
indexing (ints and slices) of a recorded array is recorded as the slice
operator; assigning into a recorded array is refused, as MXNet refuses it."""
import threading

from .base import MXNetError

__all__ = ['record', 'pause', 'train_mode', 'predict_mode', 'is_recording', 'is_training',
           'set_recording', 'set_training', 'mark_variables', 'backward', 'grad']

_state = threading.local()


class _Node:
    """One recorded operator call."""
    __slots__ = ('op', 'attrs', 'inputs', 'num_outputs', 'freed')

    def __init__(self, op, attrs, inputs, num_outputs):
        self.op = op
        self.attrs = attrs
        self.inputs = inputs
        self.num_outputs = num_outputs
        self.freed = False


def _tracked(array):
    return array._node is not None or array._grad_req not in (None, 'null')


def _record(op, inputs, attrs, outputs):
    """Writes down a call if recording and an input is tracked; the outputs then are too."""
    if not is_recording() or not any(_tracked(x) for x in inputs):
        return
    node = _Node(op, dict(attrs), list(inputs), len(outputs))
    for i, out in enumerate(outputs):
        out._node = (node, i)


def is_recording():
    return getattr(_state, 'recording', False)


def is_training():
    return getattr(_state, 'training', False)


def set_recording(is_recording):  # pylint: disable=redefined-outer-name
    previous = globals()['is_recording']()
    _state.recording = bool(is_recording)
    return previous


def set_training(train_mode):  # pylint: disable=redefined-outer-name
    previous = is_training()
    _state.training = bool(train_mode)
    return previous


class _RecordingStateScope:
    def __init__(self, is_record, train_mode):
        self._enter = (is_record, train_mode)
        self._prev = (None, None)

    def __enter__(self):
        record, train = self._enter
        self._prev = (set_recording(record) if record is not None else None,
                      set_training(train) if train is not None else None)
        return self

    def __exit__(self, *exc):
        record, train = self._prev
        if self._enter[0] is not None:
            set_recording(record)
        if self._enter[1] is not None:
            set_training(train)


def record(train_mode=True):
    return _RecordingStateScope(True, train_mode)


def pause(train_mode=False):
    return _RecordingStateScope(False, train_mode)


def train_mode():
    return _RecordingStateScope(None, True)


def predict_mode():
    return _RecordingStateScope(None, False)


def mark_variables(variables, gradients, grad_reqs='write'):
    """Marks arrays as leaves whose gradients go into `gradients` (attach_grad's general form)."""
    from .ndarray import NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise ValueError('mark_variables: %d variables, %d gradients and %d grad_reqs'
                         % (len(variables), len(gradients), len(grad_reqs)))
    for v, g, req in zip(variables, gradients, grad_reqs):
        if req not in ('write', 'add', 'null'):
            raise ValueError("grad_req must be 'write', 'add' or 'null', got %r" % (req,))
        if not isinstance(v, NDArray) or not isinstance(g, NDArray) or v.shape != g.shape:
            raise ValueError('mark_variables: each variable needs an NDArray gradient of its '
                             'shape')
        v._grad, v._grad_req, v._node = g, req, None


def _graph(heads):
    """The Symbol of what was recorded from the leaves to `heads`, its input arrays by name,
    their gradient arrays and grad_req, and the nodes it was made of."""
    from . import symbol as sym
    names, arrays, grads, reqs, made, nodes, variables = {}, {}, {}, {}, {}, [], {}

    def variable(array):
        key = id(array)
        if key not in names:
            name = 'autograd_input%d' % len(names)
            names[key] = name
            arrays[name] = array
            if array._grad_req not in (None, 'null'):
                grads[name], reqs[name] = array._grad, array._grad_req
            variables[key] = sym.var(name)
        return variables[key]

    def symbol_of(array):
        # An input whose record an earlier backward freed is a constant now, as in MXNet.
        if array._node is None or array._node[0].freed:
            return variable(array)
        node, index = array._node
        if id(node) not in made:
            inputs = [symbol_of(x) for x in node.inputs]
            if isinstance(node.op, sym.Symbol):  # a CachedOp's graph, its inputs replaced
                made[id(node)] = node.op(**dict(zip(node.op.list_inputs(), inputs)))
            else:
                create = getattr(sym, node.op, None) or getattr(sym._internal, node.op)
                made[id(node)] = create(*inputs, name='autograd_op%d' % len(made), **node.attrs)
            nodes.append(node)
        out = made[id(node)]
        return out[index] if node.num_outputs > 1 else out

    for h in heads:
        if h._node is not None and h._node[0].freed:
            raise MXNetError('the graph recorded for this array was freed by an earlier '
                             'backward: pass retain_graph=True to the first backward to run '
                             'another')
        if h._node is None:
            raise MXNetError('cannot differentiate with respect to an array that was not '
                             'computed inside autograd.record() from arrays with attach_grad()')
    outs = [symbol_of(h) for h in heads]
    return (outs[0] if len(outs) == 1 else sym.Group(outs)), arrays, grads, reqs, nodes


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: F811
    """Gradients of heads (with head_grads, ones by default) into the .grad of every array
    marked with attach_grad() that they were computed from (Note [Imperative autograd])."""
    from .ndarray import NDArray, ones
    single = isinstance(heads, NDArray)
    heads = [heads] if single else list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    if len(head_grads) != len(heads):
        raise ValueError('backward: %d heads and %d head_grads' % (len(heads), len(head_grads)))
    graph, arrays, grads, reqs, nodes = _graph(heads)
    aux_names = set(graph.list_auxiliary_states())
    args = {k: v for k, v in arrays.items() if k not in aux_names}
    aux = {k: v for k, v in arrays.items() if k in aux_names}
    exe = graph.bind(heads[0].context, args=args, args_grad=grads, grad_req=reqs,
                     aux_states=aux)
    exe.forward(is_train=train_mode)
    exe.backward([g if g is not None else ones(h.shape, ctx=h.context, dtype=h.dtype)
                  for g, h in zip(head_grads, heads)])
    if not retain_graph:
        for node in nodes:
            node.freed = True


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """The gradients of heads with respect to `variables`, as new arrays (their .grad is left
    as it was). create_graph (gradients of gradients) is not supported."""
    from .ndarray import NDArray, zeros
    if create_graph:
        raise MXNetError('autograd.grad: create_graph=True (higher-order gradients) is not '
                         'supported')
    single = isinstance(variables, NDArray)
    variables = [variables] if single else list(variables)
    saved = [(v._grad, v._grad_req, v._node) for v in variables]
    results = [zeros(v.shape, ctx=v.context, dtype=v.dtype) for v in variables]
    try:
        for v, r in zip(variables, results):
            v._grad, v._grad_req = r, 'write'
        backward(heads, head_grads, retain_graph=bool(retain_graph), train_mode=train_mode)
    finally:
        for v, (g, req, node) in zip(variables, saved):
            v._grad, v._grad_req, v._node = g, req, node
    return results[0] if single else results
