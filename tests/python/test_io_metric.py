"""cohort.io and cohort.metric: MXNet 1.9.1's values (printed by MXNet on the same inputs),
NDArrayIter's batching, a Python DataIter, CSV and MNIST files."""
import math
import os

import numpy as np
import pytest

import cohort as mx

PREDS = [mx.nd.array([[0.3, 0.7], [0.6, 0.4], [0.2, 0.8], [0.9, 0.1]])]
LABELS = [mx.nd.array([1, 1, 0, 0])]


@pytest.mark.parametrize('name,kwargs,expected', [
    # mx.metric.create(name, **kwargs).update(LABELS, PREDS).get() in MXNet 1.9.1
    ('acc', {}, ('accuracy', 0.5)),
    ('top_k_accuracy', {'top_k': 2}, ('top_k_accuracy_2', 1.0)),
    ('f1', {}, ('f1', 0.5)),
    ('mcc', {}, ('mcc', 0.0)),
    ('ce', {}, ('cross-entropy', 0.7469410300254822)),
    ('nll_loss', {}, ('nll-loss', 0.7469410300254822)),
    ('perplexity', {'ignore_label': None}, ('perplexity', 2.110534071733404)),
])
def test_classification_metrics_equal_mxnet(name, kwargs, expected):
    m = mx.metric.create(name, **kwargs)
    assert math.isnan(m.get()[1])
    m.update(LABELS, PREDS)
    assert m.get()[0] == expected[0]
    assert m.get()[1] == pytest.approx(expected[1], rel=1e-6)


@pytest.mark.parametrize('name,expected', [
    ('mae', 0.5), ('mse', 0.375), ('rmse', 0.6123724579811096), ('pearsonr', 0.9848696184482703)])
def test_regression_metrics_equal_mxnet(name, expected):
    m = mx.metric.create(name)
    m.update([mx.nd.array([[2.5], [0.0], [2.0], [8.0]])], [mx.nd.array([[3.0], [-0.5], [2.0],
                                                                         [7.0]])])
    assert m.get() == (name, pytest.approx(expected, rel=1e-6))


def test_composite_loss_custom_and_global_stats():
    m = mx.metric.create(['acc', 'f1'])
    m.update(LABELS, PREDS)
    assert m.get() == (['accuracy', 'f1'], [0.5, 0.5])
    loss = mx.metric.Loss()
    loss.update(None, [mx.nd.array([1.0, 2.0, 4.0])])
    assert loss.get() == ('loss', pytest.approx(2.3333333333333335))
    acc = mx.metric.Accuracy()
    acc.update(LABELS, PREDS)
    acc.reset_local()
    acc.update(LABELS, PREDS)
    assert acc.get() == ('accuracy', 0.5) and acc.get_global() == ('accuracy', 0.5)
    assert (acc.num_inst, acc.global_num_inst, acc.sum_metric) == (4, 8, 2.0)
    custom = mx.metric.create(lambda label, pred: float(np.abs(label - pred.argmax(1)).sum()))
    custom.update(LABELS, PREDS)
    assert custom.name == 'custom(<lambda>)' and custom.get()[1] == 2.0
    assert mx.metric.create(mx.metric.Accuracy().get_config()).name == 'accuracy'
    with pytest.raises(ValueError):
        mx.metric.create('no such metric')
    with pytest.raises(ValueError):
        mx.metric.Accuracy().update(LABELS, PREDS + PREDS)


def test_a_python_metric_subclass():
    class Count(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__('count')

        def update(self, labels, preds):
            self.sum_metric += sum(p.shape[0] for p in preds)
            self.num_inst += 1

    c = Count()
    c.update(LABELS, PREDS)
    assert c.get() == ('count', 4.0) and c.get_name_value() == [('count', 4.0)]


def test_ndarray_iter_pads_discards_and_rolls_over():
    x = np.arange(10 * 3, dtype='f').reshape(10, 3)
    y = np.arange(10, dtype='f')
    it = mx.io.NDArrayIter(x, y, batch_size=4)
    assert it.provide_data[0].name == 'data' and it.provide_data[0].shape == (4, 3)
    assert it.provide_label[0].name == 'softmax_label'
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 2]
    np.testing.assert_array_equal(batches[2].label[0].asnumpy(), [8, 9, 0, 1])  # padded
    np.testing.assert_array_equal(batches[0].data[0].asnumpy(), x[:4])  # kept batches stay put
    assert str(batches[0]) == 'DataBatch: data shapes: [(4, 3)] label shapes: [(4,)]'
    it.reset()
    assert len(list(it)) == 3
    assert len(list(mx.io.NDArrayIter(x, y, batch_size=4, last_batch_handle='discard'))) == 2
    shuffled = mx.io.NDArrayIter({'a': x}, {'lab': y}, batch_size=5, shuffle=True)
    seen = []
    for b in shuffled:
        np.testing.assert_array_equal(b.data[0].asnumpy()[:, 0] / 3, b.label[0].asnumpy())
        seen.extend(b.label[0].asnumpy().tolist())
    assert sorted(seen) == list(range(10))
    assert mx.io.NDArrayIter(x, batch_size=2).provide_label == []
    with pytest.raises(ValueError):
        mx.io.NDArrayIter(x, y[:5], batch_size=2)
    with pytest.raises(ValueError):
        mx.io.NDArrayIter(x, y, batch_size=2, last_batch_handle='wrap')


def test_python_data_iter():
    class Twice(mx.io.DataIter):
        def __init__(self):
            super().__init__(batch_size=2)
            self.count = 0

        def iter_next(self):
            self.count += 1
            return self.count <= 2

        def getdata(self):
            return [mx.nd.ones((2, 3)) * self.count]

        def getlabel(self):
            return [mx.nd.zeros(2)]

        def getpad(self):
            return 0

    batches = list(Twice())
    assert len(batches) == 2 and batches[1].data[0].asnumpy()[0, 0] == 2


def test_csv_iter(tmp_path):
    data = tmp_path / 'x.csv'
    label = tmp_path / 'y.csv'
    data.write_text('1,2\n3,4\n5,6\n')
    label.write_text('0\n1\n0\n')
    it = mx.io.CSVIter(data_csv=str(data), data_shape=(2,), label_csv=str(label), batch_size=2)
    batches = list(it)
    np.testing.assert_array_equal(batches[0].data[0].asnumpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(batches[1].label[0].asnumpy(), [0, 0])
    assert batches[1].pad == 1
    with pytest.raises(mx.MXNetError):
        mx.io.CSVIter(data_csv=str(tmp_path / 'none.csv'), data_shape=(2,), batch_size=2)


FMNIST = '/usr/share/datasets/fashion-mnist'


@pytest.mark.skipif(not os.path.exists(FMNIST), reason='dataset-fashion-mnist not installed')
def test_mnist_iter_reads_fashion_mnist():
    it = mx.io.MNISTIter(image=FMNIST + '/t10k-images-idx3-ubyte.gz',
                         label=FMNIST + '/t10k-labels-idx1-ubyte.gz', batch_size=100,
                         shuffle=False, flat=True)
    b = next(iter(it))
    assert b.data[0].shape == (100, 784) and b.label[0].shape == (100,)
    assert 0 <= b.data[0].asnumpy().min() and b.data[0].asnumpy().max() < 1


@pytest.mark.skipif(not os.path.exists(FMNIST), reason='dataset-fashion-mnist not installed')
def test_mnist_iter_parts_and_prefetch_as_mxnet():
    def labels(**kwargs):
        it = mx.io.MNISTIter(image=FMNIST + '/t10k-images-idx3-ubyte.gz',
                             label=FMNIST + '/t10k-labels-idx1-ubyte.gz', batch_size=500,
                             shuffle=False, **kwargs)
        out = np.concatenate([b.label[0].asnumpy() for b in it])
        it.reset()  # a second epoch (prefetched again) gives the same
        np.testing.assert_array_equal(np.concatenate([b.label[0].asnumpy() for b in it]), out)
        return out
    whole = labels(prefetch_buffer=0)
    assert whole.shape == (10000,)
    np.testing.assert_array_equal(labels(), whole)  # prefetch_buffer=4, MXNet's default
    # Two parts: contiguous halves, one per worker.
    np.testing.assert_array_equal(labels(num_parts=2, part_index=0), whole[:5000])
    np.testing.assert_array_equal(labels(num_parts=2, part_index=1, prefetch_buffer=2),
                                  whole[5000:])
    with pytest.raises(ValueError, match='part_index 2 of num_parts 2'):
        labels(num_parts=2, part_index=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_part'.*'num_parts'"):
        labels(num_part=2)


def test_resize_iter_as_mxnet():
    it = mx.io.NDArrayIter(np.arange(40, dtype='f').reshape(10, 4), np.arange(10, dtype='f'),
                           batch_size=4)  # 3 batches, the last padded
    resized = mx.io.ResizeIter(it, 5)
    firsts = [b.data[0].asnumpy()[0, 0] for b in resized]
    # Wraps around after 3 batches: MXNet 1.9.1 gives the same.
    assert firsts == [0, 16, 32, 0, 16]
    assert resized.provide_data == it.provide_data and resized.batch_size == 4
    resized.reset()
    assert next(resized).data[0].asnumpy()[0, 0] == 0
    with pytest.raises(TypeError):
        mx.io.ResizeIter([1, 2], 3)


def test_prefetching_iter_joins_and_renames():
    a = mx.io.NDArrayIter({'data': np.arange(12, dtype='f').reshape(6, 2)}, batch_size=3)
    b = mx.io.NDArrayIter({'data': -np.arange(12, dtype='f').reshape(6, 2)}, batch_size=3)
    p = mx.io.PrefetchingIter([a, b], rename_data=[{'data': 'data_1'}, {'data': 'data_2'}])
    assert [d.name for d in p.provide_data] == ['data_1', 'data_2']
    assert p.batch_size == 3
    for epoch in range(2):
        batches = list(p)
        assert len(batches) == 2
        np.testing.assert_array_equal(batches[1].data[0].asnumpy(), [[6, 7], [8, 9], [10, 11]])
        np.testing.assert_array_equal(batches[1].data[1].asnumpy(),
                                      -np.array([[6, 7], [8, 9], [10, 11]]))
        p.reset()

    class Failing(mx.io.DataIter):
        provide_data = [mx.io.DataDesc('data', (2, 2))]
        provide_label = []

        def next(self):
            raise RuntimeError('disk gone')

    with pytest.raises(RuntimeError, match='disk gone'):
        next(mx.io.PrefetchingIter(Failing()))


def test_image_record_iter_serves_mxnets_batches(data_dir):
    """The batches MXNet 1.9.1's ImageRecordIter served for the same keywords
    (scripts/make_mxnet_image_record_fixture.py)."""
    folder = os.path.join(data_dir, 'image_records')
    expected = mx.nd.load(os.path.join(folder, 'expected.params'))
    it = mx.io.ImageRecordIter(path_imgrec=os.path.join(folder, 'png.rec'), data_shape=(3, 12, 12),
                               batch_size=4, mean_r=10, mean_g=20, mean_b=30, std_r=2, std_g=3,
                               std_b=4, scale=0.5, shuffle=False, preprocess_threads=1,
                               prefetch_buffer=1, label_name='label')
    assert [d.name for d in it.provide_label] == ['label']
    batches = list(it)
    assert len(batches) == 2
    for b, batch in enumerate(batches):
        np.testing.assert_allclose(batch.data[0].asnumpy(),
                                   expected['center_data_b%d' % b].asnumpy(), atol=1e-4)
        np.testing.assert_array_equal(batch.label[0].asnumpy(),
                                      expected['center_label_b%d' % b].asnumpy())
        assert batch.pad == expected['center_pad_b%d' % b].asscalar()
    # MXNet ignores keywords it does not know (its own test_Cifar10Rec passes `and_mirror`);
    # Cohort ignores them too, and says so.
    with pytest.warns(UserWarning, match='frobnicate'):
        mx.io.ImageRecordIter(path_imgrec=os.path.join(folder, 'png.rec'),
                              data_shape=(3, 12, 12), batch_size=2, frobnicate=1)
    with pytest.raises(ValueError, match='brightness'):
        mx.io.ImageRecordIter(path_imgrec=os.path.join(folder, 'png.rec'),
                              data_shape=(3, 12, 12), batch_size=2, brightness=0.3)
    with pytest.raises(ValueError, match='pad'):
        mx.io.ImageRecordIter(path_imgrec=os.path.join(folder, 'png.rec'),
                              data_shape=(3, 12, 12), batch_size=2, pad=4)
    with pytest.raises(mx.MXNetError, match='nothing.rec'):
        mx.io.ImageRecordIter(path_imgrec=os.path.join(folder, 'nothing.rec'),
                              data_shape=(3, 12, 12), batch_size=2)
    # Cohort's decode budget (Note [Decode budget]) reaches the C++ iterator.
    with pytest.raises(mx.MXNetError, match='decode_budget_mb must be >= 1, got 0'):
        mx.io.ImageRecordIter(path_imgrec=os.path.join(folder, 'png.rec'),
                              data_shape=(3, 12, 12), batch_size=2, decode_budget_mb=0)


def _confusion_batch(cm):
    labels, preds = [], []
    for i, row in enumerate(cm):
        for j, count in enumerate(row):
            labels += [i] * count
            preds += [np.identity(len(cm))[j]] * count
    return [mx.nd.array(labels, dtype='int32')], [mx.nd.array(preds)]


GCIDE = '/usr/share/dictd/gcide.dict.dz'


@pytest.mark.skipif(not os.path.exists(GCIDE), reason='dict-gcide not installed')
def test_text_iter_reads_the_data_sections_declaration():
    """TextIter's keywords are cohort-train's text data keys: bucketed lines with their length
    as bucket_key, labels the next byte and -1 where padded; a validation split; a misspelt key
    named with the closest one; a setting the declaration refuses."""
    keys = dict(train_files=GCIDE, val_fraction=0.01, buckets=[16, 64], seq_len=64, seed=3)
    train = mx.io.TextIter(8, batches_per_epoch=4, **keys)
    assert train.default_bucket_key == 64
    assert [d.shape for d in train.provide_data] == [(8, 64)]
    batches = list(train)
    assert len(batches) == 4
    for b in batches:
        data, label = b.data[0].asnumpy(), b.label[0].asnumpy()
        assert b.bucket_key in (16, 64) and data.shape == (8, b.bucket_key)
        for row, labels in zip(data, label):
            n = int((labels != -1).sum())  # the line and its newline
            assert 0 < n <= b.bucket_key and (labels[n:] == -1).all()
            assert labels[n - 1] == 10 and (labels[:n - 1] == row[1:n]).all()
    val = mx.io.TextIter(8, split='val', val_batches=2, **keys)
    assert sum(1 for _ in val) == 2
    with pytest.raises(TypeError, match="'bucket' .*did you mean 'buckets'"):
        mx.io.TextIter(8, train_files=GCIDE, bucket=[16])
    with pytest.raises(ValueError, match="split='val' needs validation text"):
        mx.io.TextIter(8, split='val', train_files=GCIDE)
    with pytest.raises(mx.base.MXNetError, match='largest bucket 256 exceeds model.seq_len 64'):
        mx.io.TextIter(8, train_files=GCIDE, buckets=[256], seq_len=64)
    with pytest.raises(TypeError, match='buckets'):
        mx.io.TextIter(8, train_files=GCIDE, buckets='16')


def test_contrib_operators_without_their_prefix():
    x = mx.nd.ones((2, 5))
    np.testing.assert_array_equal(mx.nd.contrib.arange_like(x, axis=1).asnumpy(), np.arange(5))
    y = mx.sym.contrib.arange_like(mx.sym.var('x'), axis=1)
    out = y.eval(x=x)[0]
    np.testing.assert_array_equal(out.asnumpy(), np.arange(5))


def test_pcc_equals_mxnet_and_grows_with_the_classes():
    # Values printed by MXNet 1.9.1 for the same batches (mx.metric.create('pcc')).
    m = mx.metric.create('pcc')
    assert isinstance(m, mx.metric.PCC)
    m.update(*_confusion_batch([[7, 3], [2, 5]]))
    assert m.get() == ('pcc', pytest.approx(0.408491223118783, rel=1e-12))
    m.update(*_confusion_batch([[3, 1, 0], [0, 4, 2], [1, 0, 6]]))
    assert m.get()[1] == pytest.approx(0.592265043578376, rel=1e-12) and m.num_inst == 2
    m.reset_local()
    m.update(*_confusion_batch([[1, 2], [3, 4]]))
    assert m.get()[1] == pytest.approx(-0.0890870806374748, rel=1e-12)
    assert m.get_global()[1] == pytest.approx(0.4917597210371932, rel=1e-12)


def test_native_metrics_deepcopy_and_pickle_with_their_sums():
    import copy
    import pickle
    m = mx.metric.create('f1', average='micro')
    m.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])])
    m.reset_local()
    m.update([mx.nd.array([1])], [mx.nd.array([[0.1, 0.9]])])
    for twin in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert twin.get() == m.get() and twin.get_global() == m.get_global()
        twin.update([mx.nd.array([0])], [mx.nd.array([[0.1, 0.9]])])
        assert twin.get() != m.get()  # its own C++ metric, not m's


def test_csv_iter_reads_integers_exactly(tmp_path):
    for dtype, value in (('int32', 200000001), ('int64', 2 ** 40 + 1), ('float32', 1.5)):
        data, label = tmp_path / 'data.csv', tmp_path / 'label.csv'
        data.write_text('\n'.join([','.join([str(value)] * 4)] * 6) + '\n')
        label.write_text('\n'.join(['3'] * 6) + '\n')
        it = mx.io.CSVIter(data_csv=str(data), data_shape=(2, 2), label_csv=str(label),
                           batch_size=3, dtype=dtype)
        batch = next(iter(it))
        assert it.getdata() is batch.data[0]  # MXNet's C++ iterators give the first array
        assert batch.data[0].dtype == np.dtype(dtype) and batch.label[0].dtype == np.dtype(dtype)
        assert (batch.data[0].asnumpy() == np.array(value, dtype=dtype)).all()
    data.write_text('1.5,2,3,4\n')
    with pytest.raises(mx.MXNetError, match=r"line 1, field 1: '1.5' is not an integer"):
        mx.io.CSVIter(data_csv=str(data), data_shape=(2, 2), batch_size=1, dtype='int32')
    with pytest.raises(ValueError, match='float32, int32 or int64'):
        mx.io.CSVIter(data_csv=str(data), data_shape=(2, 2), batch_size=1, dtype='float16')


def test_ndarray_iter_idx_is_the_order_served():
    np.random.seed(3)
    data = np.arange(10, dtype='float32').reshape(10, 1)
    it = mx.io.NDArrayIter(data, batch_size=1, shuffle=True)
    order = list(it.idx)
    assert sorted(order) == list(range(10)) and order != list(range(10))
    assert [int(b.data[0].asnumpy()[0, 0]) for b in it] == order
    assert list(mx.io.NDArrayIter(data, batch_size=2).idx) == list(range(10))


def _image_batches(folder, **kwargs):
    it = mx.io.ImageRecordIter(path_imgrec=os.path.join(folder, 'png.rec'), data_shape=(3, 12, 12),
                               batch_size=4, shuffle=False, preprocess_threads=2, **kwargs)
    return np.concatenate([b.data[0].asnumpy() for b in it])


AUGMENTERS = dict(rand_crop=True, rand_mirror=True, max_random_scale=1.3,
                  max_random_illumination=3, max_rotate_angle=10, random_l=50, random_s=40,
                  random_h=10, max_shear_ratio=0.5)


def test_image_augmenters_follow_seed_aug(data_dir):
    folder = os.path.join(data_dir, 'image_records')
    plain = _image_batches(folder)
    first = _image_batches(folder, seed_aug=3, **AUGMENTERS)
    assert np.array_equal(first, _image_batches(folder, seed_aug=3, **AUGMENTERS))
    assert not np.array_equal(first, _image_batches(folder, seed_aug=4, **AUGMENTERS))
    assert not np.array_equal(first, plain)
    # A warp of angle 0, scale 1 and no shear is the identity: the plain batches exactly.
    assert np.array_equal(_image_batches(folder, rotate=0), plain)
    # Illumination alone shifts each image by one constant in [-3, 3].
    lit = _image_batches(folder, max_random_illumination=3, seed_aug=1) - plain
    per_image = lit.reshape(len(lit), -1)
    assert np.allclose(per_image, per_image[:, :1], atol=1e-4)
    assert np.abs(per_image).max() <= 3 and np.abs(per_image[:, 0]).min() < 3
    with pytest.raises(mx.MXNetError, match='max_shear_ratio'):
        _image_batches(folder, max_shear_ratio=-1)
    with pytest.raises(TypeError, match='random_h'):
        _image_batches(folder, random_h='lots')


def test_mean_img_is_computed_once_then_read(data_dir, tmp_path):
    folder = os.path.join(data_dir, 'image_records')
    mean_file = str(tmp_path / 'mean.bin')
    plain = _image_batches(folder)[:6]  # the 6 records (the last batch pads with 2 repeats)
    centred = _image_batches(folder, mean_img=mean_file)[:6]
    saved = mx.nd.load(mean_file)
    assert list(saved) == ['mean_img'] and saved['mean_img'].shape == (3, 12, 12)
    np.testing.assert_allclose(saved['mean_img'].asnumpy(), plain.mean(axis=0), rtol=1e-5)
    np.testing.assert_allclose(centred, plain - plain.mean(axis=0), atol=1e-4)
    mx.nd.save(mean_file, {'mean_img': mx.nd.ones((3, 12, 12))})  # read, not recomputed
    np.testing.assert_allclose(_image_batches(folder, mean_img=mean_file)[:6], plain - 1,
                               atol=1e-5)
    mx.nd.save(mean_file, {'mean_img': mx.nd.ones((3, 4, 4))})
    with pytest.raises(mx.MXNetError, match=r'mean_img .*expected an array .mean_img. of shape'):
        _image_batches(folder, mean_img=mean_file)


def test_mnist_iter_keeps_one_shuffled_order_as_mxnet():
    # MXNet's MNISTIter shuffles once: after reset the batches come in the same order.
    folder = '/usr/share/datasets/fashion-mnist'
    if not os.path.exists(folder):
        pytest.skip('dataset-fashion-mnist not installed')
    it = mx.io.MNISTIter(image=os.path.join(folder, 't10k-images-idx3-ubyte.gz'),
                         label=os.path.join(folder, 't10k-labels-idx1-ubyte.gz'),
                         batch_size=100, shuffle=True, flat=True, seed=10)
    it.iter_next()
    first = it.getlabel().asnumpy().copy()
    it.iter_next()
    it.reset()
    it.iter_next()
    assert np.array_equal(it.getlabel().asnumpy(), first)
    plain = mx.io.MNISTIter(image=os.path.join(folder, 't10k-images-idx3-ubyte.gz'),
                            label=os.path.join(folder, 't10k-labels-idx1-ubyte.gz'),
                            batch_size=100, shuffle=False, flat=True)
    plain.iter_next()
    assert not np.array_equal(plain.getlabel().asnumpy(), first)
