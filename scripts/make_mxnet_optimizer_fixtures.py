#!/usr/bin/env python3
"""Runs MXNet 1.9.1's optimizers (mx.optimizer.create + get_updater) for three steps on seeded
weights and gradients and saves what they produced, for tests/python/test_optimizer.py:

    tests/data/mxnet/optimizers.params   "<case>:w0", "<case>:g<step>" the inputs, "<case>:w<step>"
                                         the weight after each step (steps 1..3)
    tests/data/mxnet/optimizers.json     [[case, name, {kwarg: value}, dtype], ...]
    tests/data/mxnet/lr_schedules.json   [[class name, {kwarg: value}, [rate at update 0, 1,
                                         ..., 40], base_lr after them], ...]

Weights are named through param_idx2name ("fc_weight"), so weight decay applies. Each weight is
updated on its own (MXNET_OPTIMIZER_AGGREGATION_SIZE=1, as Cohort's Updater does).

    pip install mxnet==1.9.1 'numpy<1.24'   (in a venv; run this with that venv's python)
    python scripts/make_mxnet_optimizer_fixtures.py"""
import json
import os

os.environ['MXNET_OPTIMIZER_AGGREGATION_SIZE'] = '1'
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'data', 'mxnet')
BASE = {'learning_rate': 0.1, 'wd': 0.01, 'rescale_grad': 0.5}
CASES = [
    ('sgd', 'sgd', BASE, 'float32'),
    ('sgd_mom_clip', 'sgd', dict(BASE, momentum=0.9, clip_gradient=0.3), 'float32'),
    ('sgd_float64', 'sgd', dict(BASE, momentum=0.9), 'float64'),
    ('sgd_mp', 'sgd', dict(BASE, momentum=0.9, multi_precision=True), 'float16'),
    ('nag', 'nag', dict(BASE, momentum=0.9), 'float32'),
    ('signum', 'signum', dict(BASE, wd_lh=0.01), 'float32'),
    ('signsgd', 'signum', dict(BASE, momentum=0.0), 'float32'),
    ('ftml', 'ftml', dict(BASE, clip_gradient=0.3), 'float32'),
    ('adam', 'adam', BASE, 'float32'),
    ('adam_mp', 'adam', dict(BASE, multi_precision=True), 'float16'),
    ('rmsprop', 'rmsprop', BASE, 'float32'),
    ('rmsprop_centered', 'rmsprop', dict(BASE, centered=True, clip_weights=0.8), 'float32'),
    ('ftrl', 'ftrl', BASE, 'float32'),
    ('adagrad', 'adagrad', dict(BASE, clip_gradient=0.3), 'float32'),
    ('adadelta', 'adadelta', dict(BASE, rho=0.8), 'float32'),
    ('adamax', 'adamax', BASE, 'float32'),
    ('nadam', 'nadam', BASE, 'float32'),
    ('dcasgd', 'dcasgd', BASE, 'float32'),  # MXNet's with momentum tests an NDArray's truth
    ('lamb', 'lamb', BASE, 'float32'),
    ('lamb_bounds_clip', 'lamb', dict(BASE, lower_bound=0.5, upper_bound=0.9, clip_gradient=0.3,
                                      bias_correction=False), 'float32'),
    # (Not LAMB with multi_precision: MXNet 1.9.1's mp_lamb_update_phase2 never writes the
    # float32 master copy, so each step restarts from the first weights; Cohort's moves it.)
]


SCHEDULES = [
    ('FactorScheduler', {'step': 5, 'factor': 0.5, 'base_lr': 1.0}),
    ('FactorScheduler', {'step': 3, 'factor': 0.1, 'stop_factor_lr': 1e-3, 'base_lr': 1.0,
                         'warmup_steps': 4, 'warmup_begin_lr': 0.2}),
    ('FactorScheduler', {'step': 2, 'factor': 0.9, 'warmup_steps': 5, 'warmup_begin_lr': 0.001,
                         'warmup_mode': 'constant'}),
    ('MultiFactorScheduler', {'step': [3, 10, 11, 30], 'factor': 0.3, 'base_lr': 0.5}),
    ('MultiFactorScheduler', {'step': [8, 20], 'factor': 0.5, 'warmup_steps': 6,
                              'warmup_begin_lr': 0.001}),
    ('PolyScheduler', {'max_update': 30, 'base_lr': 0.4, 'pwr': 2, 'final_lr': 0.01}),
    ('PolyScheduler', {'max_update': 25, 'pwr': 1.5, 'warmup_steps': 5, 'warmup_begin_lr': 0.0}),
    ('CosineScheduler', {'max_update': 35, 'base_lr': 0.4, 'final_lr': 0.02}),
    ('CosineScheduler', {'max_update': 20, 'base_lr': 0.1, 'warmup_steps': 4,
                         'warmup_begin_lr': 0.01}),
]


def schedules():
    out = []
    for name, kwargs in SCHEDULES:
        sched = getattr(mx.lr_scheduler, name)(**kwargs)
        rates = [sched(n) for n in range(41)]
        out.append([name, kwargs, rates, sched.base_lr])
    return out


def main():
    rng = np.random.RandomState(11)
    arrays, cases = {}, []
    for case, name, kwargs, dtype in CASES:
        opt = mx.optimizer.create(name, param_idx2name={0: 'fc_weight'}, **kwargs)
        updater = mx.optimizer.get_updater(opt)
        w = mx.nd.array(rng.uniform(-1, 1, (3, 4)), dtype=dtype)
        arrays[case + ':w0'] = w.copy()
        for step in (1, 2, 3):
            g = mx.nd.array(rng.uniform(-1, 1, (3, 4)), dtype=dtype)
            arrays['%s:g%d' % (case, step)] = g.copy()  # AdaDelta rescales g in place
            updater(0, g, w)
            arrays['%s:w%d' % (case, step)] = w.copy()
        cases.append([case, name, kwargs, dtype])
    os.makedirs(OUT, exist_ok=True)
    mx.nd.save(os.path.join(OUT, 'optimizers.params'), arrays)
    with open(os.path.join(OUT, 'optimizers.json'), 'w') as f:
        json.dump(cases, f, indent=1)
        f.write('\n')
    with open(os.path.join(OUT, 'lr_schedules.json'), 'w') as f:
        f.write('[\n' + ',\n'.join(json.dumps(s) for s in schedules()) + '\n]\n')
    print('wrote %d cases and %d schedules to %s' % (len(cases), len(SCHEDULES), OUT))


if __name__ == '__main__':
    main()
