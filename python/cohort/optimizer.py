"""MXNet 1.x's mxnet.optimizer: the Optimizer base class (subclassable: create_state, update),
its registry (`create('sgd', ...)`, `register`), the optimizers, and the Updater a kvstore or a
training loop calls with (index, grad, weight).

The update rules run in Cohort's C++ kernels: SGD, NAG, Signum, FTML, Adam, RMSProp, Ftrl and
LAMB call the update operators (nd.sgd_update, ..., Note [Update operators] in
operator/optimizer_ops.h), which equal MXNet 1.9.1's bit for bit; AdaGrad, AdaDelta, Adamax,
Nadam, SGLD and DCASGD are written in NDArray arithmetic, as MXNet writes them. Parameters
follow MXNet's: learning rate, weight decay and their per-parameter multipliers (`lr_mult`,
`wd_mult`, by name through `param_idx2name` or by index; names not ending in _weight or _gamma
get no weight decay), `rescale_grad`, `clip_gradient`, a scheduler called with the update count,
and `multi_precision`, which keeps a float32 master copy of float16 weights.

Not here yet: LARS and LBSGD, and the aggregated multi-weight updates
(MXNET_OPTIMIZER_AGGREGATION_SIZE): each weight is updated on its own, as MXNet does with
aggregation size 1 (its SGD's rule is kept: see SGD; its LAMB's multi_lamb_update may round
differently from the two phases)."""
import math
import pickle
import warnings

import numpy

from . import ndarray as nd
from .util import check_keywords, keyword_names
from .ndarray import NDArray

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'LAMB', 'NAG', 'Nadam',
           'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum', 'Test', 'Updater', 'ccSGD', 'create',
           'get_updater', 'register']


class Optimizer(object):
    """The base class: learning rate, weight decay, their multipliers and update counts."""
    opt_registry = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None and \
                lr_scheduler.base_lr != learning_rate:
            print(UserWarning('learning rate from ``lr_scheduler`` has been overwritten by '
                              '``learning_rate`` in optimizer.'))
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        # Update counts by device (Updater sets the current one) and by index.
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0  # each weight updated on its own (module docstring)
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise AssertionError('param_idx2name should be a dict of param indexes to names.')
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    @staticmethod
    def register(klass):
        """Registers an Optimizer subclass under its lower-cased class name."""
        if not isinstance(klass, type):
            raise AssertionError('register: expected a class, got %r' % (klass,))
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn('WARNING: New optimizer %s.%s is overriding existing optimizer %s.%s'
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer by registered name (case-insensitive), with its keyword arguments."""
        if not isinstance(name, str):
            raise TypeError('create_optimizer: name must be a str, got %s' % type(name).__name__)
        if name.lower() not in Optimizer.opt_registry:
            raise ValueError('Cannot find optimizer %s' % name)
        klass = Optimizer.opt_registry[name.lower()]
        # Every keyword an __init__ of the class or its bases names (they pass **kwargs up).
        accepted = set()
        for base in klass.__mro__:
            if '__init__' in vars(base):
                accepted.update(keyword_names(vars(base)['__init__']))
        check_keywords("optimizer '%s'" % name, kwargs, accepted)
        return klass(**kwargs)

    @property
    def learning_rate(self):
        return self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr

    def create_state(self, index, weight):
        """The state `update` keeps for weight `index` (None: no state)."""

    def create_state_multi_precision(self, index, weight):
        """With multi_precision and a float16 weight: (float32 master copy, its state)."""
        if self.multi_precision and weight.dtype == numpy.float16:
            master = weight.astype(numpy.float32)
            return (master,) + (self.create_state(index, master),)
        _warn_float16(weight, self.multi_precision, '')
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """update, on the float32 master copy of a float16 weight with multi_precision. Lists
        of indices, weights, gradients and states (MXNet 1.9's aggregated call, as its LAMB and
        SGD take them) update each in turn, by the rules MXNet's multi-tensor kernels apply."""
        if isinstance(index, (tuple, list)):
            for i, w, g, s in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, s)
            return
        if self.multi_precision and weight.dtype == numpy.float16:
            master, original_state = state[0], state[1]
            self.update(index, master, grad.astype(numpy.float32), original_state)
            nd.Cast(master, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    def set_learning_rate(self, lr):
        if self.lr_scheduler is not None:
            raise UserWarning('LRScheduler of the optimizer has already been defined. Note that '
                              'set_learning_rate can mutate the value of the learning rate of '
                              'the optimizer only when the LRScheduler of the optimizer is '
                              'undefined.')
        self.lr = lr

    def set_lr_scale(self, args_lrscale):  # MXNet's deprecated name, which does nothing
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult):
        """Learning-rate multipliers by parameter name or index; the symbol's __lr_mult__
        attributes first."""
        self.lr_mult = self._symbol_mults('__lr_mult__')
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers: 0 for named parameters not ending in _weight or _gamma,
        then the symbol's __wd_mult__ attributes, then `args_wd_mult`."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if not (n.endswith('_weight') or n.endswith('_gamma'))}
        self.wd_mult.update(self._symbol_mults('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _symbol_mults(self, key):
        if not self.sym_info:
            return {}
        attr, arg_names = self.sym_info
        return {n: float(attr[n][key]) for n in arg_names if n in attr and key in attr[n]}

    def _set_current_context(self, device_id):
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index):
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    def _get_lrs(self, indices):
        lr = self.lr_scheduler(self.num_update) if self.lr_scheduler is not None else self.lr
        return [lr * self._mult(i, self.lr_mult, 'lr_mult') for i in indices]

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        return [self.wd * self._mult(i, self.wd_mult, 'wd_mult') for i in indices]

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    def _mult(self, index, mults, attr):
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in mults:
            return mults[index]
        if index in self.idx2name:
            return mults.get(self.idx2name[index], 1.0)
        return 1.0

    def _common_kwargs(self):
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        return kwargs

    def _begin_update(self, index, weight, grad):
        """Checks the arrays and counts the update (before the rate is read, as MXNet)."""
        _check_arrays(weight, grad)
        self._update_count(index)

    def _op_kwargs(self, index, **extra):
        """An update operator's rescale_grad, clip_gradient (when set), lr and wd for index."""
        kwargs = self._common_kwargs()
        kwargs.update(lr=self._get_lr(index), wd=self._get_wd(index), **extra)
        return kwargs

    def __getstate__(self):
        state = self.__dict__.copy()
        del state['param_dict']  # Gluon parameters do not pickle
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


def _warn_float16(weight, multi_precision, name):
    if weight.dtype == numpy.float16 and not multi_precision:
        warnings.warn('Accumulating with float16 in optimizer can lead to poor accuracy or slow '
                      'convergence. Consider using multi_precision=True option of the %s'
                      'optimizer' % (name + ' ' if name else ''))


def _check_arrays(weight, grad):
    if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
        raise TypeError('update: weight and grad must be NDArrays, got %s and %s'
                        % (type(weight).__name__, type(grad).__name__))


def _zeros_like(weight, dtype=None):
    return nd.zeros(weight.shape, weight.context, dtype=dtype or weight.dtype)


class _MasterLast(Optimizer):
    """SGD's and NAG's multi-precision state layout: (state, float32 master copy)."""

    def create_state_multi_precision(self, index, weight):
        if self.multi_precision and weight.dtype == numpy.float16:
            master = weight.astype(numpy.float32)
            return (self.create_state(index, master), master)
        _warn_float16(weight, self.multi_precision, type(self).__name__)
        return self.create_state(index, weight)

    def update_multi_precision(self, index, weight, grad, state):
        if self.multi_precision and weight.dtype == numpy.float16 and \
                isinstance(state, (tuple, list)):
            mom, master = state
            self.update(index, master, grad.astype(numpy.float32), mom)
            nd.Cast(master, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)


@register
class SGD(_MasterLast):
    """SGD with momentum and weight decay. MXNet's SGD updates dense weights with its
    multi_sgd kernels, whose rule is sgd_mom_update's (momentum · mom − lr · wd · w −
    lr · g, then w + mom) also without momentum, where sgd_update rounds differently
    ((1 − lr · wd) · w − lr · g): so both run sgd_mom_update, without momentum on a zeroed
    buffer kept per shape."""

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super(SGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self._zero_momentum = {}

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        for i, w, g, s in _each(index, weight, grad, state):
            self._begin_update(i, w, g)
            kwargs = self._op_kwargs(i, lazy_update=self.lazy_update)
            if s is None:
                s = self._zeros(w)
            nd.sgd_mom_update(w, g, s, out=w, momentum=self.momentum, **kwargs)

    def _zeros(self, weight):
        key = (weight.shape, weight.dtype, weight.context)
        if key not in self._zero_momentum:
            self._zero_momentum[key] = _zeros_like(weight)
        buffer = self._zero_momentum[key]
        buffer[:] = 0
        return buffer

    def __getstate__(self):
        state = super(SGD, self).__getstate__()
        state['_zero_momentum'] = {}
        return state


def _each(index, weight, grad, state):
    """(index, weight, grad, state) for one weight or lists of them."""
    if isinstance(index, (list, tuple)):
        return zip(index, weight, grad, state)
    return [(index, weight, grad, state)]


@register
class ccSGD(SGD):
    """MXNet's deprecated alias of SGD."""


@register
class NAG(_MasterLast):
    """Nesterov accelerated gradient (nag_mom_update; sgd_update without momentum)."""

    def __init__(self, momentum=0.0, **kwargs):
        super(NAG, self).__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        kwargs = self._op_kwargs(index)
        if state is not None:
            nd.nag_mom_update(weight, grad, state, out=weight, momentum=self.momentum, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, **kwargs)


@register
class Signum(Optimizer):
    """signSGD, and Signum with momentum (signsgd_update, signum_update)."""

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super(Signum, self).__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        kwargs = self._op_kwargs(index)
        if state is not None:
            if self.wd_lh:
                kwargs['wd_lh'] = self.wd_lh
            nd.signum_update(weight, grad, state, out=weight, momentum=self.momentum, **kwargs)
        else:
            nd.signsgd_update(weight, grad, out=weight, **kwargs)


@register
class LAMB(Optimizer):
    """LAMB: Adam's direction (lamb_update_phase1) scaled per weight by |w| / |direction|
    (lamb_update_phase2), |w| bounded by lower_bound and upper_bound. With multi_precision the
    float32 master copy takes every step (MXNet 1.9.1's mp_lamb_update_phase2 never writes it,
    so its steps all start from the first weights)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super(LAMB, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, var

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        kwargs = {'beta1': self.beta1, 'beta2': self.beta2, 'epsilon': self.epsilon,
                  'bias_correction': self.bias_correction, 'rescale_grad': self.rescale_grad,
                  't': self._index_update_count[index]}
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        mean, var = state
        g = nd.lamb_update_phase1(weight, grad, mean, var, wd=self._get_wd(index), **kwargs)
        bounds = {}
        if self.lower_bound:
            bounds['lower_bound'] = self.lower_bound
        if self.upper_bound:
            bounds['upper_bound'] = self.upper_bound
        nd.lamb_update_phase2(weight, g, weight.norm(), g.norm(), lr=self._get_lr(index),
                              out=weight, **bounds)


@register
class FTML(Optimizer):
    """Follow the moving leader (ftml_update)."""

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super(FTML, self).__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

    def create_state(self, index, weight):
        return tuple(_zeros_like(weight) for _ in range(3))  # d, v, z

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        kwargs = {'beta1': self.beta1, 'beta2': self.beta2, 'epsilon': self.epsilon,
                  'rescale_grad': self.rescale_grad, 't': self._index_update_count[index]}
        if self.clip_gradient:
            kwargs['clip_grad'] = self.clip_gradient
        d, v, z = state
        nd.ftml_update(weight, grad, d, v, z, out=weight, lr=self._get_lr(index),
                       wd=self._get_wd(index), **kwargs)


@register
class Adam(Optimizer):
    """Adam, its bias correction folded into the rate (adam_update)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super(Adam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, var

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        t = self._index_update_count[index]
        lr = self._get_lr(index) * math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
        kwargs = self._common_kwargs()
        kwargs.update(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon)
        mean, var = state
        nd.adam_update(weight, grad, mean, var, out=weight, lazy_update=self.lazy_update, lr=lr,
                       wd=self._get_wd(index), **kwargs)


@register
class RMSProp(Optimizer):
    """RMSProp (rmsprop_update), centered as Graves' (rmspropalex_update)."""

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
                 clip_weights=None, **kwargs):
        super(RMSProp, self).__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1, self.gamma2, self.epsilon = gamma1, gamma2, epsilon
        self.centered = centered
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        return tuple(nd.zeros(weight.shape, weight.context) for _ in
                     range(3 if self.centered else 1))

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        kwargs = self._op_kwargs(index, gamma1=self.gamma1, epsilon=self.epsilon)
        if self.clip_weights:
            kwargs['clip_weights'] = self.clip_weights
        if self.centered:
            n, g, delta = state
            nd.rmspropalex_update(weight, grad, n, g, delta, out=weight, gamma2=self.gamma2,
                                  **kwargs)
        else:
            nd.rmsprop_update(weight, grad, state[0], out=weight, **kwargs)


@register
class Ftrl(Optimizer):
    """Follow the regularized leader (ftrl_update)."""

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super(Ftrl, self).__init__(**kwargs)
        self.lamda1, self.beta = lamda1, beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (nd.zeros(weight.shape, weight.context), nd.zeros(weight.shape, weight.context))

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        z, n = state
        nd.ftrl_update(weight, grad, z, n, out=weight, lamda1=self.lamda1, beta=self.beta,
                       **self._op_kwargs(index))


def _rescaled_clipped(opt, grad):
    grad = grad * opt.rescale_grad
    if opt.clip_gradient is not None:
        grad = nd.clip(grad, -opt.clip_gradient, opt.clip_gradient)
    return grad


@register
class AdaGrad(Optimizer):
    """AdaGrad: history += g^2; w -= lr (g / sqrt(history + eps) + wd w)."""

    def __init__(self, eps=1e-7, **kwargs):
        super(AdaGrad, self).__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return nd.zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = _rescaled_clipped(self, grad)
        state[:] += nd.square(grad)
        div = grad / nd.sqrt(state + self.float_stable_eps)
        weight[:] += (div + weight * wd) * -lr


@register
class AdaDelta(Optimizer):
    """AdaDelta (rho, epsilon), with no learning rate."""

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super(AdaDelta, self).__init__(**kwargs)
        self.rho, self.epsilon = rho, epsilon

    def create_state(self, index, weight):
        return (nd.zeros(weight.shape, weight.context), nd.zeros(weight.shape, weight.context))

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        wd = self._get_wd(index)
        grad *= self.rescale_grad  # in place, as MXNet's AdaDelta rescales the caller's
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        acc_g, acc_delta = state
        acc_g[:] *= self.rho
        acc_g[:] += (1. - self.rho) * grad * grad
        delta = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] *= self.rho
        acc_delta[:] += (1. - self.rho) * delta * delta
        weight[:] -= delta + wd * weight


@register
class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm."""

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super(Adamax, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2 = beta1, beta2

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        t = self._index_update_count[index]
        lr = self._get_lr(index) / (1. - self.beta1 ** t)
        grad = grad * self.rescale_grad + self._get_wd(index) * weight
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        m_t, u_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        u_t[:] = nd.maximum(self.beta2 * u_t, nd.abs(grad))
        weight[:] -= lr * m_t / u_t


@register
class Nadam(Optimizer):
    """Adam with Nesterov momentum and a momentum schedule."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super(Nadam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        lr, t = self._get_lr(index), self._index_update_count[index]
        grad = grad * self.rescale_grad + self._get_wd(index) * weight
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        momentum_t = self.beta1 * (1. - 0.5 * pow(0.96, t * self.schedule_decay))
        momentum_t_1 = self.beta1 * (1. - 0.5 * pow(0.96, (t + 1) * self.schedule_decay))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        m_t[:] *= self.beta1
        m_t[:] += (1. - self.beta1) * grad
        v_t[:] *= self.beta2
        v_t[:] += (1. - self.beta2) * grad * grad
        grad_prime = grad / (1. - self.m_schedule)
        m_t_prime = m_t / (1. - m_schedule_next)
        v_t_prime = v_t / (1. - pow(self.beta2, t))
        m_t_bar = (1. - momentum_t) * grad_prime + momentum_t_1 * m_t_prime
        weight[:] -= lr * m_t_bar / (nd.sqrt(v_t_prime) + self.epsilon)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: a half step plus Gaussian noise of variance lr."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = _rescaled_clipped(self, grad)
        weight[:] += -lr / 2 * (grad + wd * weight)
        weight[:] += nd.random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                      ctx=weight.context)


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (lamda scales the compensation)."""

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super(DCASGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else _zeros_like(weight)
        return (mom, weight.copy())

    def update(self, index, weight, grad, state):
        self._begin_update(index, weight, grad)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = _rescaled_clipped(self, grad)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
            step = mom
        previous[:] = weight
        weight[:] += step


@register
class Test(Optimizer):
    """MXNet's test optimizer: w += rescale_grad g; the state copies the weight."""

    def create_state(self, index, weight):
        return nd.zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        weight[:] += grad * self.rescale_grad
        state[:] = weight


class Updater(object):
    """Calls an optimizer with (index, grad, weight), keeping each index's state: what a kvstore
    runs on push and a training loop runs after backward."""

    def __init__(self, optimizer):
        if not isinstance(optimizer, Optimizer):
            raise TypeError('Updater: expected an Optimizer, got %s' % type(optimizer).__name__)
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                indices[i] = idx = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        for idx, w, g in zip(indices, weights, grads):
            self.optimizer.update_multi_precision(idx, w, g, self.states[idx])

    def sync_state_context(self, state, context):
        """The state (arrays, tuples and lists of them) on `context`."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states):
        """Loads states from get_states' bytes (with the optimizer, when they hold it)."""
        states = pickle.loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The states pickled (with the optimizer when dump_optimizer)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer):
    """An Updater for `optimizer`."""
    return Updater(optimizer)
