"""Module.fit on cohort-train's C++ loop (Note [One engine], python/src/trainer_binding.cc).

`fit` runs Trainer::Fit over the Module's own manager (bound and initialised by Module, as
MXNet's fit does) when everything it is given has a C++ counterpart: a native iterator, one
native metric, an optimizer and learning-rate schedule Cohort has in C++, a kvstore kind. The
loop then overlaps the gradient sums with backward, checks the workers agree and skips or stops
on non-finite gradients as cohort-train does; the callbacks get MXNet's arguments. Anything else
returns None from `plan` and fit runs MXNet's Python loop over the same C++ steps."""
import os

import numpy as np

from .. import _cohort
from .. import kvstore as kvs
from .. import lr_scheduler as lrs
from .. import metric as metric_mod
from .. import optimizer as opt
from ..base import MXNetError
from ..io import _desc
from ..model import BatchEndParam

__all__ = ['plan', 'run']

# False runs MXNet's Python loop (tests and bench/module_fit.sh compare the two): set here, or
# with COHORT_PYTHON_FIT_LOOP=1 in the environment.
ENABLED = os.environ.get('COHORT_PYTHON_FIT_LOOP', '0') in ('', '0')

_OPTIMIZERS = {opt.SGD: 'sgd', opt.ccSGD: 'sgd', opt.NAG: 'nag', opt.Adam: 'adam',
               opt.RMSProp: 'rmsprop', opt.AdaGrad: 'adagrad', opt.AdaDelta: 'adadelta',
               opt.Adamax: 'adamax', opt.Signum: 'signum', opt.FTML: 'ftml', opt.Ftrl: 'ftrl',
               opt.LAMB: 'lamb'}
# Python attributes named otherwise than the C++ optimizer's settings; the others
# (_cohort.optimizer_option_keys(): OptimizerOptions::Table) share the name. An attribute the
# optimizer lacks, or None (off), leaves the C++ default.
_RENAMED = {'float_stable_eps': 'epsilon'}
_KVSTORES = ('local', 'device', 'nccl', 'mpi', 'dist_sync')


def _schedule(scheduler):
    """(kind, options) of a built-in scheduler in its initial state, else None."""
    if scheduler is None:
        return 'constant', {}
    if getattr(scheduler, 'warmup_mode', 'linear') != 'linear':
        return None
    warm = {'warmup_steps': int(scheduler.warmup_steps),
            'warmup_begin_lr': float(scheduler.warmup_begin_lr)}
    kind = type(scheduler)
    if kind is lrs.FactorScheduler and scheduler.count == 0:
        return 'factor', dict(warm, step=int(scheduler.step), factor=float(scheduler.factor),
                              stop_factor_lr=float(scheduler.stop_factor_lr))
    if kind is lrs.MultiFactorScheduler and scheduler.cur_step_ind == 0:
        return 'multifactor', dict(warm, steps=[int(s) for s in scheduler.step],
                                   factor=float(scheduler.factor))
    if kind is lrs.PolyScheduler:
        return 'poly', dict(warm, max_update=int(scheduler.max_update),
                            final_lr=float(scheduler.final_lr), pwr=float(scheduler.power))
    if kind is lrs.CosineScheduler:
        return 'cosine', dict(warm, max_update=int(scheduler.max_update),
                              final_lr=float(scheduler.final_lr))
    return None


def _optimizer_settings(optimizer, half_weights=False):
    """(name, options, schedule) of an optimizer the C++ loop has, else None. float16 weights
    train there with multi_precision (Note [Multi-precision weights]); without it the Python
    loop updates them in float16, warning as MXNet does."""
    name = _OPTIMIZERS.get(type(optimizer))
    if name is None or optimizer.num_update != 0:
        return None
    if half_weights and not optimizer.multi_precision:
        return None
    schedule = _schedule(optimizer.lr_scheduler)
    if schedule is None:
        return None
    options = {}
    keys = _cohort.optimizer_option_keys()
    for attr, key in [(k, k) for k in keys] + list(_RENAMED.items()):
        value = getattr(optimizer, attr, None)
        if attr == 'lr' and optimizer.lr_scheduler is not None:
            value = optimizer.lr_scheduler.base_lr
        if value is None:
            continue  # clip_gradient, clip_weights and bounds: None is off
        options[key] = float(value)
    return name, options, schedule


def plan(module, train_data, eval_metric, optimizer, optimizer_params, kvstore, monitor,
         sparse_row_id_fn):
    """What the C++ loop needs, or None where fit must run the Python loop. Called after bind
    and init_params, before init_optimizer. A BucketingModule trains on its Module's manager,
    which switches buckets by the batches' keys (a native iterator's: ints, the manager's own)."""
    if not ENABLED or monitor is not None or sparse_row_id_fn is not None:
        return None
    module = _inner(module)
    if module is None:
        return None
    if module.optimizer_initialized or getattr(module, '_preload_opt_states', None) is not None:
        return None
    if module._exec_group.grad_req != 'write' or not isinstance(kvstore, str):
        return None
    if kvstore not in _KVSTORES or not hasattr(train_data, '_handle'):
        return None
    metric = eval_metric if isinstance(eval_metric, metric_mod.EvalMetric) else \
        metric_mod.create(eval_metric)
    if not isinstance(metric, metric_mod._NativeMetric) or metric.output_names is not None \
            or metric.label_names is not None:
        return None
    dtypes = {np.dtype(a.dtype) for block in module._exec_group.param_arrays for a in block}
    half_weights = np.dtype(np.float16) in dtypes
    if not dtypes <= {np.dtype(np.float32), np.dtype(np.float16)}:
        return None
    if half_weights and any(c.device_type == 'gpu' for c in module._exec_group.contexts):
        return None  # the C++ loop keeps master copies on host devices only
    if not isinstance(optimizer, (str, opt.Optimizer)):
        return None
    group = module._exec_group
    if kvstore in ('device', 'nccl') and all(c.device_type != 'gpu' for c in group.contexts):
        if kvstore == 'nccl':
            return None  # the Python loop says NCCL needs GPUs
        kvstore = 'local'  # MXNet's 'device' store sums host arrays on the host
    try:
        trainer = _cohort.TrainerHandle(module._symbol.handle,
                                        [c._text() for c in group.contexts],
                                        [float(w) for w in group.workload], kvstore)
    except MXNetError:
        return None  # a kind this build lacks: the Python loop reports it as MXNet does
    batch_size = module._data_shapes[0].shape[0]
    if kvs.sums_across_workers(kvstore):
        batch_size *= trainer.num_workers
    if trainer.num_workers > 1:
        kvs._end_the_job_on_an_uncaught_exception()
    optimizer = _make_optimizer(module, optimizer, optimizer_params, batch_size)
    settings = _optimizer_settings(optimizer, half_weights) if optimizer is not None else None
    if settings is None:
        return None
    return {'metric': metric, 'optimizer': optimizer, 'settings': settings, 'trainer': trainer}


def _inner(module):
    """The Module whose manager trains: the module itself, or a BucketingModule's; else None."""
    if type(module).__name__ == 'BucketingModule':
        return module._module
    return module if type(module).__name__ == 'Module' and module._buckets is None else None


def _make_optimizer(module, optimizer, optimizer_params, batch_size):
    """The Optimizer Module.init_optimizer would make (rescale_grad 1 / the batch, times the
    workers for dist kinds), or None for one given that the C++ loop cannot take as it is."""
    if isinstance(optimizer, str):
        params = dict(optimizer_params)
        params.setdefault('rescale_grad', 1.0 / batch_size)
        try:
            return opt.create(optimizer, sym=module._symbol, **params)
        except (ValueError, TypeError, KeyError):
            return None  # the Python loop reports it as MXNet does
    # Multipliers set by hand, beyond the symbol's attributes, have no C++ counterpart.
    fresh = type(optimizer)(sym=module._symbol)
    if optimizer.lr_mult != fresh.lr_mult or optimizer.wd_mult != fresh.wd_mult:
        return None
    return optimizer


def run(module, fit_plan, train_data, eval_data, validation_metric, epoch_end_callback,
        batch_end_callback, eval_end_callback, eval_batch_end_callback, begin_epoch, num_epoch):
    """Trains on Trainer::Fit; the Module's manager holds the parameters as it goes. `module` is
    the one fit was called on (callbacks and validation see it), a Module or a BucketingModule."""
    outer, module = module, _inner(module)
    metric = fit_plan['metric']
    name, options, (schedule_kind, schedule) = fit_plan['settings']
    group = module._exec_group
    update_on_kvstore = os.environ.get('MXNET_UPDATE_ON_KVSTORE', '1') != '0'
    trainer = fit_plan['trainer']
    manager = group._manager
    trainer.adopt(manager._handle, [_desc(d) for d in group.data_shapes],
                  list(manager.param_names))
    # MXNet's begin_epoch only numbers the epochs (the parameters are the Module's): the C++
    # loop, whose begin_epoch resumes a checkpoint, runs them from 0 and the callbacks add it.
    config = {'epochs': num_epoch - begin_epoch, 'begin_epoch': 0, 'seed': 0,
              'update_on_kvstore': update_on_kvstore, 'metrics': [metric._kind],
              'optimizer': name, 'optimizer_options': options, 'lr_schedule': schedule_kind,
              'schedule': schedule}
    ignore = metric._options.get('ignore_label')
    if ignore is not None:
        config['ignore_label'] = int(float(ignore))
    if type(train_data).__name__ == 'TextIter':
        config['count_tokens'] = True
    callbacks = batch_end_callback if isinstance(batch_end_callback, list) else \
        [batch_end_callback] if batch_end_callback is not None else []

    def on_batch_end(epoch, nbatch):
        epoch += begin_epoch
        if nbatch == 0:
            metric._set_aside = None  # the C++ loop reset the sums as the epoch began
        params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric,
                               locals={'self': outer, 'epoch': epoch, 'nbatch': nbatch,
                                       'eval_metric': metric})
        for callback in callbacks:
            callback(params)

    def on_epoch(result):
        module._params_dirty = True  # the C++ loop updated the devices' parameters
        outer._end_epoch(result['epoch'] + begin_epoch, metric.get_global_name_value(),
                          result['seconds'], epoch_end_callback, eval_data, validation_metric,
                          eval_end_callback, eval_batch_end_callback)
        # The C++ loop resets train_data next, as MXNet's fit does here.

    if num_epoch <= begin_epoch:
        return
    metric.reset()
    module._native_trainer = trainer
    module._optimizer = fit_plan['optimizer']
    module._kvstore, module._update_on_kvstore, module._updater = None, update_on_kvstore, None
    module.optimizer_initialized = True
    trainer.fit(train_data._handle, None, config, metric.handle, None,
                on_batch_end if callbacks else None, on_epoch)
    module._params_dirty = True
