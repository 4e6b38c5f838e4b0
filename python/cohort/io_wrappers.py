"""MXNet 1.x's iterator wrappers, over any DataIter (C++ ones and Python subclasses alike):
ResizeIter (a fixed number of batches an epoch) and PrefetchingIter (each wrapped iterator's
next batch made by a thread of its own while the current one is used). Their behaviour is
MXNet 1.9.1's, names and keywords included."""
import threading

from .io import DataBatch, DataDesc, DataIter


class _ServesCurrentBatch(DataIter):
    """The DataIter getters of a wrapper that keeps its batch in self.current_batch."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_ServesCurrentBatch):
    """`size` batches an epoch from `data_iter`, starting it again when it runs out (and at
    reset, when reset_internal)."""

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__()
        if not isinstance(data_iter, DataIter):
            raise TypeError('ResizeIter: data_iter must be a DataIter, got %s'
                            % type(data_iter).__name__)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ValueError('ResizeIter: size must be an int >= 0, got %r' % (size,))
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, 'default_bucket_key'):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


class PrefetchingIter(_ServesCurrentBatch):
    """The batches of `iters` (one DataIter or a list, read in step), each made ahead by a
    thread; rename_data / rename_label map each iterator's names ({'data': 'data_1'}). A batch
    joins the iterators' data and labels in order."""

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        if not iters or not all(isinstance(i, DataIter) for i in iters):
            raise TypeError('PrefetchingIter: iters must be a DataIter or a non-empty list of '
                            'them')
        for what, rename in (('rename_data', rename_data), ('rename_label', rename_label)):
            if rename is not None and (not isinstance(rename, list) or len(rename) != len(iters)
                                       or not all(isinstance(r, dict) for r in rename)):
                raise TypeError('PrefetchingIter: %s must be a list of one dict per iterator'
                                % what)
        self.n_iter = len(iters)
        self.iters = iters
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in range(self.n_iter)]
        self.data_taken = [threading.Event() for _ in range(self.n_iter)]
        for event in self.data_taken:
            event.set()
        self.started = True
        self.current_batch = None
        self.next_batch = [None] * self.n_iter
        self.errors = [None] * self.n_iter
        self.prefetch_threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True)
                                 for i in range(self.n_iter)]
        for thread in self.prefetch_threads:
            thread.start()

    def _prefetch(self, i):
        while True:
            self.data_taken[i].wait()
            if not self.started:
                break
            try:
                self.next_batch[i] = self.iters[i].next()
            except StopIteration:
                self.next_batch[i] = None
            except Exception as e:  # raised again where the batch is asked for
                self.next_batch[i], self.errors[i] = None, e
            self.data_taken[i].clear()
            self.data_ready[i].set()

    def __del__(self):
        self.started = False
        for event in getattr(self, 'data_taken', []):
            event.set()
        for thread in getattr(self, 'prefetch_threads', []):
            thread.join()

    def _renamed(self, descs_of, rename):
        if rename is None:
            return sum([descs_of(i) for i in self.iters], [])
        return sum([[DataDesc(r[x.name], x.shape, x.dtype) if isinstance(x, DataDesc)
                     else DataDesc(*x) for x in descs_of(i)]
                    for r, i in zip(rename, self.iters)], [])

    @property
    def provide_data(self):
        return self._renamed(lambda i: i.provide_data, self.rename_data)

    @property
    def provide_label(self):
        return self._renamed(lambda i: i.provide_label, self.rename_label)

    def reset(self):
        for event in self.data_ready:
            event.wait()
        for it in self.iters:
            it.reset()
        self.errors = [None] * self.n_iter
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()

    def iter_next(self):
        for event in self.data_ready:
            event.wait()
        for error in self.errors:
            if error is not None:
                raise error
        if self.next_batch[0] is None:
            if any(b is not None for b in self.next_batch):
                raise ValueError('PrefetchingIter: the iterators have different numbers of '
                                 'batches')
            return False
        if any(b is None or b.pad != self.next_batch[0].pad for b in self.next_batch):
            raise ValueError('PrefetchingIter: the iterators have different numbers of entries')
        self.current_batch = DataBatch(sum([b.data for b in self.next_batch], []),
                                       sum([b.label for b in self.next_batch], []),
                                       self.next_batch[0].pad, self.next_batch[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration
