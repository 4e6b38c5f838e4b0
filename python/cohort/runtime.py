"""What this build of Cohort has (MXNet 1.x's mxnet.runtime): `Features()` maps MXNet's feature
names to `Feature`s; `is_enabled(name)` refuses a name MXNet does not know."""
import collections

from . import _cohort

__all__ = ['Feature', 'Features', 'feature_list']

# MXNet 1.9.1's feature names (include/mxnet/libinfo.h), in its order.
_NAMES = ['CUDA', 'CUDNN', 'NCCL', 'CUDA_RTC', 'TENSORRT', 'CPU_SSE', 'CPU_SSE2', 'CPU_SSE3',
          'CPU_SSE4_1', 'CPU_SSE4_2', 'CPU_SSE4A', 'CPU_AVX', 'CPU_AVX2', 'OPENMP', 'SSE', 'F16C',
          'JEMALLOC', 'BLAS_OPEN', 'BLAS_ATLAS', 'BLAS_MKL', 'BLAS_APPLE', 'LAPACK', 'MKLDNN',
          'OPENCV', 'CAFFE', 'PROFILER', 'DIST_KVSTORE', 'CXX14', 'INT64_TENSOR_SIZE',
          'SIGNAL_HANDLER', 'DEBUG', 'TVM_OP']


def _enabled():
    built = _cohort.build_features
    on = {
        'CUDA': built['CUDA'], 'CUDNN': built['CUDA'], 'NCCL': built['NCCL'],
        'CPU_SSE': True, 'CPU_SSE2': True, 'SSE': True,  # x86-64's baseline
        'MKLDNN': True,  # oneDNN runs the CPU's convolutions and GEMMs
        'DIST_KVSTORE': True,  # the mpi kvstore
        'CXX14': True, 'INT64_TENSOR_SIZE': True, 'SIGNAL_HANDLER': True,
        'DEBUG': built['DEBUG'],
    }
    return {name: bool(on.get(name, False)) for name in _NAMES}


class Feature:
    """One compile-time feature and whether this build has it."""

    def __init__(self, name, enabled):
        self.name = name
        self.enabled = enabled

    def __repr__(self):
        return '{} {}'.format('\u2714' if self.enabled else '\u2716', self.name)


def feature_list():
    return [Feature(name, enabled) for name, enabled in _enabled().items()]


class Features(collections.OrderedDict):
    """The build's features by name: `Features().is_enabled('CUDA')`."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            super().__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError('Feature \'{}\' is unknown, known features are: {}'.format(
                feature_name, list(self.keys())))
        return self[feature_name].enabled
