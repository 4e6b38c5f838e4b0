// CSVIter: rows of comma-separated numbers as samples (MXNet's io.CSVIter).
#pragma once

#include <memory>
#include <string>

#include "io/batcher.h"
#include "io/data_iter.h"

namespace cohort {

struct CSVIterOptions {
  std::string data_csv;
  Shape data_shape;         // the shape of one sample; each row holds data_shape.Size() values
  std::string label_csv;    // optional; without it every label is 0
  Shape label_shape = {1};  // the shape of one label
  std::string data_name = "data";
  std::string label_name = "softmax_label";
  DType dtype = DType::kFloat32;  // of data and labels: float32, int32 or int64 (MXNet's dtype)
  BatchOptions batch{.batch_size = 128};
};

// Values are float32, or exact int32 / int64 integers (dtype). Both files are read whole; rows are
// parsed in place (no allocation per value). A row of the wrong width or a field that is not a
// number is an error naming the file, the line and the field.
class CSVIter : public BatcherIter {
 public:
  explicit CSVIter(const CSVIterOptions& options);
};

// Parses a CSV file with sample_shape.Size() numbers per row into an array of shape
// (rows, sample_shape...) and `dtype` (float32, int32 or int64; integers are parsed as integers,
// so int64 values beyond float's 24 bits stay exact). Blank lines are skipped.
NDArray ReadCsvFile(const std::string& path, const Shape& sample_shape,
                    std::vector<int64_t>* lines = nullptr, DType dtype = DType::kFloat32);

}  // namespace cohort
