"""The examples under examples/, shortened: MXNet's Executor loop learns Fashion-MNIST (above
0.8 after one epoch), the manager loop over two devices learns, a model written in Python
trains under cohort-train, and train_mnist's Module.fit runs the C++ loop and checkpoints."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
FMNIST = '/usr/share/datasets/fashion-mnist'
pytestmark = pytest.mark.skipif(not os.path.exists(FMNIST),
                                reason='dataset-fashion-mnist not installed')


def run(script, *args):
    out = subprocess.run([sys.executable, os.path.join(ROOT, 'examples', script)] + list(args),
                         capture_output=True, text=True, timeout=240, env=os.environ)
    assert out.returncode == 0, out.stderr[-2000:]
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{')]


def test_executor_loop_learns_fashion_mnist():
    (epoch,) = run('executor_mlp_fmnist.py', '--epochs', '1')
    assert epoch['val_accuracy'] > 0.8, epoch


def test_manager_loop_over_two_devices_learns():
    (epoch,) = run('manager_two_devices.py', '--epochs', '1', '--batches', '150')
    assert epoch['train_accuracy'] > 0.6, epoch


def test_python_symbol_trains_under_cohort_train(tmp_path):
    train = os.path.join(os.environ.get('COHORT_BUILD_DIR', os.path.join(ROOT, 'build')), 'apps',
                         'cohort-train')
    run('symbol_to_cohort_train.py', '--train', train, '--epochs', '1', '--out', str(tmp_path),
        'data.batches_per_epoch=60', 'log_level=warn')
    with open(tmp_path / 'convnet-metrics.jsonl') as f:
        line = json.loads(f.readline())
    assert line['val']['accuracy'] > 0.6, line


def test_train_mnist_equals_cohort_train_bit_for_bit(tmp_path):
    """Module.fit on the C++ loop, seeded by mx.random.seed and given the config's initializer,
    schedule and shuffling, ends with cohort-train's parameters for the default job."""
    *epochs, score = run('train_mnist.py', '--epochs', '2', '--prefix', str(tmp_path / 'lenet'))
    assert score['engine'] == 'C++ loop', score
    assert score['val_accuracy'] > 0.8 and epochs[0]['train_accuracy'] > 0.7, (epochs, score)
    assert os.path.exists(tmp_path / 'lenet-symbol.json')
    train = os.path.join(os.environ.get('COHORT_BUILD_DIR', os.path.join(ROOT, 'build')), 'apps',
                         'cohort-train')
    out = subprocess.run([train, '--config', os.path.join(ROOT, 'configs', 'fmnist_lenet.yaml'),
                          '--set', 'epochs=2', '--set', 'log_level=warn', '--set',
                          'checkpoint.prefix=%s' % (tmp_path / 'ct')],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    import cohort as mx
    for epoch in (1, 2):
        ours = mx.nd.load(str(tmp_path / ('lenet-%04d.params' % epoch)))
        theirs = mx.nd.load(str(tmp_path / ('ct-%04d.params' % epoch)))
        assert sorted(ours) == sorted(theirs)
        for name in ours:
            assert ours[name].asnumpy().tobytes() == theirs[name].asnumpy().tobytes(), \
                (epoch, name)
