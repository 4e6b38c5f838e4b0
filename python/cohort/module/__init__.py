"""MXNet 1.x's mxnet.module (`mx.mod`): Module, BucketingModule and BaseModule, and the executor
group under them."""
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module

__all__ = ['BaseModule', 'BucketingModule', 'DataParallelExecutorGroup', 'Module']
