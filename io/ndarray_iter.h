// NDArrayIter: batches of named arrays held in memory (MXNet's io.NDArrayIter).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/batcher.h"
#include "io/data_iter.h"

namespace cohort {

// Each array's first axis is the sample axis; every array has the same number of samples.
// Batches keep each array's dtype. Labels are optional.
class NDArrayIter : public DataIter {
 public:
  using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

  NDArrayIter(const NamedArrays& data, const NamedArrays& label, const BatchOptions& options);

  void Reset() override { batcher_.Reset(); }
  bool Next() override { return batcher_.Next(); }
  const DataBatch& Value() const override { return batcher_.batch(); }
  const std::vector<DataDesc>& provide_data() const override { return batcher_.provide_data(); }
  const std::vector<DataDesc>& provide_label() const override { return batcher_.provide_label(); }
  int64_t batch_size() const override { return batcher_.batch_size(); }
  int64_t num_samples() const { return batcher_.num_samples(); }

 private:
  Batcher batcher_;
};

}  // namespace cohort
