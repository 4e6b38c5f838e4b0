"""Evaluation metrics (MXNet 1.x's mxnet.metric): EvalMetric, the base class Python metrics
subclass; the built-in kinds computed by Cohort's C++ metrics (the ones cohort-train reports);
CompositeEvalMetric, CustomMetric and np over user functions; create by name, function or list."""
import json
from collections import OrderedDict

import numpy

from . import _cohort
from .base import string_types
from .ndarray import NDArray

__all__ = ['EvalMetric', 'CompositeEvalMetric', 'Accuracy', 'TopKAccuracy', 'F1', 'MCC', 'MAE',
           'MSE', 'RMSE', 'CrossEntropy', 'NegativeLogLikelihood', 'Perplexity',
           'PearsonCorrelation', 'PCC', 'Loss', 'CustomMetric', 'np', 'create',
           'check_label_shapes']


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """ValueError when there are not as many labels as predictions (or shapes differ)."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError('Shape of labels {} does not match shape of predictions {}'
                         .format(label_shape, pred_shape))
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


class EvalMetric:
    """Base class of metrics: update(labels, preds) adds to sum_metric and num_inst; get() is
    (name, sum_metric / num_inst), nan before any update."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop('has_global_stats', False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return 'EvalMetric: {}'.format(dict(self.get_name_value()))

    def get_config(self):
        config = self._kwargs.copy()
        config.update({'metric': self.__class__.__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        pred = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        label = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError()

    def reset(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float('nan'))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    def get_name_value(self):
        name, value = self.get()
        if not isinstance(name, list):
            name, value = [name], [value]
        return list(zip(name, value))

    def get_global_name_value(self):
        if self._has_global_stats:
            name, value = self.get_global()
            if not isinstance(name, list):
                name, value = [name], [value]
            return list(zip(name, value))
        return self.get_name_value()


def _whole(x):
    return int(x) if float(x).is_integer() else x


class _NativeMetric(EvalMetric):
    """A metric computed by Cohort's C++ metric of `kind` (its sums are MXNet's, float64).
    The global sums are the local ones plus those set aside by reset_local."""

    def __init__(self, kind, name, options, output_names=None, label_names=None, **kwargs):
        self._kind = kind
        self._options = dict({'name': name}, **{k: str(v) for k, v in options.items()})
        self._handle = _cohort.MetricHandle.create(kind, self._options)
        self._scratch = self._handle.clone()
        self._set_aside = None
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True, **kwargs)

    @property
    def handle(self):
        return self._handle

    def __getstate__(self):
        """Pickling and copy.deepcopy: the C++ metric travels as its kind, options and sums."""
        state = dict(self.__dict__)
        state['_handle'] = self._handle.state()
        del state['_scratch']
        return state

    def __setstate__(self, state):
        sums = state.pop('_handle')
        self.__dict__.update(state)
        self._handle = _cohort.MetricHandle.create(self._kind, self._options)
        self._handle.set_state(sums)
        self._scratch = self._handle.clone()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for a in list(labels) + list(preds):
            if not isinstance(a, NDArray):
                raise TypeError('%s: labels and preds must be NDArrays, got %s'
                                % (self.name, type(a).__name__))
        self._handle.update([l.handle for l in labels], [p.handle for p in preds])

    def reset(self):
        self._handle.reset()
        self._set_aside = None

    def reset_local(self):
        state = self._handle.state()
        self._set_aside = state if self._set_aside is None else \
            [a + b for a, b in zip(self._set_aside, state)]
        self._handle.reset()

    def _global_state(self):
        state = self._handle.state()
        return state if self._set_aside is None else \
            [a + b for a, b in zip(self._set_aside, state)]

    @property
    def sum_metric(self):
        return self._handle.state()[0]

    @property
    def num_inst(self):
        return _whole(self._handle.state()[1])

    @property
    def global_sum_metric(self):
        return self._global_state()[0]

    @property
    def global_num_inst(self):
        return _whole(self._global_state()[1])

    def get(self):
        return self._value(self._handle)

    def get_global(self):
        self._scratch.set_state(self._global_state())
        return self._value(self._scratch)

    def _value(self, handle):
        values = handle.get()
        if len(values) == 1:
            return (self.name, values[0][1])
        return ([n for n, _ in values], [v for _, v in values])


class Accuracy(_NativeMetric):
    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super().__init__('acc', name, {'axis': axis}, output_names, label_names, axis=axis)


class TopKAccuracy(_NativeMetric):
    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        if top_k > 1:
            name += '_%d' % top_k
        super().__init__('top_k_accuracy', name, {'top_k': top_k}, output_names, label_names,
                         top_k=top_k)


class F1(_NativeMetric):
    def __init__(self, name='f1', output_names=None, label_names=None, average='macro'):
        super().__init__('f1', name, {'average': average}, output_names, label_names)


class MCC(_NativeMetric):
    def __init__(self, name='mcc', output_names=None, label_names=None, average='macro'):
        super().__init__('mcc', name, {'average': average}, output_names, label_names)


class MAE(_NativeMetric):
    def __init__(self, name='mae', output_names=None, label_names=None):
        super().__init__('mae', name, {}, output_names, label_names)


class MSE(_NativeMetric):
    def __init__(self, name='mse', output_names=None, label_names=None):
        super().__init__('mse', name, {}, output_names, label_names)


class RMSE(_NativeMetric):
    def __init__(self, name='rmse', output_names=None, label_names=None):
        super().__init__('rmse', name, {}, output_names, label_names)


class CrossEntropy(_NativeMetric):
    def __init__(self, eps=1e-12, name='cross-entropy', output_names=None, label_names=None):
        super().__init__('ce', name, {'eps': eps}, output_names, label_names, eps=eps)


class NegativeLogLikelihood(_NativeMetric):
    def __init__(self, eps=1e-12, name='nll-loss', output_names=None, label_names=None):
        super().__init__('nll_loss', name, {'eps': eps}, output_names, label_names, eps=eps)


class Perplexity(_NativeMetric):
    def __init__(self, ignore_label, axis=-1, name='perplexity', output_names=None,
                 label_names=None):
        options = {} if axis == -1 else {'axis': axis}  # the classes' axis: the last one
        if ignore_label is not None:
            options['ignore_label'] = ignore_label
        super().__init__('perplexity', name, options, output_names, label_names,
                         ignore_label=ignore_label, axis=axis)


class PearsonCorrelation(_NativeMetric):
    def __init__(self, name='pearsonr', output_names=None, label_names=None, average='macro'):
        super().__init__('pearsonr', name, {'average': average}, output_names, label_names)


class Loss(_NativeMetric):
    """The mean of the predictions (a loss output); labels are not read."""

    def __init__(self, name='loss', output_names=None, label_names=None):
        super().__init__('loss', name, {}, output_names, label_names)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        self._handle.update([], [p.handle for p in preds])


class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; get() is ([names], [values])."""

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        try:
            return self.metrics[index]
        except IndexError:
            return ValueError('Metric index {} is out of range 0 and {}'.format(
                index, len(self.metrics)))

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, 'metrics', []):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def _collect(self, getter):
        names, values = [], []
        for metric in self.metrics:
            name, value = getter(metric)
            if isinstance(name, string_types):
                name, value = [name], [value]
            names.extend(name)
            values.extend(value)
        return (names, values)

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super().get_config()
        config.update({'metrics': [i.get_config() for i in self.metrics]})
        return config


class CustomMetric(EvalMetric):
    """A metric of a function feval(label, pred) over numpy arrays, returning a value (one
    instance) or (sum, count)."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if name.find('<') != -1:
                name = 'custom(%s)' % name
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(label.asnumpy(), pred.asnumpy())
            if isinstance(reval, tuple):
                sum_metric, num_inst = reval
            else:
                sum_metric, num_inst = reval, 1
            self.sum_metric += sum_metric
            self.global_sum_metric += sum_metric
            self.num_inst += num_inst
            self.global_num_inst += num_inst

    def get_config(self):
        raise NotImplementedError('CustomMetric cannot be serialized')


class PCC(EvalMetric):
    """MXNet's multiclass Matthews correlation (PCC) over a K x K confusion matrix that grows
    with the largest class seen; one instance per update, as MXNet counts it."""

    def __init__(self, name='pcc', output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), 'constant', constant_values=(0))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), 'constant', constant_values=(0))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = label.astype('int32', copy=False).asnumpy()
            pred = pred.asnumpy()
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype('int32', copy=False)
            if label.size and (label.min() < 0 or pred.min() < 0):
                raise ValueError('%s: classes must be >= 0, got labels from %d and predictions '
                                 'from %d' % (self.name, label.min(), pred.min()))
            n = max(pred.max(), label.max()) if label.size else 0
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            for i, j in zip(pred.ravel(), label.ravel()):
                bcm[i, j] += 1
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, value):
        pass  # derived from the confusion matrix

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, value):
        pass

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A CustomMetric of a function over numpy arrays."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


_REGISTRY = {
    'acc': Accuracy, 'accuracy': Accuracy, 'top_k_accuracy': TopKAccuracy,
    'top_k_acc': TopKAccuracy, 'topkaccuracy': TopKAccuracy, 'f1': F1, 'mcc': MCC, 'mae': MAE,
    'mse': MSE, 'rmse': RMSE, 'ce': CrossEntropy, 'cross-entropy': CrossEntropy,
    'crossentropy': CrossEntropy, 'nll_loss': NegativeLogLikelihood,
    'negativeloglikelihood': NegativeLogLikelihood, 'perplexity': Perplexity,
    'pearsonr': PearsonCorrelation, 'pcc': PCC,
    'pearsoncorrelation': PearsonCorrelation, 'loss': Loss, 'composite': CompositeEvalMetric,
    'compositeevalmetric': CompositeEvalMetric, 'customMetric': CustomMetric,
    'custommetric': CustomMetric,
}


def create(metric, *args, **kwargs):
    """A metric from a name ('acc', 'f1', ...; or a JSON config), an EvalMetric (itself), a
    function of (label, pred), or a list of any of these (a composite)."""
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, EvalMetric):
        return metric
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, dict):
        config = dict(metric)
        kind = config.pop('metric')
        if 'metrics' in config:
            config['metrics'] = [create(m) for m in config['metrics']]
        return create(kind, *args, **dict(config, **kwargs))
    if isinstance(metric, string_types):
        if metric.lstrip().startswith('{'):
            return create(json.loads(metric), *args, **kwargs)
        kind = _REGISTRY.get(metric, _REGISTRY.get(metric.lower()))
        if kind is None:
            raise ValueError('Cannot find metric %s (known: %s)'
                             % (metric, ', '.join(sorted(_REGISTRY))))
        return kind(*args, **kwargs)
    raise TypeError('metric should be a name, an EvalMetric, a function or a list, got %r'
                    % (metric,))
