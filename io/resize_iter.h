// ResizeIter: a fixed number of batches per epoch from another iterator (MXNet's io.ResizeIter).
#pragma once

#include <memory>

#include "io/data_iter.h"

namespace cohort {

// Serves exactly `size` batches per epoch: when the inner iterator runs out it is reset and read
// on; a shorter epoch stops early. With reset_internal, Reset also resets the inner iterator,
// otherwise the next epoch continues where this one stopped.
class ResizeIter : public DataIter {
 public:
  ResizeIter(std::unique_ptr<DataIter> inner, int64_t size, bool reset_internal = true);

  void Reset() override;
  // Reads the epoch to its end: without reset_internal the next one continues from there.
  void SkipEpoch() override;
  bool Next() override;
  const DataBatch& Value() const override { return inner_->Value(); }
  const std::vector<DataDesc>& provide_data() const override { return inner_->provide_data(); }
  const std::vector<DataDesc>& provide_label() const override { return inner_->provide_label(); }
  int64_t batch_size() const override { return inner_->batch_size(); }
  std::optional<int64_t> BatchesThisEpoch() const override { return size_; }
  std::string DescribeLabelOf(int64_t index) const override {
    return inner_->DescribeLabelOf(index);
  }
  std::optional<HeldLabels> AllLabels() const override { return inner_->AllLabels(); }

 private:
  std::unique_ptr<DataIter> inner_;
  int64_t size_;
  bool reset_internal_;
  int64_t served_ = 0;
};

}  // namespace cohort
