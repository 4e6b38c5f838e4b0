"""MXNet 1.x's mxnet.lr_scheduler: learning rate as a function of the update count, with an
optional warm-up (linear or constant) in front.

These are MXNet's stateful schedulers, as scripts see them: a FactorScheduler or
MultiFactorScheduler moves `base_lr` down as the count passes its steps (and a script may set
`base_lr` between calls), Poly and Cosine schedulers write the current rate to `base_lr`. The
C++ trainer's schedules (optimizer/lr_scheduler.h) compute the same rates as pure functions of
the count; `_engine_schedule()` gives the kind and options of the one equal to a scheduler here
(tests/python/test_lr_scheduler.py checks both against MXNet 1.9.1's values)."""
import logging
from math import cos, pi

__all__ = ['LRScheduler', 'FactorScheduler', 'MultiFactorScheduler', 'PolyScheduler',
           'CosineScheduler']


class LRScheduler(object):
    """The base class: `sched(num_update)` -> learning rate; subclasses define __call__."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int):
            raise AssertionError('warmup_steps must be an int, got %r' % (warmup_steps,))
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError('Base lr has to be higher than warmup_begin_lr')
        if self.warmup_steps < 0:
            raise ValueError('Warmup steps has to be positive or 0')
        if warmup_mode not in ['linear', 'constant']:
            raise ValueError('Supports only linear and constant modes of warmup')
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The rate during warm-up: from warmup_begin_lr up to base_lr, or constant."""
        if num_update >= self.warmup_steps:
            raise AssertionError('update %d is past the %d warm-up steps'
                                 % (num_update, self.warmup_steps))
        if self.warmup_mode == 'constant':
            return self.warmup_begin_lr
        increase = (self.warmup_final_lr - self.warmup_begin_lr) * float(num_update) / \
            float(self.warmup_steps)
        return self.warmup_begin_lr + increase

    def __call__(self, num_update):
        raise NotImplementedError('must override this')

    def _decay_until(self, max_update, final_lr):
        """Poly's and Cosine's end: final_lr at max_update, max_steps after the warm-up."""
        if not isinstance(max_update, int):
            raise AssertionError('max_update must be an int, got %r' % (max_update,))
        if max_update < 1:
            raise ValueError('maximum number of updates must be strictly positive')
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def _warmup_options(self):
        if self.warmup_mode != 'linear' and self.warmup_steps:
            raise ValueError("the trainer's schedules warm up linearly; warmup_mode %r has no "
                             'equal there' % self.warmup_mode)
        return {'warmup_steps': self.warmup_steps, 'warmup_begin_lr': self.warmup_begin_lr}


class FactorScheduler(LRScheduler):
    """base_lr · factor^k after k steps of `step` updates, never below stop_factor_lr."""

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super(FactorScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr,
                                              warmup_mode)
        if step < 1:
            raise ValueError('Schedule step must be greater or equal than 1 round')
        if factor > 1.0:
            raise ValueError('Factor must be no more than 1 to make lr reduce')
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:  # the rate changes after update count+step
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info('Update[%d]: now learning rate arrived at %0.5e, will not change '
                             'in the future', num_update, self.base_lr)
            else:
                logging.info('Update[%d]: Change learning rate to %0.5e', num_update,
                             self.base_lr)
        return self.base_lr

    def _engine_schedule(self):
        return 'factor', dict(self._warmup_options(), base_lr=self.base_lr, step=self.step,
                              factor=self.factor, stop_factor_lr=self.stop_factor_lr)


class MultiFactorScheduler(LRScheduler):
    """base_lr · factor^k after the k-th of the increasing update counts in `step`."""

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super(MultiFactorScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr,
                                                   warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise AssertionError('step must be a non-empty list of update counts, got %r'
                                 % (step,))
        for i, s in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise ValueError('Schedule step must be an increasing integer list')
            if s < 1:
                raise ValueError('Schedule step must be greater or equal than 1 round')
        if factor > 1.0:
            raise ValueError('Factor must be no more than 1 to make lr reduce')
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info('Update[%d]: Change learning rate to %0.5e', num_update, self.base_lr)
        return self.base_lr

    def _engine_schedule(self):
        return 'multifactor', dict(self._warmup_options(), base_lr=self.base_lr,
                                   steps=list(self.step), factor=self.factor)


class PolyScheduler(LRScheduler):
    """From base_lr to final_lr at max_update along (1 - progress)^pwr."""

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super(PolyScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr
        self._decay_until(max_update, final_lr)

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            progress = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                pow(1 - progress, self.power)
        return self.base_lr

    def _engine_schedule(self):
        return 'poly', dict(self._warmup_options(), base_lr=self.base_lr_orig,
                            max_update=self.max_update, final_lr=self.final_lr, pwr=self.power)


class CosineScheduler(LRScheduler):
    """From base_lr to final_lr at max_update along half a cosine."""

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super(CosineScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr,
                                              warmup_mode)
        self._decay_until(max_update, final_lr)

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            angle = pi * (num_update - self.warmup_steps) / self.max_steps
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * \
                (1 + cos(angle)) / 2
        return self.base_lr

    def _engine_schedule(self):
        return 'cosine', dict(self._warmup_options(), base_lr=self.base_lr_orig,
                              max_update=self.max_update, final_lr=self.final_lr)
