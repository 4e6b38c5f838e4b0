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
class NDArrayIter : public BatcherIter {
 public:
  using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

  NDArrayIter(const NamedArrays& data, const NamedArrays& label, const BatchOptions& options);
};

}  // namespace cohort
