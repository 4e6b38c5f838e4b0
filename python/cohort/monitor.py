"""MXNet 1.x's mxnet.monitor (`mx.mon`): Monitor, statistics of the arrays a network computes,
every `interval` batches. Executors call it after each operator (Executor.set_monitor_callback,
Module.install_monitor through the manager's executors); toc adds the arguments and auxiliary
states of the executors installed one by one."""
import logging
import re
from math import sqrt

from . import ndarray
from .ndarray import NDArray

__all__ = ['Monitor']


class Monitor(object):
    """Collects stat_func(array) (default: norm / sqrt(size)) of the arrays whose names match
    `pattern`, on every interval-th batch between tic and toc."""

    def __init__(self, interval, stat_func=None, pattern='.*', sort=False, monitor_all=False):
        if stat_func is None:
            def asum_stat(x):
                return ndarray.norm(x) / sqrt(x.size)
            stat_func = asum_stat
        self.stat_func = stat_func
        self.monitor_all = monitor_all
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort

        def stat_helper(name, array):
            if not isinstance(array, NDArray):
                array = NDArray(array, writable=False)
            if self.activated and self.re_prog.match(name):
                self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Monitors an Executor's operator outputs (its inputs too with monitor_all)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Starts collecting when this batch is an interval-th one."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Ends the batch: [(step, name, the statistic as text)] (sorted by name with sort)."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, array in zip(exe._symbol.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe._symbol.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, values in self.queue:
            if isinstance(values, NDArray):
                values = [values]
            if not isinstance(values, list):
                raise AssertionError('Monitor: stat_func must return an NDArray or a list of them')
            text = ''
            for v in values:
                if not isinstance(v, NDArray):
                    raise AssertionError('Monitor: stat_func must return NDArrays')
                text += (str(v.asscalar()) if v.shape in ((1,), ()) else str(v.asnumpy())) + '\t'
            res.append((n, k, text))
        self.queue = []
        return res

    def toc_print(self):
        """toc, logged one line a statistic."""
        for n, k, v in self.toc():
            logging.info('Batch: {:7d} {:30s} {:s}'.format(n, k, v))
