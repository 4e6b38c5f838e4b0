// MNISTIter: MNIST-format IDX files (MNIST, Fashion-MNIST), plain or gzip (MXNet's io.MNISTIter).
#pragma once

#include <string>

#include "io/batcher.h"
#include "io/data_iter.h"

namespace cohort {

struct MNISTIterOptions {
  std::string image;  // e.g. /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz
  std::string label;  // e.g. .../train-labels-idx1-ubyte.gz
  // Images as (batch, 784) instead of (batch, 1, 28, 28).
  bool flat = false;
  std::string data_name = "data";
  std::string label_name = "softmax_label";
  BatchOptions batch{.batch_size = 128, .shuffle = true};
};

// Pixels become float32 in [0, 1] (divided by 255) and labels float32 class numbers, as in MXNet.
// The images stay in memory as bytes and are converted batch by batch.
class MNISTIter : public DataIter {
 public:
  explicit MNISTIter(const MNISTIterOptions& options);

  void Reset() override { batcher_->Reset(); }
  bool Next() override { return batcher_->Next(); }
  const DataBatch& Value() const override { return batcher_->batch(); }
  const std::vector<DataDesc>& provide_data() const override { return batcher_->provide_data(); }
  const std::vector<DataDesc>& provide_label() const override { return batcher_->provide_label(); }
  int64_t batch_size() const override { return batcher_->batch_size(); }
  int64_t num_samples() const { return batcher_->num_samples(); }

 private:
  std::unique_ptr<Batcher> batcher_;
};

}  // namespace cohort
