// DataDesc and DataBatch: what an iterator provides, and one batch of it (MXNet's io.DataDesc and
// io.DataBatch).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "ndarray/ndarray.h"

namespace cohort {

// One input of a network as an iterator provides it: name, batch shape, dtype and layout.
struct DataDesc {
  std::string name;
  Shape shape;
  DType dtype = DType::kFloat32;
  std::string layout;  // one letter per axis, 'N' the batch axis: "NCHW", "NC", "N"

  // The axis of 'N' in layout (0 when there is none).
  int BatchAxis() const;
  friend bool operator==(const DataDesc&, const DataDesc&) = default;
};

// The axis of 'N' in `layout` (0 when there is none).
int BatchAxisOf(const std::string& layout);
// The layout of an array of `ndim` axes with the batch first: "N", "NC", "NCW", "NCHW", "NCDHW".
std::string DefaultLayout(int ndim);

// One batch. The iterator that produced it owns the arrays and reuses them for its next batch:
// a consumer that keeps a batch beyond the next call to Next copies it.
struct DataBatch {
  std::vector<NDArray> data;
  std::vector<NDArray> label;
  // The last `pad` samples repeat samples from the start of the epoch so that the batch is full;
  // metrics and predictions skip them.
  int64_t pad = 0;
  // Position of each sample in the data set (within this iterator's part).
  std::vector<int64_t> index;
  std::optional<int64_t> bucket_key;
  std::vector<DataDesc> provide_data;
  std::vector<DataDesc> provide_label;
};

}  // namespace cohort
