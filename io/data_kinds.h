// The data kinds of a configuration's data section, each declared by its iterator's file: its
// keys (types, defaults, docs), its check and its factory (Note [Data kinds]).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/options.h"
#include "io/batcher.h"
#include "io/data_config.h"

namespace cohort {

// The keys every kind reads.
struct DataCommon {
  std::string kind = "mnist";
  bool shuffle = true;
  bool prefetch = true;
  std::string last_batch_handle = "pad";
  int64_t batches_per_epoch = 0;
  std::string sharding = "global_batch";

  static const OptionTable<DataCommon>& Table();
};

// What a kind's factory is given besides its keys: the run's context, the batch options of
// each split, and the common keys.
struct DataSetup {
  DataContext context;
  DataCommon common;
  BatchOptions train, val;
  // The iterator behind a prefetching thread when data.prefetch is on (depth batches ahead).
  std::unique_ptr<DataIter> Wrap(std::unique_ptr<DataIter> it, int depth = 4) const;
};

struct DataKind {
  std::string name;
  std::vector<OptionInfo> keys;  // its own, besides DataCommon's
  // Before any work: required keys, files that must exist, ranges (the table's) and shapes;
  // throws a ConfigError naming data.<key>.
  std::function<void(const Options&, const DataContext&)> check;
  std::function<DataIters(const Options&, const DataSetup&)> make;
};

// The kinds, as their files declare them.
DataKind MnistDataKind();        // io/mnist_iter.cc
DataKind CsvDataKind();          // io/csv_iter.cc
DataKind TextDataKind();         // io/text_iter.cc
DataKind ImageRecordDataKind();  // io/image_record_iter.cc
DataKind SyntheticDataKind();    // io/ndarray_iter.cc
const std::vector<DataKind>& DataKinds();

// Shared checks of the kinds, each a ConfigError naming data.<key>.
[[noreturn]] void FailData(const std::string& message);
void RequireDataFile(const Options& data, const std::string& key);
// A validation file given without the one it goes with is a mistake, not a request.
void RequireDataWith(const Options& data, const std::string& key, const std::string& partner);
// A shape key: at least one size, each positive, fewer than 2^31 elements in all.
void CheckDataShape(const Options& data, const std::string& key, const std::vector<int64_t>& dims);
// data.scale: a finite nonzero multiplier.
void CheckDataScale(const Options& data, double scale);
Shape ShapeOf(const std::vector<int64_t>& dims);

constexpr double kMaxDataCount = static_cast<double>(int64_t{1} << 31);

}  // namespace cohort
