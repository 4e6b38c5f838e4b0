"""cohort.lr_scheduler against MXNet 1.9.1's rates at updates 0 to 40
(tests/data/mxnet/lr_schedules.json, made by scripts/make_mxnet_optimizer_fixtures.py), the
trainer's C++ schedules against the same rates, and MXNet's checks of bad arguments."""
import json
import os

import pytest

import cohort as mx
from cohort import _cohort


def schedules(data_dir):
    with open(os.path.join(data_dir, 'mxnet', 'lr_schedules.json')) as f:
        return json.load(f)


def test_rates_and_base_lr_equal_mxnet(data_dir):
    for name, kwargs, rates, final_base_lr in schedules(data_dir):
        sched = getattr(mx.lr_scheduler, name)(**kwargs)
        assert [sched(n) for n in range(41)] == pytest.approx(rates, rel=1e-15), name
        assert sched.base_lr == pytest.approx(final_base_lr, rel=1e-15), name


def test_the_trainers_schedules_give_the_same_rates(data_dir):
    for name, kwargs, rates, _ in schedules(data_dir):
        sched = getattr(mx.lr_scheduler, name)(**kwargs)
        if sched.warmup_mode == 'constant':
            with pytest.raises(ValueError, match='warm up linearly'):
                sched._engine_schedule()
            continue
        kind, options = sched._engine_schedule()
        engine = _cohort.lr_schedule_rates(kind, options, list(range(41)))
        assert engine == pytest.approx(rates, rel=1e-12), (name, kwargs)


def test_bad_schedules_are_refused_as_mxnet():
    with pytest.raises(ValueError, match='greater or equal than 1'):
        mx.lr_scheduler.FactorScheduler(step=0)
    with pytest.raises(ValueError, match='no more than 1'):
        mx.lr_scheduler.FactorScheduler(step=2, factor=1.5)
    with pytest.raises(ValueError, match='increasing'):
        mx.lr_scheduler.MultiFactorScheduler(step=[5, 5])
    with pytest.raises(AssertionError):
        mx.lr_scheduler.MultiFactorScheduler(step=5)
    with pytest.raises(ValueError, match='linear and constant'):
        mx.lr_scheduler.CosineScheduler(10, warmup_steps=2, warmup_mode='cubic')
    with pytest.raises(ValueError, match='higher than warmup_begin_lr'):
        mx.lr_scheduler.PolyScheduler(10, base_lr=0.1, warmup_begin_lr=0.5)
    with pytest.raises(AssertionError):
        mx.lr_scheduler.PolyScheduler(10.5)
    with pytest.raises(NotImplementedError):
        mx.lr_scheduler.LRScheduler()(3)


def test_an_optimizer_follows_its_scheduler():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    updater = mx.optimizer.get_updater(opt)
    w = mx.nd.zeros(1)
    rates = []
    for _ in range(5):
        updater(0, mx.nd.ones(1), w)
        rates.append(opt.learning_rate)
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.25]
    assert w.asscalar() == -(1 + 1 + 0.5 + 0.5 + 0.25)
