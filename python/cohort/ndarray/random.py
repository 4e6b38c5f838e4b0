"""mx.nd.random: the random samples of cohort.random as NDArray functions."""
from ..random import normal, uniform  # noqa: F401

__all__ = ['uniform', 'normal']
