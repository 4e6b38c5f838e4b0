"""MXNet 1.x's mxnet.module.base_module: BaseModule's fit, score, predict and iter_predict over
a module's forward, backward and update (Module, module.py, implements those).

fit runs cohort-train's C++ loop (trainer/trainer.h: gradient sums overlapped with backward,
the workers' agreement, non-finite handling) wherever what it is given has a C++ counterpart
(native_fit.py); otherwise MXNet's BaseModule.fit loop over the module's steps."""
import logging
import time

import numpy as np

from .. import initializer as init_mod
from .. import metric as metric_mod
from .. import ndarray as nd
from ..util import keywords_checked
from ..io import DataBatch, DataIter
from ..model import BatchEndParam
from . import native_fit

__all__ = ['BaseModule']


def _as_list(obj):
    return obj if isinstance(obj, list) else [obj]


class BaseModule(object):
    """fit, score, predict and iter_predict over a module's forward, backward and update."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    def forward_backward(self, data_batch):
        self.forward(data_batch, is_train=True)
        self.backward()

    def _update_metric_of(self, eval_metric, batch):
        """update_metric with the batch's labels (a list of batches: each device's, sliced)."""
        if isinstance(batch, list):
            self.update_metric(eval_metric, [b.label for b in batch], pre_sliced=True)
        else:
            self.update_metric(eval_metric, batch.label)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Sets the parameters through the subclass's init_params (no initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to prepare for dense parameters (MXNet pulls row_sparse rows here)."""

    @keywords_checked
    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """eval_metric over eval_data (num_batch batches at most) -> [(name, value)]."""
        if not (self.binded and self.params_initialized):
            raise AssertionError('score: bind the module and initialise its parameters first')
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric_mod.EvalMetric):
            eval_metric = metric_mod.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            self._update_metric_of(eval_metric, eval_batch)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals())
            for callback in _as_list(score_end_callback):
                callback(params)
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yields (outputs with the padding removed, batch number, batch)."""
        if not (self.binded and self.params_initialized):
            raise AssertionError('iter_predict: bind the module and initialise its parameters')
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield (outputs, nbatch, eval_batch)

    @keywords_checked
    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Every output over eval_data, padding removed: merged over batches (one array, or a
        list with several outputs or always_output_list), or a list per batch."""
        if not (self.binded and self.params_initialized):
            raise AssertionError('predict: bind the module and initialise its parameters first')
        if isinstance(eval_data, (nd.NDArray, np.ndarray)):  # one batch, as MXNet's
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ValueError('eval_data must be of type NDArray or DataIter')
        if reset:
            eval_data.reset()
        output_list = []
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            output_list.append([out[0:out.shape[0] - pad].copy() for out in self.get_outputs()])
        if not output_list:
            return output_list
        if not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        for out in output_list:
            if len(out) != num_outputs:
                raise AssertionError('Cannot merge batches, as num of outputs is not the same '
                                     'in mini-batches. Maybe bucketing is used?')
        merged = [nd.concat(*[out[i] for out in output_list], dim=0)
                  for i in range(num_outputs)]
        if num_outputs == 1 and not always_output_list:
            return merged[0]
        return merged

    @keywords_checked
    def fit(self, train_data, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', optimizer='sgd',
            optimizer_params=(('learning_rate', 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=init_mod.Uniform(0.01),
            arg_params=None, aux_params=None, allow_missing=False, force_rebind=False,
            force_init=False, begin_epoch=0, num_epoch=None, validation_metric=None,
            monitor=None, sparse_row_id_fn=None):
        """Trains num_epoch epochs from begin_epoch, as MXNet's BaseModule.fit."""
        if num_epoch is None:
            raise AssertionError('please specify number of epochs')
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        if validation_metric is None:
            validation_metric = eval_metric
        fit_plan = native_fit.plan(self, train_data, eval_metric, optimizer, optimizer_params,
                                   kvstore, monitor, sparse_row_id_fn)
        if fit_plan is not None:
            native_fit.run(self, fit_plan, train_data, eval_data, validation_metric,
                           epoch_end_callback, batch_end_callback, eval_end_callback,
                           eval_batch_end_callback, begin_epoch, num_epoch)
            return
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if not isinstance(eval_metric, metric_mod.EvalMetric):
            eval_metric = metric_mod.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            nbatch = 0
            data_iter = iter(train_data)
            end_of_batch = False
            next_data_batch = next(data_iter)
            eval_name_vals = []
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self._update_metric_of(eval_metric, data_batch)
                try:
                    next_data_batch = next(data_iter)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                           locals=locals())
                    for callback in _as_list(batch_end_callback):
                        callback(params)
                nbatch += 1
            self._end_epoch(epoch, eval_name_vals, time.time() - tic, epoch_end_callback,
                            eval_data, validation_metric, eval_end_callback,
                            eval_batch_end_callback)
            train_data.reset()

    def _end_epoch(self, epoch, train_name_vals, seconds, epoch_end_callback, eval_data,
                   validation_metric, eval_end_callback, eval_batch_end_callback):
        """MXNet's end of a fit epoch, for both loops: the log, the parameters made alike on
        every device, the epoch-end callbacks, then validation."""
        for name, val in train_name_vals:
            self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
        self.logger.info('Epoch[%d] Time cost=%.3f', epoch, seconds)
        arg_params, aux_params = self.get_params()
        self.set_params(arg_params, aux_params)
        if epoch_end_callback is not None:
            for callback in _as_list(epoch_end_callback):
                callback(epoch, self.symbol, arg_params, aux_params)
        if eval_data:
            res = self.score(eval_data, validation_metric, score_end_callback=eval_end_callback,
                             batch_end_callback=eval_batch_end_callback, epoch=epoch)
            for name, val in res:
                self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)

    @property
    def symbol(self):
        return self._symbol
