"""cohort.kv in one process: MXNet 1.x's init/push/pull/pushpull with int and str keys, single
arrays and lists (one per device), the sum as the stored value, an updater or optimizer applied
to the sum, optimizer states saved and loaded, and errors naming the key. Under mpirun:
mpi_kvstore_check.py (CTest python_mpi_kvstore)."""
import numpy as np
import pytest

import cohort as mx

SHAPE = (4, 4)


def test_single_key_sums_devices_and_replaces_the_value():
    kv = mx.kv.create()
    assert (kv.type, kv.rank, kv.num_workers) == ('local', 0, 1)
    kv.init(3, mx.nd.ones(SHAPE))
    out = mx.nd.zeros(SHAPE)
    kv.pull(3, out=out)
    assert out.asnumpy().sum() == 16
    kv.push(3, [mx.nd.ones(SHAPE) * i for i in range(4)])  # 0 + 1 + 2 + 3
    outs = [mx.nd.zeros(SHAPE) for _ in range(2)]
    kv.pull(3, out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), np.full(SHAPE, 6))
    kv.push(3, mx.nd.ones(SHAPE) * 2)  # no updater: the sum replaces the value
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 2))


def test_lists_of_keys_and_str_keys():
    kv = mx.kv.create('local_allreduce_cpu')
    keys = ['b', 'c', 'd']
    kv.init(keys, [mx.nd.zeros(SHAPE)] * 3)
    kv.push(keys, [[mx.nd.ones(SHAPE) * (k + d) for d in range(2)] for k in range(3)])
    outs = [[mx.nd.zeros(SHAPE)] for _ in keys]
    kv.pull(keys, out=outs)
    assert [o[0].asnumpy()[0, 0] for o in outs] == [1, 3, 5]
    grads = [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 3]
    kv.pushpull('b', grads)  # the sum comes back into the pushed arrays
    assert [g.asnumpy()[0, 0] for g in grads] == [4, 4]
    fresh = mx.nd.zeros(SHAPE)
    kv.broadcast(9, mx.nd.ones(SHAPE) * 7, out=fresh)
    assert fresh.asnumpy()[0, 0] == 7


def test_updater_and_optimizer_on_the_sum(tmp_path):
    kv = mx.kv.create()
    kv.init(0, mx.nd.ones(SHAPE))
    seen = []

    def updater(key, recv, local):
        seen.append((key, recv.asnumpy()[0, 0]))
        local[:] += recv * 2

    kv._set_updater(updater)
    kv.push(0, [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)])
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    assert seen == [(0, 2.0)] and out.asnumpy()[0, 0] == 5

    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, momentum=0.9))
    kv.push(0, [mx.nd.ones(SHAPE)] * 2)  # sum 2: mom = -1, w = 4
    kv.pull(0, out=out)
    assert out.asnumpy()[0, 0] == 4
    path = str(tmp_path / 'kv.states')
    kv.save_optimizer_states(path, dump_optimizer=True)
    kv.push(0, [mx.nd.ones(SHAPE)] * 2)  # mom = -1.9, w = 2.1
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy()[0, 0], 2.1, rtol=1e-6)
    kv.load_optimizer_states(path)  # back to mom = -1
    assert kv._updater.states[0].asnumpy()[0, 0] == -1


def test_bad_calls_name_the_key():
    kv = mx.kv.create()
    kv.init('w', mx.nd.zeros(3))
    with pytest.raises(mx.MXNetError, match="duplicate init of key 'w'"):
        kv.init('w', mx.nd.zeros(3))
    with pytest.raises(mx.MXNetError, match='never initialised'):
        kv.pull('v', out=mx.nd.zeros(3))
    with pytest.raises(mx.MXNetError, match=r"key 'w' holds shape \(3,\)"):
        kv.push('w', mx.nd.zeros(4))
    with pytest.raises(mx.MXNetError, match='int32'):
        kv.push('w', mx.nd.zeros(3, dtype='int32'))
    with pytest.raises(TypeError, match='keys must be int or str'):
        kv.push(1.5, mx.nd.zeros(3))
    with pytest.raises(ValueError, match='2 keys need a list of 2 values'):
        kv.push(['w', 'v'], mx.nd.zeros(3))
    with pytest.raises(AssertionError):
        kv.save_optimizer_states('x')
    with pytest.raises(mx.MXNetError, match="unknown kvstore 'bogus'"):
        mx.kv.create('bogus')
    with pytest.raises(TypeError):
        mx.kv.create(3)
    with pytest.raises(Exception, match='not supported'):
        kv.set_gradient_compression({'type': '2bit'})


def test_gradient_compression_types():
    """Cohort compresses to bfloat16 or float16 (Note [Gradient compression]); MXNet's 2bit is
    named as unsupported, 'local' refuses as MXNet's does, one worker has nothing to send."""
    kv = mx.kv.create('dist_sync')
    kv.set_gradient_compression({'type': 'bf16'})  # one worker: nothing crosses a wire
    kv.set_gradient_compression({'type': 'float16'})
    kv.set_gradient_compression({'type': 'none'})
    with pytest.raises(mx.MXNetError, match="type '2bit': Cohort compresses to bf16, bfloat16"):
        kv.set_gradient_compression({'type': '2bit', 'threshold': 0.5})
    with pytest.raises(ValueError, match='take no threshold'):
        kv.set_gradient_compression({'type': 'bf16', 'threshold': 0.5})
    with pytest.raises(ValueError, match="a dict with 'type'"):
        kv.set_gradient_compression('bf16')
    with pytest.raises(Exception, match='not supported for this type of kvstore'):
        mx.kv.create('local').set_gradient_compression({'type': 'bf16'})
    device = mx.kv.create('device')
    device.set_gradient_compression({'type': 'bf16'})  # host arrays: one worker, no wire
    device.init(3, mx.nd.ones(4))
    device.push(3, [mx.nd.ones(4), mx.nd.ones(4)])
    out = mx.nd.zeros(4)
    device.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full(4, 2))
