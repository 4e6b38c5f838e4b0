// MNISTIter.
#include "io/mnist_iter.h"

#include "io/data_kinds.h"
#include "io/idx_reader.h"

namespace cohort {

MNISTIter::MNISTIter(const MNISTIterOptions& options) {
  NDArray images = ReadIdxFile(options.image, 3);
  NDArray labels = ReadIdxFile(options.label, 1);
  label_file_ = options.label;
  label_unit_ = "item";
  const int64_t n = images.shape()[0];
  COHORT_CHECK_EQ(labels.shape()[0], n)
      << "'" << options.label << "' has " << labels.shape()[0] << " labels but '" << options.image
      << "' has " << n << " images";
  const int64_t rows = images.shape()[1], cols = images.shape()[2];
  images = options.flat ? images.Reshape({n, rows * cols}) : images.Reshape({n, 1, rows, cols});
  std::vector<BatchField> data = {{options.data_name, images, DType::kFloat32, options.scale}};
  std::vector<BatchField> label = {{options.label_name, labels, DType::kFloat32, 1.0f}};
  batcher_ = std::make_unique<Batcher>(std::move(data), std::move(label), options.batch);
}

// data.kind: mnist (Note [Data kinds]): IDX files, gzip or plain.
namespace {
struct MnistKeys {
  std::string train_image, train_label, val_image, val_label;
  bool flat = false;
  double scale = 1.0 / 256.0;

  static const OptionTable<MnistKeys>& Table() {
    using K = MnistKeys;
    static const OptionTable<K> table = [] {
      OptionTable<K> t("data");
      t.Path("train_image", &K::train_image, "IDX images (gzip or plain)")
          .Path("train_label", &K::train_label, "IDX labels")
          .Path("val_image", &K::val_image, "validation IDX images (none: no validation)")
          .Path("val_label", &K::val_label, "validation IDX labels")
          .Field("flat", &K::flat, "serve each image as one row of pixels")
          .Field("scale", &K::scale, "each pixel byte times this (MXNet 1.x's MNISTIter: 1/256)");
      return t;
    }();
    return table;
  }
};
}  // namespace

DataKind MnistDataKind() {
  auto check = [](const Options& data, const DataContext&) {
    MnistKeys k;
    MnistKeys::Table().ReadKnown(data, &k);
    CheckDataScale(data, k.scale);
    RequireDataWith(data, "val_label", "val_image");
    for (const char* key : {"train_image", "train_label"}) RequireDataFile(data, key);
    if (!k.val_image.empty()) {
      for (const char* key : {"val_image", "val_label"}) RequireDataFile(data, key);
    }
  };
  auto make = [](const Options& data, const DataSetup& setup) {
    MnistKeys k;
    MnistKeys::Table().ReadKnown(data, &k);
    auto iter = [&](const std::string& image, const std::string& label, const BatchOptions& batch,
                    int64_t* count) {
      MNISTIterOptions o;
      o.image = image;
      o.label = label;
      o.flat = k.flat;
      o.scale = static_cast<float>(k.scale);
      o.batch = batch;
      auto it = std::make_unique<MNISTIter>(o);
      if (count) *count = it->num_samples();
      return setup.Wrap(std::move(it));
    };
    DataIters out;
    out.train = iter(k.train_image, k.train_label, setup.train, &out.train_samples);
    if (!k.val_image.empty()) out.val = iter(k.val_image, k.val_label, setup.val, nullptr);
    return out;
  };
  return {"mnist", MnistKeys::Table().Infos({}), check, make};
}

}  // namespace cohort
