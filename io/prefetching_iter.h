// PrefetchingIter: runs another iterator on a background thread, a few batches ahead.
#pragma once

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "io/data_iter.h"

namespace cohort {

// Note [Prefetching]
// A producer thread calls the inner iterator's Next and copies each batch into one of
// `capacity` slots whose arrays are allocated on first use and reused afterwards; the consumer's
// Next hands out filled slots in order and returns the previous one to the producer. So loading
// overlaps training, nothing is allocated per batch once the slots exist, and at most `capacity`
// batches wait. An exception thrown by the inner iterator is stored and rethrown by the consumer's
// Next at the point of the stream where it happened. Reset stops the producer at a slot boundary,
// resets the inner iterator from the consumer's thread and starts the next epoch.
class PrefetchingIter : public DataIter {
 public:
  explicit PrefetchingIter(std::unique_ptr<DataIter> inner, int capacity = 2);
  ~PrefetchingIter() override;

  void Reset() override;
  void SkipEpoch() override;
  bool Next() override;
  const DataBatch& Value() const override;
  const std::vector<DataDesc>& provide_data() const override { return inner_->provide_data(); }
  const std::vector<DataDesc>& provide_label() const override { return inner_->provide_label(); }
  int64_t batch_size() const override { return inner_->batch_size(); }
  std::string DescribeLabelOf(int64_t index) const override {
    return inner_->DescribeLabelOf(index);
  }
  std::optional<HeldLabels> AllLabels() const override { return inner_->AllLabels(); }
  // The inner iterator's, taken as the epoch starts (the producer reads it on).
  std::optional<int64_t> BatchesThisEpoch() const override { return batches_this_epoch_; }

 private:
  void Produce();
  void StopEpochLocked(std::unique_lock<std::mutex>& lock);
  // Stops the producer, moves the inner iterator on (Reset or SkipEpoch) and starts the next epoch.
  void StartNextEpoch(void (DataIter::*advance)());

  std::unique_ptr<DataIter> inner_;
  std::vector<DataBatch> slots_;
  // Ring buffers of slot numbers: filled (in stream order) and free.
  std::vector<int> filled_, free_;
  size_t filled_head_ = 0, filled_count_ = 0;
  int current_ = -1;  // the slot the consumer holds

  std::mutex mutex_;
  std::condition_variable changed_;
  bool run_epoch_ = false;    // the producer should fill the current epoch
  bool producing_ = false;    // the producer is inside an epoch
  bool epoch_done_ = false;   // the inner iterator reached its end (or failed)
  bool abort_epoch_ = false;  // Reset asks the producer to stop early
  bool stop_ = false;         // the destructor asks the producer to exit
  std::exception_ptr error_;
  std::optional<int64_t> batches_this_epoch_;
  std::thread thread_;
};

}  // namespace cohort
