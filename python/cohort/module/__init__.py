"""MXNet 1.x's mxnet.module (`mx.mod`): Module and BaseModule."""
from .base_module import BaseModule
from .module import Module

__all__ = ['BaseModule', 'Module']
