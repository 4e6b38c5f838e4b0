// MNISTIter.
#include "io/mnist_iter.h"

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

}  // namespace cohort
