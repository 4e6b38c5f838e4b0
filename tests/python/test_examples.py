"""The examples under examples/, shortened: MXNet's Executor loop learns Fashion-MNIST (above
0.8 after one epoch), the manager loop over two devices learns, a model written in Python
trains under cohort-train, train_mnist's Module.fit and train_gpt's BucketingModule.fit run the C++
loop (equal to cohort-train and to mpirun), fine-tuning keeps frozen layers, and generation from
Python draws cohort-generate's bytes."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
FMNIST = '/usr/share/datasets/fashion-mnist'
TRAIN = os.path.join(os.environ.get('COHORT_BUILD_DIR', os.path.join(ROOT, 'build')), 'apps',
                     'cohort-train')
pytestmark = pytest.mark.skipif(not os.path.exists(FMNIST),
                                reason='dataset-fashion-mnist not installed')


def run(script, *args, env=None, launcher=()):
    out = subprocess.run(list(launcher) + [sys.executable, os.path.join(ROOT, 'examples', script)]
                         + list(args), capture_output=True, text=True, timeout=240,
                         env=dict(os.environ, **(env or {})))
    assert out.returncode == 0, out.stderr[-2000:]
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{')]


def cohort_train(config, *sets):
    """cohort-train on configs/CONFIG with --set SETS, quietly; fails the test on a nonzero exit."""
    args = [TRAIN, '--config', os.path.join(ROOT, 'configs', config), '--set', 'log_level=warn']
    for s in sets:
        args += ['--set', s]
    out = subprocess.run(args, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]


def assert_same_params(ours, theirs, what=''):
    """The two .params files hold the same names with the same bytes."""
    import cohort as mx
    a, b = mx.nd.load(str(ours)), mx.nd.load(str(theirs))
    assert sorted(a) == sorted(b)
    for name in a:
        assert a[name].asnumpy().tobytes() == b[name].asnumpy().tobytes(), (what, name)


def test_executor_loop_learns_fashion_mnist():
    (epoch,) = run('executor_mlp_fmnist.py', '--epochs', '1')
    assert epoch['val_accuracy'] > 0.8, epoch


def test_manager_loop_over_two_devices_learns():
    (epoch,) = run('manager_two_devices.py', '--epochs', '1', '--batches', '150')
    assert epoch['train_accuracy'] > 0.6, epoch


def test_python_symbol_trains_under_cohort_train(tmp_path):
    run('symbol_to_cohort_train.py', '--train', TRAIN, '--epochs', '1', '--out', str(tmp_path),
        'data.batches_per_epoch=60', 'log_level=warn')
    with open(tmp_path / 'convnet-metrics.jsonl') as f:
        line = json.loads(f.readline())
    assert line['val']['accuracy'] > 0.6, line


def test_train_mnist_equals_cohort_train_bit_for_bit(tmp_path):
    """Module.fit on the C++ loop, seeded by mx.random.seed and given the config's initializer,
    schedule and shuffling, ends with cohort-train's parameters for the default job."""
    # One kernel thread a device, as the MPI run below has.
    *epochs, score = run('train_mnist.py', '--epochs', '2', '--prefix', str(tmp_path / 'lenet'),
                         env={'COHORT_NUM_THREADS': '2'})
    assert score['engine'] == 'C++ loop', score
    assert score['val_accuracy'] > 0.8 and epochs[0]['train_accuracy'] > 0.7, (epochs, score)
    assert os.path.exists(tmp_path / 'lenet-symbol.json')
    cohort_train('fmnist_lenet.yaml', 'epochs=2', 'checkpoint.prefix=%s' % (tmp_path / 'ct'))
    for epoch in (1, 2):
        assert_same_params(tmp_path / ('lenet-%04d.params' % epoch),
                           tmp_path / ('ct-%04d.params' % epoch), epoch)


@pytest.mark.skipif(shutil.which('mpirun') is None, reason='no mpirun')
def test_train_mnist_under_mpirun_equals_one_process_on_two_devices(tmp_path):
    """Two workers of one device, each its half of every global batch of 128
    (sharding='global_batch'), end the epoch with one process's parameters on two devices, bit
    for bit with one kernel thread a device on both sides."""
    threads = {'COHORT_NUM_THREADS': '1'}
    mpirun = ['mpirun', '-np', '2', '--allow-run-as-root', '--oversubscribe', '--bind-to', 'none',
              '-x', 'PYTHONPATH', '-x', 'COHORT_NUM_THREADS']
    run('train_mnist.py', '--epochs', '1', '--kvstore', 'mpi', '--devices', '1', '--batch-size',
        '64', '--prefix', str(tmp_path / 'mpi'), env=threads, launcher=mpirun)
    run('train_mnist.py', '--epochs', '1', '--prefix', str(tmp_path / 'one'),
        env={'COHORT_NUM_THREADS': '2'})
    assert_same_params(tmp_path / 'mpi-0001.params', tmp_path / 'one-0001.params')


GCIDE = '/usr/share/dictd/gcide.dict.dz'
needs_gcide = pytest.mark.skipif(not os.path.exists(GCIDE), reason='dict-gcide not installed')


@needs_gcide
def test_train_gpt_bucketing_module_equals_cohort_train_bit_for_bit(tmp_path):
    """BucketingModule.fit over TextIter's bucketed lines runs the C++ loop, switching buckets by
    the batches' lengths, and ends each epoch with the parameters cohort-train's GPT config
    reaches with the same buckets; perplexity falls."""
    *epochs, score = run('train_gpt.py', '--epochs', '2', '--batches-per-epoch', '12',
                         '--val-batches', '4', '--prefix', str(tmp_path / 'gpt'))
    assert score['engine'] == 'C++ loop', score
    assert epochs[1]['train_perplexity'] < epochs[0]['train_perplexity'] < 100, epochs
    assert score['val_perplexity'] < 60, score
    cohort_train('text_gpt.yaml', 'epochs=2', 'data.batches_per_epoch=12', 'data.val_batches=4',
                 'data.buckets=[32,64,128]', 'checkpoint.prefix=%s' % (tmp_path / 'ct'))
    for epoch in (1, 2):
        assert_same_params(tmp_path / ('gpt-%04d.params' % epoch),
                           tmp_path / ('ct-%04d.params' % epoch), epoch)


@needs_gcide
@pytest.mark.skipif(shutil.which('mpirun') is None, reason='no mpirun')
def test_train_gpt_under_mpirun_equals_one_process_on_two_devices(tmp_path):
    """Bucketed batches sliced over two workers of one device train to one process's parameters
    on two devices, bit for bit with one kernel thread a device on both sides."""
    mpirun = ['mpirun', '-np', '2', '--allow-run-as-root', '--oversubscribe', '--bind-to', 'none',
              '-x', 'PYTHONPATH', '-x', 'COHORT_NUM_THREADS']
    short = ['--epochs', '1', '--batches-per-epoch', '8', '--val-batches', '2']
    run('train_gpt.py', '--kvstore', 'mpi', '--devices', '1', '--batch-size', '16',
        '--prefix', str(tmp_path / 'mpi'), *short, env={'COHORT_NUM_THREADS': '1'},
        launcher=mpirun)
    run('train_gpt.py', '--prefix', str(tmp_path / 'one'), *short,
        env={'COHORT_NUM_THREADS': '2'})
    assert_same_params(tmp_path / 'mpi-0001.params', tmp_path / 'one-0001.params')


def test_finetune_trains_a_new_head_on_frozen_layers(tmp_path):
    """A checkpoint's layers frozen by fixed_param_names keep their values bit for bit while a new
    classifier, initialized afresh on them, learns (a random head scores about 0.1)."""
    run('train_mnist.py', '--epochs', '1', '--prefix', str(tmp_path / 'lenet'))
    (result,) = run('finetune_mnist.py', '--checkpoint', str(tmp_path / 'lenet'), '--epoch', '1')
    assert result['engine'] == 'C++ loop', result
    assert result['frozen'] == ['conv1_weight', 'conv1_bias', 'conv2_weight', 'conv2_bias',
                                'fc1_weight', 'fc1_bias'], result
    assert result['frozen_unchanged'] and result['val_accuracy'] > 0.8, result


@needs_gcide
def test_generation_from_python_is_cohort_generates(tmp_path):
    """cohort.generation draws the bytes cohort-generate draws for the same seed (one C++ loop),
    streams each to its callback, and refuses an empty prompt."""
    import cohort as mx
    cohort_train('text_gpt.yaml', 'model.n_layer=1', 'model.d_model=32', 'model.n_head=2',
                 'model.seq_len=32', 'batch_size=16', 'epochs=1', 'data.batches_per_epoch=20',
                 'data.val_batches=1', 'checkpoint.prefix=%s' % (tmp_path / 'g'))
    generate = os.path.join(os.path.dirname(TRAIN), 'cohort-generate')
    out = subprocess.run([generate, '--symbol', str(tmp_path / 'g-symbol.json'), '--params',
                          str(tmp_path / 'g-0001.params'), '--prompt', 'The ', '--length', '60',
                          '--seed', '7', '--top-k', '20'], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    sym, args, aux = mx.model.load_checkpoint(str(tmp_path / 'g'), 1)
    gen = mx.generation.TextGenerator(sym, args, aux)
    assert (gen.context, gen.vocab) == (32, 256)
    streamed = []
    text = gen.generate('The ', length=60, seed=7, top_k=20, callback=streamed.append)
    assert out.stdout == text + b'\n' and len(text) == 60
    assert b''.join(streamed) == text
    assert text != gen.generate(b'The ', length=60, seed=8, top_k=20)
    p = gen.next_probabilities('The ')
    assert p.shape == (256,) and abs(float(p.sum()) - 1) < 1e-5
    assert mx.generation.generate(sym, args, aux, 'The ', 60, top_k=20, seed=7) == text
    with pytest.raises(mx.MXNetError, match='the prompt is empty'):
        gen.generate('', length=5)
    # Note [KV cache]: a position at a time gives the window's distributions within float
    # rounding, before the window fills and after (it slides, and the cache steps aside), and
    # for a prompt that does not extend the last one.
    assert gen.uses_kv_cache
    window = mx.generation.TextGenerator(sym, args, aux, kv_cache=False)
    assert not window.uses_kv_cache
    text = b'A word of more than thirty-two bytes, which slides the window'
    for n in list(range(1, len(text) + 1)) + [5, 3, 40]:
        np.testing.assert_allclose(gen.next_probabilities(text[:n]),
                                   window.next_probabilities(text[:n]), rtol=0, atol=1e-5)
    assert gen.generate('The ', 50, temperature=0) == window.generate('The ', 50, temperature=0)
