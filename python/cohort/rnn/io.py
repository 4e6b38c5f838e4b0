"""Sentences to batches by length (MXNet 1.x's mx.rnn.io): encode_sentences makes word ids,
BucketSentenceIter serves batches whose bucket_key is their padded length, for a
BucketingModule."""
import bisect
import random

import numpy as np

from .. import ndarray
from ..io import DataBatch, DataDesc, DataIter

__all__ = ['encode_sentences', 'BucketSentenceIter']


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n', start_label=0,
                     unknown_token=None):
    """(each sentence as a list of ids, the vocabulary): a new vocabulary numbers words from
    start_label as they come (skipping invalid_label, which invalid_key holds); a given one maps
    a word it lacks to unknown_token, which it must then have, and refuses it otherwise."""
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    next_id = start_label
    encoded = []
    for sentence in sentences:
        ids = []
        for word in sentence:
            if word not in vocab:
                if not new_vocab and not unknown_token:
                    raise KeyError('encode_sentences: unknown token %r (give unknown_token)'
                                   % (word,))
                if next_id == invalid_label:
                    next_id += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = next_id
                next_id += 1
            ids.append(vocab[word])
        encoded.append(ids)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of `batch_size` sentences of one bucket (the shortest bucket length at least the
    sentence's; longer sentences are dropped, counted in a warning), padded with invalid_label;
    each label is its sentence shifted by one step. buckets: the lengths (None: every length
    with at least batch_size sentences). layout 'NT' (batch, time) or 'TN'. Batches come in a
    random order, reshuffled by reset."""

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name='data',
                 label_name='softmax_label', dtype='float32', layout='NT'):
        super(BucketSentenceIter, self).__init__(batch_size)
        if layout not in ('NT', 'TN'):
            raise ValueError('Invalid layout %s: Must by NT (batch major) or TN (time major)'
                             % layout)
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [length for length, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        self.data = [[] for _ in buckets]
        discarded = 0
        for sentence in sentences:
            b = bisect.bisect_left(buckets, len(sentence))
            if b == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[b],), invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            self.data[b].append(row)
        self.data = [np.asarray(rows, dtype=dtype).reshape(len(rows), length)
                     for rows, length in zip(self.data, buckets)]
        print('WARNING: discarded %d sentences longer than the largest bucket.' % discarded)
        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name, self.label_name = data_name, label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find('N')
        self.default_bucket_key = max(buckets)
        shape = (batch_size, self.default_bucket_key) if self.major_axis == 0 else \
            (self.default_bucket_key, batch_size)
        self.provide_data = [DataDesc(data_name, shape, layout=layout)]
        self.provide_label = [DataDesc(label_name, shape, layout=layout)]
        self.idx = [(b, start) for b, rows in enumerate(self.data)
                    for start in range(0, len(rows) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata, self.ndlabel = [], []
        self.reset()

    def reset(self):
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata, self.ndlabel = [], []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(rows, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        if self.curr_idx == len(self.idx):
            raise StopIteration
        b, start = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[b][start:start + self.batch_size]
        label = self.ndlabel[b][start:start + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[b],
                         provide_data=[DataDesc(self.data_name, data.shape, layout=self.layout)],
                         provide_label=[DataDesc(self.label_name, label.shape,
                                                 layout=self.layout)])
