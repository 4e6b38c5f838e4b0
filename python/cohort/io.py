"""Data iterators (MXNet 1.x's mxnet.io): DataDesc, DataBatch, the DataIter base class that
Python iterators subclass, and NDArrayIter, CSVIter and MNISTIter served by Cohort's C++
iterators (the same code as cohort-train's data), and Cohort's TextIter (cohort-train's text
data)."""
from collections import OrderedDict, namedtuple
import difflib
import warnings

import numpy as np

from . import _cohort
from .base import mx_real_t
from .util import keywords_checked
from .ndarray import NDArray
from .ndarray.ndarray import array

__all__ = ['DataDesc', 'DataBatch', 'DataIter', 'NDArrayIter', 'CSVIter', 'MNISTIter',
           'ImageRecordIter', 'TextIter', 'ResizeIter', 'PrefetchingIter']


class DataDesc(namedtuple('DataDesc', ['name', 'shape'])):
    """An input as an iterator provides it: (name, shape), with dtype and layout ('N' marks the
    batch axis)."""

    def __new__(cls, name, shape, dtype=mx_real_t, layout='NCHW'):
        ret = super(DataDesc, cls).__new__(cls, name, shape)
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return 'DataDesc[%s,%s,%s,%s]' % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        return 0 if layout is None else layout.find('N')

    @staticmethod
    def get_list(shapes, types):
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


def _desc(d):
    """A DataDesc, or a (name, shape) pair, as the C++ core takes it."""
    if isinstance(d, DataDesc):
        name, shape, dtype, layout = d.name, d.shape, d.dtype, d.layout
    else:
        name, shape = d[0], d[1]
        dtype, layout = mx_real_t, ''
    if not layout or len(layout) != len(shape) or 'N' not in layout:
        layout = ''
    return (name, tuple(shape), np.dtype(dtype).name, layout)


class DataBatch:
    """One batch: lists of data and label NDArrays, the pad at its end, sample indices, the
    bucket key, and the descriptions of the data and labels."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None:
            assert isinstance(data, (list, tuple)), 'Data must be list of NDArrays'
        if label is not None:
            assert isinstance(label, (list, tuple)), 'Label must be list of NDArrays'
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [l.shape for l in self.label] if self.label else None
        return '{}: data shapes: {} label shapes: {}'.format(self.__class__.__name__,
                                                             data_shapes, label_shapes)


class DataIter:
    """The base class of iterators: subclasses give iter_next, getdata, getlabel, getpad (and
    getindex), or override next; reset starts the next epoch."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        pass

    def next(self):
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        pass

    def getdata(self):
        pass

    def getlabel(self):
        pass

    def getindex(self):
        return None

    def getpad(self):
        pass


class _NativeIter(DataIter):
    """A DataIter served by one of the C++ core's iterators. Each batch's arrays are copies: the
    C++ iterator reuses its arrays for the next batch, and a batch kept must not change."""

    def __init__(self, handle, batch_size):
        super().__init__(batch_size)
        self._handle = handle
        self._batch = None

    @property
    def provide_data(self):
        return [DataDesc(n, tuple(s), np.dtype(t).type, l or 'NCHW')
                for n, s, t, l in self._handle.provide_data]

    @property
    def provide_label(self):
        return [DataDesc(n, tuple(s), np.dtype(t).type, l or 'NCHW')
                for n, s, t, l in self._handle.provide_label]

    def reset(self):
        self._handle.reset()
        self._batch = None

    def iter_next(self):
        if not self._handle.next():
            self._batch = None
            return False
        data, label, pad, index, bucket_key = self._handle.value()
        self._batch = DataBatch([NDArray(h).copy() for h in data],
                                [NDArray(h).copy() for h in label], pad=pad,
                                index=np.array(index, dtype=np.int64), bucket_key=bucket_key,
                                provide_data=self.provide_data, provide_label=self.provide_label)
        return True

    def next(self):
        if self.iter_next():
            return self._batch
        raise StopIteration

    # MXNet's C++-backed iterators (MXDataIter) give the first array; NDArrayIter a list.
    def getdata(self):
        return self._batch.data[0]

    def getlabel(self):
        return self._batch.label[0] if self._batch.label else None

    def getpad(self):
        return self._batch.pad

    def getindex(self):
        return self._batch.index


def _init_data(data, allow_empty, default_name):
    """MXNet's normalisation of iterator inputs: sorted (name, NDArray) pairs."""
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, list):
        if not allow_empty and not data:
            raise ValueError('%s: no arrays given' % default_name)
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([('_%d_%s' % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError('Input must be NDArray, numpy.ndarray, a list of them or dict with them '
                        'as values')
    out = OrderedDict()
    for k, v in data.items():
        if not isinstance(v, NDArray):
            try:
                v = array(v)
            except Exception:
                raise TypeError("Invalid type '%s' for %s, should be NDArray or numpy.ndarray"
                                % (type(v), k)) from None
        out[k] = v
    return list(sorted(out.items()))


class NDArrayIter(_NativeIter):
    """Batches of arrays held in memory (numpy or NDArray; one, a list or a dict), optionally
    shuffled each epoch; last_batch_handle 'pad', 'discard' or 'roll_over'."""

    @keywords_checked
    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle='pad',
                 data_name='data', label_name='softmax_label'):
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        num = {v.shape[0] for _, v in self.data + self.label}
        if len(num) != 1:
            raise ValueError('NDArrayIter: the arrays hold different numbers of samples: %s'
                             % sorted(num))
        if last_batch_handle not in ('pad', 'discard', 'roll_over'):
            raise ValueError("last_batch_handle: expected 'pad', 'discard' or 'roll_over', got "
                             "%r" % (last_batch_handle,))
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError('batch_size: expected an int >= 1, got %r' % (batch_size,))
        self.num_data = num.pop()
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        seed = int(np.random.randint(0, 2 ** 31)) if shuffle else 0  # np.random.seed decides
        handle = _cohort.ndarray_iter([(k, v.handle) for k, v in self.data],
                                      [(k, v.handle) for k, v in self.label], batch_size,
                                      bool(shuffle), seed, last_batch_handle)
        super().__init__(handle, batch_size)

    def getdata(self):
        return self._batch.data

    def getlabel(self):
        return self._batch.label

    @property
    def idx(self):
        """The samples' order this epoch (MXNet's NDArrayIter.idx): batch i serves
        idx[i * batch_size:(i + 1) * batch_size]."""
        return self._handle.order


class CSVIter(_NativeIter):
    """Rows of a CSV file as samples of data_shape, labels from label_csv (zeros without)."""

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=1,
                 round_batch=True, shuffle=False, seed=0, data_name='data',
                 label_name='softmax_label', dtype='float32', **kwargs):
        if np.dtype(dtype) not in (np.float32, np.int32, np.int64):
            raise ValueError('CSVIter: dtype %s; expected float32, int32 or int64' % dtype)
        handle = _cohort.csv_iter(data_csv, tuple(data_shape), label_csv or '',
                                  tuple(label_shape), batch_size, bool(shuffle), seed,
                                  'pad' if round_batch else 'discard', data_name, label_name,
                                  np.dtype(dtype).name)
        super().__init__(handle, batch_size)


class MNISTIter(_NativeIter):
    """MNIST-format IDX files (plain or gzip); pixels scaled by 1/256 as MXNet's. part_index of
    num_parts serves a contiguous share of the samples (one per worker); prefetch_buffer
    batches are made ahead on a thread of their own (0: none), as in MXNet. MXNet's shuffles
    once; Cohort's reshuffle_each_epoch=True (not in MXNet) shuffles again at every reset, as
    cohort-train's data does. sharding='global_batch' (not in MXNet) serves part_index's rows
    of every global batch of num_parts x batch_size instead of a contiguous part of the file:
    workers then train on the batches one process would (cohort-train's Note [Sharding])."""

    @keywords_checked
    def __init__(self, image='./train-images-idx3-ubyte', label='./train-labels-idx1-ubyte',
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, prefetch_buffer=4, ctx='gpu', dtype=None,
                 data_name='data', label_name='softmax_label', reshuffle_each_epoch=False,
                 sharding='parts'):
        if ctx not in ('cpu', 'gpu'):  # MXNet's: where batches are made; Cohort's are host's
            raise ValueError("MNISTIter: ctx must be 'cpu' or 'gpu', got %r" % (ctx,))
        if dtype not in (None, 'float32'):
            raise ValueError("MNISTIter: dtype %r: Cohort's MNISTIter makes float32 batches"
                             % (dtype,))
        handle = _cohort.mnist_iter(image, label, bool(flat), batch_size, bool(shuffle), seed,
                                    data_name, label_name, int(num_parts), int(part_index),
                                    int(prefetch_buffer), bool(reshuffle_each_epoch),
                                    str(sharding))
        super().__init__(handle, batch_size)


class ImageRecordIter(_NativeIter):
    """Images in MXNet's RecordIO (.rec, with its .idx when given): decoded, resized (shorter
    side to `resize`), cropped to data_shape (random with rand_crop, else centered), mirrored
    with rand_mirror, after MXNet's random warp and HSL jitter when asked, then ((pixel - mean)
    * contrast + illumination) / std * scale, the mean per channel or mean_img's per pixel, on
    preprocess_threads threads (Note [Image records] in io/image_record_iter.h). MXNet's
    keywords; an augmenter MXNet has and Cohort does not yet is an error naming it. A keyword
    MXNet does not know either is ignored, as MXNet ignores it, with a warning naming it.
    Cohort's decode_budget_mb (2048): the decoded pixels the decoding threads may hold at once;
    a larger image is a bad image (Note [Decode budget])."""

    # MXNet's random augmenters (Note [Image augmenters] in io/image_augment.h), with their
    # defaults; the ones Cohort has not (pad, crop sizes, interpolation) only at their "off"
    # value.
    _AUGMENTERS = {'max_rotate_angle': 0, 'rotate': -1, 'max_shear_ratio': 0,
                   'max_random_scale': 1, 'min_random_scale': 1, 'max_aspect_ratio': 0,
                   'max_img_size': 1e10, 'min_img_size': 0, 'fill_value': 255, 'random_h': 0,
                   'random_s': 0, 'random_l': 0, 'max_random_contrast': 0,
                   'max_random_illumination': 0}
    _NOT_YET = {'pad': 0, 'max_crop_size': -1, 'min_crop_size': -1, 'inter_method': 1,
                'path_imglist': '', 'aug_seq': 'aug_default', 'random_resized_crop': False,
                'min_aspect_ratio': None, 'max_random_area': 1, 'min_random_area': 1,
                'brightness': 0, 'contrast': 0, 'saturation': 0, 'pca_noise': 0,
                'mirror': False, 'mean_a': 0, 'std_a': 1}
    # Keywords that change nothing here (threads, buffers, logging, the image's dtype).
    _IGNORED = ('prefetch_buffer', 'verbose', 'dtype', 'ctx', 'shuffle_chunk_size',
                'shuffle_chunk_seed', 'num_parts_check', 'silent', 'device_id')

    def __init__(self, path_imgrec, data_shape, batch_size, path_imgidx='', label_width=1,
                 resize=-1, rand_crop=False, rand_mirror=False, mean_r=0.0, mean_g=0.0,
                 mean_b=0.0, std_r=1.0, std_g=1.0, std_b=1.0, scale=1.0, shuffle=False, seed=0,
                 round_batch=True, preprocess_threads=4, num_parts=1, part_index=0,
                 data_name='data', label_name='softmax_label', mean_img='', seed_aug=None,
                 decode_budget_mb=2048, **kwargs):
        augment = {}
        for key, value in kwargs.items():
            if key in self._AUGMENTERS:
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    raise TypeError('ImageRecordIter: %s must be a number, got %r'
                                    % (key, value))
                augment[key] = float(value)
            elif key in self._NOT_YET:
                if value != self._NOT_YET[key] and value is not None:
                    raise ValueError('ImageRecordIter: %s=%r is an augmenter Cohort does not '
                                     'have yet' % (key, value))
            elif key not in self._IGNORED:
                warnings.warn('ImageRecordIter: keyword %r is not one of MXNet\'s; ignored, as '
                              'MXNet ignores it' % key, stacklevel=2)
        if not isinstance(path_imgrec, str) or not isinstance(path_imgidx, str):
            raise TypeError('ImageRecordIter: path_imgrec and path_imgidx must be str')
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3:
            raise ValueError('ImageRecordIter: data_shape must be (channels, height, width), '
                             'got %r' % (data_shape,))
        handle = _cohort.image_record_iter(
            path_imgrec, path_imgidx, list(data_shape), int(batch_size), int(resize),
            bool(rand_crop), bool(rand_mirror), [float(mean_r), float(mean_g), float(mean_b)],
            [float(std_r), float(std_g), float(std_b)], float(scale), bool(shuffle), int(seed),
            int(label_width), int(preprocess_threads), bool(round_batch), int(num_parts),
            int(part_index), str(mean_img), -1 if seed_aug is None else int(seed_aug), augment,
            int(decode_budget_mb))
        self._names = {'data': data_name, 'softmax_label': label_name}
        super().__init__(handle, batch_size)

    @property
    def provide_data(self):
        return [DataDesc(self._names.get(d.name, d.name), d.shape, d.dtype, d.layout)
                for d in super().provide_data]

    @property
    def provide_label(self):
        return [DataDesc(self._names.get(d.name, d.name), d.shape, d.dtype, d.layout)
                for d in super().provide_label]


class TextIter(_NativeIter):
    """Cohort's (not in MXNet): byte-level language-model data, cohort-train's `data.kind: text`
    (Note [Text windows], Note [Text buckets] in io/text_iter.h). The keywords beyond the first
    ones are the data section's keys, read and checked by the declaration cohort-train's YAML
    uses (`cohort-train --help-config`): train_files (required), val_files, val_fraction,
    val_batches, stride, buckets, shuffle, prefetch, batches_per_epoch, last_batch_handle.

    split='train' serves the training text (windows of seq_len, or with `buckets` each line
    padded to the smallest bucket that holds it, labels -1 where padded, and the batch's
    bucket_key its length); split='val' the validation part (the last val_fraction of the text,
    or val_files), in order. num_parts/part_index: this worker's rows of every global batch, as
    cohort-train's workers read. vocab: refuse bytes at or above it (0: no check)."""

    def __init__(self, batch_size, split='train', seq_len=128, vocab=0, seed=0, num_parts=1,
                 part_index=0, **data_keys):
        if split not in ('train', 'val'):
            raise ValueError("TextIter: split must be 'train' or 'val', got %r" % (split,))
        declared = {key for key, _, _, _ in _cohort.data_kind_keys('text')} - {'kind'}
        for key in data_keys:
            if key not in declared:
                close = difflib.get_close_matches(key, sorted(declared), n=1)
                raise TypeError("TextIter() got an unexpected keyword argument '%s'%s; it takes "
                                "batch_size, split, seq_len, vocab, seed, num_parts, part_index "
                                "and the data keys %s" % (key, " (did you mean '%s'?)" % close[0]
                                                          if close else '',
                                                          ', '.join(sorted(declared))))
        train, val = _cohort.data_section_iters('text', data_keys, int(batch_size), int(seed),
                                                int(num_parts), int(part_index), int(seq_len),
                                                int(vocab), 'TextIter')
        if split == 'val' and val is None:
            raise ValueError("TextIter: split='val' needs validation text: give val_fraction or "
                             "val_files")
        buckets = data_keys.get('buckets') or []
        self.default_bucket_key = max(buckets) if buckets else None  # BucketSentenceIter's
        super().__init__(train if split == 'train' else val, batch_size)


# The wrappers over any DataIter (last: they build on the classes above).
from .io_wrappers import PrefetchingIter, ResizeIter  # noqa: E402,F401
