"""MXNet 1.x's gluon, the part Cohort has: gluon.loss's losses on NDArrays and Symbols (MXNet's
symbolic scripts and unit tests build losses with them). Blocks with parameters, Trainer and
data loading are not here: Cohort trains through Module and cohort-train."""
from . import loss
