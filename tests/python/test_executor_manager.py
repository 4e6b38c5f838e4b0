"""cohort.executor_manager: the manager over two CPU devices equals one executor on the whole
batch (outputs, summed gradients, metric); MXNet's slicing and argument checks."""
import numpy as np
import pytest

import cohort as mx
from cohort.executor_manager import (DataParallelExecutorManager, _check_arguments,
                                     _split_input_slice)


def mlp():
    x = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=6, name='fc1')
    x = mx.sym.Activation(x, act_type='relu', name='relu1')
    x = mx.sym.FullyConnected(x, num_hidden=3, name='fc2')
    return mx.sym.SoftmaxOutput(x, name='softmax')


def test_split_input_slice_rounds_halves_to_even_as_python():
    assert _split_input_slice(5, [1, 1]) == [slice(0, 2), slice(2, 5)]
    assert _split_input_slice(10, [1, 1, 1, 1]) == [slice(0, 2), slice(2, 4), slice(4, 6),
                                                    slice(6, 10)]
    assert _split_input_slice(8, [3, 1]) == [slice(0, 6), slice(6, 8)]
    with pytest.raises(ValueError, match='Too many slices'):
        _split_input_slice(2, [1, 1, 1])


def test_duplicate_arguments_are_refused():
    x = mx.sym.var('data')
    net = mx.sym.FullyConnected(mx.sym.FullyConnected(x, num_hidden=2, name='fc'),
                                num_hidden=2, name='fc')
    with pytest.raises(ValueError, match='duplicated argument name "fc_weight"'):
        _check_arguments(net)


def test_two_devices_equal_one_executor_on_the_whole_batch():
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (8, 5)).astype('f')
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1], 'f')
    net = mlp()
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    arg_names = net.list_arguments()
    param_names = [n for n in arg_names if n not in ('data', 'softmax_label')]
    params = {n: mx.nd.array(rng.uniform(-0.5, 0.5, s))
              for n, s in zip(arg_names, net.infer_shape(data=(8, 5))[0]) if n in param_names}
    manager = DataParallelExecutorManager(net, [mx.cpu(0), mx.cpu(1)], it, arg_names,
                                          param_names, net.list_auxiliary_states(),
                                          work_load_list=[1, 3])
    assert manager.slices == [slice(0, 2), slice(2, 8)]
    manager.set_params(params, {})
    batch = next(iter(it))
    manager.load_data_batch(batch)
    manager.forward(is_train=True)
    manager.backward()

    exe = net.simple_bind(mx.cpu(), data=(8, 5))
    exe.copy_params_from(params)
    exe.forward(is_train=True, data=x, softmax_label=y)
    exe.backward()

    outputs = np.concatenate([outs[0].asnumpy() for outs in manager.outputs])
    np.testing.assert_allclose(outputs, exe.outputs[0].asnumpy(), rtol=1e-5, atol=1e-6)
    for name, grads in zip(param_names, manager.grad_arrays):
        assert len(grads) == 2
        total = sum(g.asnumpy() for g in grads)
        np.testing.assert_allclose(total, exe.grad_dict[name].asnumpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    for name, arrays in zip(param_names, manager.param_arrays):
        for a in arrays:
            np.testing.assert_array_equal(a.asnumpy(), params[name].asnumpy())

    whole = mx.metric.Accuracy()
    whole.update([mx.nd.array(y)], exe.outputs)
    native, python = mx.metric.Accuracy(), mx.metric.CustomMetric(
        lambda label, pred: (float((pred.argmax(1) == label).sum()), len(label)), name='acc')
    manager.update_metric(native, batch.label)
    manager.update_metric(python, batch.label)
    assert native.get()[1] == whole.get()[1] == python.get()[1]
    assert native.num_inst == 8

    # copy_to: the mean over the devices, as MXNet's.
    manager.param_arrays[0][1][:] = manager.param_arrays[0][0].asnumpy() + 2
    out = {n: mx.nd.zeros(a.shape) for n, a in params.items()}
    manager.copy_to(out, {})
    np.testing.assert_allclose(out['fc1_weight'].asnumpy(), params['fc1_weight'].asnumpy() + 1,
                               rtol=1e-6)
    np.testing.assert_array_equal(out['fc2_bias'].asnumpy(), params['fc2_bias'].asnumpy())


def test_bad_arguments():
    it = mx.io.NDArrayIter(np.zeros((4, 5), 'f'), np.zeros(4, 'f'), batch_size=4)
    net = mlp()
    names = net.list_arguments()
    with pytest.raises(ValueError):
        DataParallelExecutorManager(net, [mx.cpu(0)], it, names, names[1:-1], [],
                                    work_load_list=[1, 1])
    with pytest.raises(TypeError):
        DataParallelExecutorManager(net, ['cpu'], it, names, names[1:-1], [])
