"""MXNet 1.x's mxnet.initializer (`mx.init`): initializers called with a parameter's description
and its array, choosing by name as MXNet does (a variable's __init__ attribute first, then
*weight, *bias, *gamma, *beta, *min, *max), subclassable (override _init_weight), created from
names or their dumps() text, and the Load and Mixed helpers.

Random fills draw with cohort.random (the _random_uniform and _random_normal kernels, seeded by
mx.random.seed). The trainer's C++ initializer (optimizer/initializer.h) reads the same dumps()
text from a variable's __init__ attribute, so a network initialised here or by cohort-train
follows the same rules and scales."""
import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from . import ndarray
from . import random
from .ndarray import NDArray, load

__all__ = ['InitDesc', 'Initializer', 'Load', 'Mixed', 'Zero', 'One', 'Constant', 'Uniform',
           'Normal', 'Orthogonal', 'Xavier', 'MSRAPrelu', 'Bilinear', 'LSTMBias', 'register',
           'alias', 'create']

_REGISTRY = {}


class InitDesc(str):
    """A parameter's name (a str) with its attributes and the global initializer."""

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super(InitDesc, cls).__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


class Initializer(object):
    """The base class: __call__(desc, arr) fills arr by desc's name (module docstring)."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Logs each initialised array's norm / sqrt(size) (or print_func's text)."""
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                return str((ndarray.norm(x) / sqrt(x.size)).asscalar())
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info('Initialized %s as %s: %s', desc, init, self._print_func(arr))

    def dumps(self):
        """'["name", {kwargs}]': what create() and a variable's __init__ attribute read."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get('__init__', '')
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, fill in (('weight', self._init_weight), ('bias', self._init_bias),
                             ('gamma', self._init_gamma), ('beta', self._init_beta),
                             ('min', self._init_zero), ('max', self._init_one)):
            if desc.endswith(suffix):
                fill(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        """init(str, NDArray): MXNet's older rules by name."""
        warnings.warn('Calling initializer with init(str, NDArray) has been deprecated. please '
                      'use init(mx.init.InitDesc(...), NDArray) instead.', DeprecationWarning,
                      stacklevel=3)
        if not isinstance(name, str):
            raise TypeError('name must be string')
        if not isinstance(arr, NDArray):
            raise TypeError('arr must be NDArray')
        if name.startswith('upsampling'):
            self._init_bilinear(name, arr)
        elif name.startswith('stn_loc') and name.endswith('weight'):
            self._init_zero(name, arr)
        elif name.startswith('stn_loc') and name.endswith('bias'):
            self._init_loc_bias(name, arr)
        else:
            for suffix, fill in (('bias', self._init_bias), ('gamma', self._init_gamma),
                                 ('beta', self._init_beta), ('weight', self._init_weight),
                                 ('moving_mean', self._init_zero),
                                 ('moving_var', self._init_one),
                                 ('moving_inv_var', self._init_zero),
                                 ('moving_avg', self._init_zero), ('min', self._init_zero),
                                 ('max', self._init_one)):
                if name.endswith(suffix):
                    fill(name, arr)
                    return
            self._init_default(name, arr)

    def _init_bilinear(self, _, arr):
        arr[:] = _bilinear(arr.shape)

    def _init_loc_bias(self, _, arr):
        if arr.shape[0] != 6:
            raise AssertionError('stn_loc bias must have 6 elements, got shape %s' % (arr.shape,))
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        raise NotImplementedError('Must override it')

    def _init_default(self, name, _):
        raise ValueError('Unknown initialization pattern for %s. Default initialization is now '
                         'limited to "weight", "bias", "gamma" (1.0), and "beta" (0.0).Please '
                         'use mx.sym.Variable(init=mx.init.*) to set initialization pattern'
                         % name)

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__


def _bilinear(shape):
    """An upsampling kernel (Bilinear, 'upsampling*' names) for a 4-d weight."""
    weight = np.zeros(int(np.prod(shape)), dtype='float32')
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(int(np.prod(shape))):
        x = i % shape[3]
        y = i // shape[3] % shape[2]
        weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    return weight.reshape(shape)


def register(klass, name=None):
    """Registers an Initializer subclass for create() under its lower-cased name."""
    if not isinstance(klass, type) or not issubclass(klass, Initializer):
        raise AssertionError('Can only register subclass of Initializer')
    name = (name or klass.__name__).lower()
    if name in _REGISTRY:
        warnings.warn('New initializer %s.%s registered with name %s is overriding existing '
                      'initializer %s.%s' % (klass.__module__, klass.__name__, name,
                                             _REGISTRY[name].__module__,
                                             _REGISTRY[name].__name__), UserWarning,
                      stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Registers a class under more names."""
    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def create(*args, **kwargs):
    """An initializer from an instance, a registered name (with its arguments), a dict, or the
    JSON text of dumps()."""
    if args:
        name, args = args[0], args[1:]
    elif 'initializer' in kwargs:
        name = kwargs.pop('initializer')
    else:
        raise TypeError('create: expected an initializer or its name')
    if isinstance(name, Initializer):
        if args or kwargs:
            raise AssertionError('initializer is already an instance. Additional arguments are '
                                 'invalid')
        return name
    if isinstance(name, dict):
        return create(**name)
    if not isinstance(name, str):
        raise AssertionError('initializer must be of string type')
    if name.startswith('['):
        if args or kwargs:
            raise AssertionError('create: no arguments beside a JSON initializer')
        name, kwargs = json.loads(name)
        return create(name, **kwargs)
    if name.startswith('{'):
        if args or kwargs:
            raise AssertionError('create: no arguments beside a JSON initializer')
        return create(**json.loads(name))
    if name.lower() not in _REGISTRY:
        raise ValueError('Cannot find initializer %s. Valid names: %s'
                         % (name, ', '.join(sorted(_REGISTRY))))
    return _REGISTRY[name.lower()](*args, **kwargs)


class Load(object):
    """Fills arrays from a dict or a .params file ('arg:'/'aux:' prefixes dropped), others with
    default_init."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            param = load(param)
        if not isinstance(param, dict):
            raise AssertionError('Load: expected a dict of arrays or a .params file of named '
                                 'arrays')
        self.param = {(k[4:] if k.startswith(('arg:', 'aux:')) else k): v
                      for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            if arr.shape != self.param[name].shape:
                raise AssertionError('Parameter %s cannot be initialized from loading. Shape '
                                     'mismatch, target %s vs loaded %s'
                                     % (name, arr.shape, self.param[name].shape))
            arr[:] = self.param[name]
            if self.verbose:
                logging.info('Initialized %s by loading', name)
        else:
            if self.default_init is None:
                raise AssertionError('Cannot Initialize %s. Not found in loaded param and no '
                                     'default Initializer is provided.' % name)
            self.default_init(name, arr)
            if self.verbose:
                logging.info('Initialized %s by default', name)


class Mixed(object):
    """The first initializer whose regex pattern matches the name."""

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise AssertionError('Mixed: %d patterns for %d initializers'
                                 % (len(patterns), len(initializers)))
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError('Parameter name %s did not match any pattern. Consider add a ".*" '
                         'pattern at the and with default Initializer.' % name)


@register
@alias('zeros')
class Zero(Initializer):
    def __init__(self):
        super(Zero, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias('ones')
class One(Initializer):
    def __init__(self):
        super(One, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Every element `value` (a scalar or an array broadcast to the weight)."""

    def __init__(self, value):
        super(Constant, self).__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        value = self._kwargs['value']
        if not np.isscalar(value):
            self._kwargs['value'] = value.tolist() if isinstance(value, np.ndarray) else \
                value.asnumpy().tolist()
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale=0.07):
        super(Uniform, self).__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        random.uniform(-self.scale, self.scale, arr.shape, out=arr)


@register
class Normal(Initializer):
    """N(0, sigma²)."""

    def __init__(self, sigma=0.01):
        super(Normal, self).__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        random.normal(0, self.sigma, arr.shape, out=arr)


@register
class Orthogonal(Initializer):
    """An orthogonal matrix (of the rows or columns of a random one) times scale."""

    def __init__(self, scale=1.414, rand_type='uniform'):
        super(Orthogonal, self).__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        if self.rand_type == 'uniform':
            tmp = random.uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        elif self.rand_type == 'normal':
            tmp = random.normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            raise ValueError("Orthogonal: rand_type must be 'uniform' or 'normal', got %r"
                             % (self.rand_type,))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = self.scale * res.reshape(arr.shape)


@register
class Xavier(Initializer):
    """Uniform or gaussian with variance magnitude / factor, factor the average of fan-in and
    fan-out (or either): the rule optimizer/initializer.cc applies for cohort-train."""

    def __init__(self, rnd_type='uniform', factor_type='avg', magnitude=3):
        super(Xavier, self).__init__(rnd_type=rnd_type, factor_type=factor_type,
                                     magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError('Xavier initializer cannot be applied to vector {0}. It requires at '
                             'least 2D.'.format(name))
        hw_scale = np.prod(shape[2:]) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factors = {'avg': (fan_in + fan_out) / 2.0, 'in': fan_in, 'out': fan_out}
        if self.factor_type not in factors:
            raise ValueError('Incorrect factor type')
        scale = np.sqrt(self.magnitude / factors[self.factor_type])
        if self.rnd_type == 'uniform':
            random.uniform(-scale, scale, arr.shape, out=arr)
        elif self.rnd_type == 'gaussian':
            random.normal(0, scale, arr.shape, out=arr)
        else:
            raise ValueError('Unknown random type')


@register
class MSRAPrelu(Xavier):
    """He et al.'s initialisation for PReLU networks: gaussian, magnitude 2 / (1 + slope²)."""

    def __init__(self, factor_type='avg', slope=0.25):
        super(MSRAPrelu, self).__init__('gaussian', factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {'factor_type': factor_type, 'slope': slope}


@register
class Bilinear(Initializer):
    """A bilinear upsampling kernel."""

    def __init__(self):
        super(Bilinear, self).__init__()

    def _init_weight(self, _, arr):
        arr[:] = _bilinear(arr.shape)


@register
class LSTMBias(Initializer):
    """Zeros, with the forget gate's quarter at forget_bias."""

    def __init__(self, forget_bias=1.0):
        super(LSTMBias, self).__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias
