// NDArrayIter.
#include "io/ndarray_iter.h"

#include <random>

#include "io/data_kinds.h"

namespace cohort {
namespace {

std::vector<BatchField> Fields(const NDArrayIter::NamedArrays& arrays) {
  std::vector<BatchField> out;
  for (const auto& [name, array] : arrays) {
    COHORT_CHECK(!array.is_none()) << "NDArrayIter: array '" << name << "' is none";
    // Arrays on a GPU are served from a host copy; host arrays are used in place.
    NDArray host = array.ctx().is_host() ? array : array.CopyTo(Context::CPU());
    out.push_back({name, host, array.dtype(), 1.0f});
  }
  return out;
}

}  // namespace

NDArrayIter::NDArrayIter(const NamedArrays& data, const NamedArrays& label,
                         const BatchOptions& options) {
  batcher_ = std::make_unique<Batcher>(Fields(data), Fields(label), options);
}

// data.kind: synthetic (Note [Data kinds]): class c has its mean at +2 on features c, c+C, ...;
// unit noise. Generated from the seed, in memory.
namespace {
struct SyntheticKeys {
  std::vector<int64_t> shape = {1, 28, 28};
  int64_t num_classes = 10;
  int64_t num_samples = 4096;
  int64_t val_samples = 1024;

  static const OptionTable<SyntheticKeys>& Table() {
    using K = SyntheticKeys;
    static const OptionTable<K> table = [] {
      OptionTable<K> t("data");
      t.Field("shape", &K::shape, "the shape of a sample")
          .Field("num_classes", &K::num_classes, "classes", 1, kMaxDataCount)
          .Field("num_samples", &K::num_samples, "training samples", 1, kMaxDataCount)
          .Field("val_samples", &K::val_samples, "validation samples (0: no validation)", 0,
                 kMaxDataCount);
      return t;
    }();
    return table;
  }
};

std::unique_ptr<DataIter> SyntheticIter(const SyntheticKeys& k, int64_t n, uint64_t seed,
                                        const BatchOptions& options) {
  std::vector<int64_t> dims = {n};
  dims.insert(dims.end(), k.shape.begin(), k.shape.end());
  const Shape s = ShapeOf(dims);
  const int64_t per = s.Size() / n;
  std::vector<float> x, y;
  try {
    x.resize(s.Size());
    y.resize(n);
  } catch (const std::bad_alloc&) {  // say what for, and how much
    FailData("keys 'data.num_samples'/'data.shape': " + std::to_string(n) +
             " synthetic samples of shape " + ShapeOf(k.shape).ToString() + " need " +
             std::to_string(s.Size() * 4) + " bytes, more than this machine can allocate");
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0, 1);
  const int64_t classes = k.num_classes;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(i % classes);
    for (int64_t j = 0; j < per; ++j) {
      x[i * per + j] = noise(rng) + (j % classes == i % classes ? 2.0f : 0.0f);
    }
  }
  return std::make_unique<NDArrayIter>(
      NDArrayIter::NamedArrays{{"data", NDArray::FromVector<float>(s, x)}},
      NDArrayIter::NamedArrays{{"softmax_label", NDArray::FromVector<float>({n}, y)}}, options);
}
}  // namespace

DataKind SyntheticDataKind() {
  auto check = [](const Options& data, const DataContext&) {
    SyntheticKeys k;
    SyntheticKeys::Table().ReadKnown(data, &k);
    CheckDataShape(data, "shape", k.shape);
  };
  auto make = [](const Options& data, const DataSetup& setup) {
    SyntheticKeys k;
    SyntheticKeys::Table().ReadKnown(data, &k);
    const DataContext& c = setup.context;
    DataIters out;
    out.train = setup.Wrap(SyntheticIter(k, k.num_samples, c.seed + 1, setup.train));
    out.train_samples = (k.num_samples + c.num_workers - 1) / c.num_workers;
    if (k.val_samples > 0) {
      out.val = setup.Wrap(SyntheticIter(k, k.val_samples, c.seed + 2, setup.val));
    }
    return out;
  };
  return {"synthetic", SyntheticKeys::Table().Infos({}), check, make};
}

}  // namespace cohort
