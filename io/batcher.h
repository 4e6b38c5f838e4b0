// Batcher: serves an in-memory data set in batches, the core of every file iterator.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "io/data_iter.h"

namespace cohort {

struct BatchOptions {
  int64_t batch_size = 128;
  bool shuffle = false;
  // With shuffle: a new order every epoch, or one order for all (MXNet's MNISTIter).
  bool reshuffle_each_epoch = true;
  uint64_t seed = 0;
  LastBatchHandle last_batch = LastBatchHandle::kPad;
  // Data-parallel sharding: this iterator serves part `part_index` of `num_parts`.
  int num_parts = 1;
  int part_index = 0;
  enum class Sharding { kGlobalBatch, kParts };
  Sharding sharding = Sharding::kGlobalBatch;  // Note [Sharding]
};

// Note [Sharding]
// kGlobalBatch (the default): every part orders all N samples alike (the seed alone decides),
// cuts the order into global batches of num_parts · batch_size, and serves rows
// [r·batch_size, (r+1)·batch_size) of each: the same global batches, padded or rolled over as
// one, whatever the number of workers, so 1 worker x 4 devices, 2 x 2 and 4 x 1 train alike
// (a worker's devices then slice its rows in turn). kParts (MXNet's num_parts/part_index, for
// sources read in parts): part r is the contiguous [r*m, (r+1)*m) of the N samples,
// m = ceil(N/n), wrapping to the start for the last part when n does not divide N (as PyTorch's
// DistributedSampler pads), shuffled within. Either way every part has the same number of
// batches, so data-parallel workers stay in step.
std::vector<int64_t> ShardIndices(int64_t num_samples, int num_parts, int part_index);

// One input or label of the data set, all samples in one host array of shape (N, ...).
struct BatchField {
  std::string name;
  NDArray samples;
  DType dtype = DType::kFloat32;  // the dtype of the batch array (converted from samples)
  float scale = 1.0f;             // multiplies every value (e.g. 1/255 for pixels)
};

// Batches of BatchFields: the order (with shuffling by seed), last-batch handling and sharding,
// and gathering rows into batch arrays allocated once.
class Batcher {
 public:
  Batcher(std::vector<BatchField> data, std::vector<BatchField> label, const BatchOptions& options);

  void Reset();
  bool Next() { return Advance(/*gather=*/true); }
  // To the next epoch as if this one had been read to its end (what it rolls over included).
  void SkipEpoch();
  const DataBatch& batch() const { return batch_; }
  const std::vector<DataDesc>& provide_data() const { return batch_.provide_data; }
  const std::vector<DataDesc>& provide_label() const { return batch_.provide_label; }
  int64_t batch_size() const { return options_.batch_size; }
  // This epoch's order of the samples (shuffled by the seed; MXNet's NDArrayIter.idx).
  const std::vector<int64_t>& order() const { return order_; }
  // DataIter::AllLabels: the labels of every sample this iterator may serve (under the default
  // sharding, the whole data set), when the batches hold them as float32.
  std::optional<HeldLabels> AllLabels() const;
  // Samples this iterator serves an epoch (its share of the global batches' samples).
  // The batches this epoch gives: its stream (what rolled over included) in global batches,
  // the last one padded or left out.
  int64_t BatchesThisEpoch() const;
  int64_t num_samples() const {
    return (static_cast<int64_t>(part_.size()) + options_.num_parts - 1) / options_.num_parts;
  }

 private:
  void StartEpoch();
  // The next batch's rows (and, with `gather`, its arrays); false at the end of the epoch.
  bool Advance(bool gather);
  // Rows rows[0 .. count) of `field` into `out`, converted to its batch dtype and scaled.
  void Gather(const BatchField& field, const NDArray& out, const int64_t* rows,
              int64_t count) const;

  std::vector<BatchField> data_, label_;
  BatchOptions options_;
  std::vector<int64_t> part_;    // sample indices of this part
  std::vector<int64_t> order_;   // this epoch's order of part_
  std::vector<int64_t> stream_;  // rolled-over samples, then order_
  std::vector<int64_t> carry_;   // samples rolled over into the next epoch
  size_t cursor_ = 0;
  bool shuffled_ = false;
  std::mt19937_64 rng_;
  DataBatch batch_;
};

// A DataIter that serves a Batcher: the common body of NDArrayIter, MNISTIter and CSVIter.
class BatcherIter : public DataIter {
 public:
  void Reset() override { batcher_->Reset(); }
  void SkipEpoch() override { batcher_->SkipEpoch(); }
  std::optional<int64_t> BatchesThisEpoch() const override { return batcher_->BatchesThisEpoch(); }
  bool Next() override { return batcher_->Next(); }
  const DataBatch& Value() const override { return batcher_->batch(); }
  const std::vector<DataDesc>& provide_data() const override { return batcher_->provide_data(); }
  const std::vector<DataDesc>& provide_label() const override { return batcher_->provide_label(); }
  int64_t batch_size() const override { return batcher_->batch_size(); }
  // Samples in this iterator's part.
  int64_t num_samples() const { return batcher_->num_samples(); }
  const std::vector<int64_t>& order() const { return batcher_->order(); }
  std::optional<HeldLabels> AllLabels() const override { return batcher_->AllLabels(); }
  std::string DescribeLabelOf(int64_t index) const override {
    const int64_t number = label_lines_.empty() ? index + label_first_ : label_lines_.at(index);
    return label_file_.empty() ? DataIter::DescribeLabelOf(index)
                               : label_unit_ + " " + std::to_string(number) +
                                     " of '" + label_file_ + "'";
  }

 protected:
  std::unique_ptr<Batcher> batcher_;  // made by the subclass's constructor
  // The file the labels were read from, what it calls a sample ("row", "item"), and the number
  // of its first one: set by the subclass's constructor.
  std::string label_file_, label_unit_;
  int64_t label_first_ = 0;
  std::vector<int64_t> label_lines_;  // each sample's line in the file, where lines may be blank
};

}  // namespace cohort
