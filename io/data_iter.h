// DataIter: the interface of every data iterator (MXNet's io.DataIter).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/data_desc.h"

namespace cohort {

// Every label of a data set held in memory (DataIter::AllLabels): one array (M, ...) per label,
// row i that of the sample whose DataBatch::index value is index[i].
struct HeldLabels {
  std::vector<NDArray> labels;
  std::vector<int64_t> index;
  bool every_worker_alike = false;  // every worker holds these same labels (Note [Sharding])
};

// Yields batches until the end of an epoch; Reset starts the next epoch.
//   while (iter.Next()) { const DataBatch& b = iter.Value(); ... }   iter.Reset();
// Value() stays valid until the next Next() or Reset(): iterators reuse their batch arrays, so a
// training step allocates nothing.
class DataIter {
 public:
  virtual ~DataIter() = default;

  virtual void Reset() = 0;
  // Moves on to the next epoch as if this one had been read to its end and Reset: how a
  // resumed run replays the epochs before it. Reset is that for iterators whose epoch does not
  // depend on how far the last one was read; those that carry samples over (roll_over) or
  // read on across epochs override it.
  virtual void SkipEpoch() { Reset(); }
  // Advances to the next batch; false at the end of the epoch.
  virtual bool Next() = 0;
  virtual const DataBatch& Value() const = 0;

  virtual const std::vector<DataDesc>& provide_data() const = 0;
  virtual const std::vector<DataDesc>& provide_label() const = 0;
  virtual int64_t batch_size() const = 0;

  // Where the label of the sample at `index` (a DataBatch::index value) comes from, for an
  // error about it: "record 17 of 'train.rec', at byte 4096", "line 3 of 'labels.csv'".
  virtual std::string DescribeLabelOf(int64_t index) const {
    return "sample " + std::to_string(index);
  }

  // Where the data set is held in memory: every label of the samples this iterator may serve,
  // as its batches hold them (float32, scaled). Note [Labels checked up front].
  virtual std::optional<HeldLabels> AllLabels() const { return std::nullopt; }
  // The batches this epoch gives, where known before it is read (the progress line's [i/N]
  // and ETA from the first epoch); asked at the epoch's start.
  virtual std::optional<int64_t> BatchesThisEpoch() const { return std::nullopt; }
};

// What to do with the samples left over at the end of an epoch when they do not fill a batch.
enum class LastBatchHandle {
  kPad,  // fill the batch with samples from the start of the epoch; DataBatch::pad says how many
  kDiscard,   // drop them
  kRollOver,  // keep them for the first batch of the next epoch
};

// "pad", "discard" or "roll_over"; throws naming the text otherwise.
LastBatchHandle ParseLastBatchHandle(std::string_view text);

}  // namespace cohort
