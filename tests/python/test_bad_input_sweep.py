"""Every public callable of cohort.nd, cohort.sym and the classes behind them, called with
arguments of wrong types and values: each gives a Python exception, none crashes the
interpreter (a crash would end this test's process)."""
import inspect

import numpy as np
import pytest

import cohort as mx

@pytest.fixture(autouse=True)
def in_scratch_directory(tmp_path, monkeypatch):
    """Junk names reach save functions as file names: they land in a scratch folder, not the
    checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def global_switches_restored():
    """Junk reaches the process-wide switches too (set_np_shape('x') turns numpy shape semantics
    on): each test leaves them as it found them, for the tests that run after this file."""
    yield
    mx.util.reset_np()
    mx.autograd.set_recording(False)
    mx.autograd.set_training(False)


JUNK = [None, 'x', object(), -1, 2 ** 70, 1.5, float('nan'), (), (-1, -5), [None], {'a': 1}]


def callables(module):
    for name in sorted(dir(module)):
        if name.startswith('__'):
            continue
        fn = getattr(module, name)
        if callable(fn) and not inspect.isclass(fn) and not inspect.ismodule(fn):
            yield name, fn


def call_quietly(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception:  # any Python exception is a correct answer to junk
        pass


@pytest.mark.parametrize('name,fn', list(callables(mx.nd)))
def test_nd_functions_survive_junk(name, fn):
    x = mx.nd.ones((2, 3))
    for junk in JUNK:
        call_quietly(fn, junk)
        call_quietly(fn, x, junk)
        call_quietly(fn, x, axis=junk)
        call_quietly(fn, x, shape=junk)
        call_quietly(fn, x, num_hidden=junk, num_filter=junk, kernel=junk)
        call_quietly(fn, x, x, x, x, x, x, scalar=junk)


@pytest.mark.parametrize('name,fn', [(m.__name__ + '.' + n, f)
                                     for m in (mx.autograd, mx.util, mx.runtime, mx.io, mx.metric,
                                               mx.optimizer, mx.lr_scheduler, mx.kv, mx.init,
                                               mx.model, mx.callback)
                                     for n, f in callables(m)])
def test_module_functions_survive_junk(name, fn):
    x = mx.nd.ones((2, 3))
    for junk in JUNK:
        call_quietly(fn, junk)
        call_quietly(fn, x, junk)
        call_quietly(fn, [x], [junk])


@pytest.mark.parametrize('name,fn', list(callables(mx.sym)))
def test_sym_functions_survive_junk(name, fn):
    x = mx.sym.var('x')
    for junk in JUNK:
        call_quietly(fn, junk)
        call_quietly(fn, x, junk)
        call_quietly(fn, x, axis=junk)
        call_quietly(fn, x, name=junk, attr=junk)
        call_quietly(fn, data=junk)


def test_methods_survive_junk():
    a = mx.nd.ones((2, 3))
    s = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc')
    exe = s.simple_bind(mx.cpu(), data=(2, 3))
    targets = [a, s, exe, mx.metric.Accuracy(), mx.io.NDArrayIter(np.ones((4, 3)), batch_size=2)]
    for target in targets:
        for name in dir(target):
            if name.startswith('_') or name in ('reset',):
                continue
            method = getattr(target, name, None)
            if not callable(method):
                continue
            for junk in JUNK:
                call_quietly(method, junk)
                call_quietly(method, junk, junk)
    for junk in JUNK:
        call_quietly(a.__getitem__, junk)
        call_quietly(a.__setitem__, junk, junk)
        call_quietly(lambda: a + junk)
        call_quietly(lambda: s + junk)
        call_quietly(exe.forward, data=junk)
        call_quietly(s.simple_bind, mx.cpu(), data=junk)
        call_quietly(s.simple_bind, junk, data=(2, 3))
        call_quietly(mx.nd.array, junk)
        call_quietly(mx.nd.zeros, junk)
        call_quietly(mx.sym.Variable, 'v', shape=junk)
    np.testing.assert_array_equal((mx.nd.ones(2) + 1).asnumpy(), [2, 2])  # still works


def test_huge_allocations_are_refused_cleanly():
    with pytest.raises((mx.MXNetError, MemoryError, ValueError)):
        mx.nd.zeros((2 ** 20, 2 ** 20, 2 ** 10))
    with pytest.raises((mx.MXNetError, MemoryError, ValueError)):
        mx.sym.FullyConnected(mx.sym.var('d'), num_hidden=2 ** 40).simple_bind(mx.cpu(),
                                                                             data=(2 ** 20, 8))
