"""cohort.contrib: MXNet 1.x's contrib parts Cohort has (amp: mixed precision)."""
from . import amp

__all__ = ['amp']
