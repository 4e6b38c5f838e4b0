// The data section of a run configuration: the keys of every data kind, their checks, and the
// iterators they make (Note [Data kinds]).
#pragma once

#include <cstdint>
#include <memory>

#include "base/options.h"
#include "io/data_iter.h"

namespace cohort {

// Note [Data kinds]
// `data.kind` picks the iterator: mnist (IDX files), csv, text (TextIter), imagerecord
// (ImageRecordIter) or synthetic (generated classes). Each kind is declared in its iterator's
// file (io/data_kinds.h): its keys in an OptionTable (types, defaults, docs; Note [Declared
// options]), its check and its factory; DataKinds() lists them, as the operator registry lists
// operators. An app checks the section's keys and types against DataOptionKeys (Note
// [Options]), then calls CheckDataOptions before any work and MakeDataIters when it trains. A
// new kind, or a new key of one, changes only its iterator's file.

// What the iterators need from outside the data section.
struct DataContext {
  int64_t batch_per_worker = 0;  // unknown (0) when only checking
  int rank = 0, num_workers = 1;
  uint64_t seed = 0;
  int64_t seq_len = 128;  // model.seq_len: the window of text data, the bound of its buckets
  int64_t vocab = 0;      // model.vocab of a model over text bytes; 0: unknown
};

// The training and validation iterators for this worker (part `rank` of `num_workers`). val is
// null when the section has no validation data.
struct DataIters {
  std::unique_ptr<DataIter> train, val;
  int64_t train_samples = 0;  // in this worker's part
};

// Every key of a data section: those of every kind, then each kind's (a key several kinds read
// once, its docs joined; types path and paths are input files, which a configuration file's
// values name relative to its own folder).
std::vector<OptionInfo> DataOptionKeys();
// data.kind as the section gives it, or its declared default.
std::string DataKindOf(const Options& data);
// Checks the section before any work (the kind, required keys, files that must exist, ranges);
// throws a ConfigError naming data.<key>.
void CheckDataOptions(const Options& data, const DataContext& context);
// Makes the iterators. A setting the iterators refuse is a ConfigError; what the files hold (a
// truncated gzip, a field that is not a number) is a DataError.
DataIters MakeDataIters(const Options& data, const DataContext& context);

}  // namespace cohort
