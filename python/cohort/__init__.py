"""Cohort: data-parallel training on many devices, with MXNet 1.x's Python API
(`import cohort as mx`) on Cohort's C++ engine."""
from . import base
from .base import MXNetError
from . import context
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from . import name
from . import attribute
from .attribute import AttrScope
from . import ndarray
from . import ndarray as nd
from . import symbol
from . import symbol as sym
from . import executor
from . import random
from . import io
from . import metric
from . import executor_manager
from . import test_utils
from . import util
from .util import np_shape, is_np_shape, set_np_shape, use_np_shape
from . import autograd
from . import runtime
from . import optimizer
from . import lr_scheduler
from . import kvstore
from . import kvstore as kv
from . import initializer
from . import initializer as init
from . import model
from . import callback
from . import module
from . import module as mod
from . import monitor
from . import monitor as mon
from . import contrib
from . import gluon
from . import generation
from . import rnn

__version__ = '0.1.0'
