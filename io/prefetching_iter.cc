// PrefetchingIter (Note [Prefetching]).
#include "io/prefetching_iter.h"

namespace cohort {
namespace {

void CopyBatch(const DataBatch& src, DataBatch& dst) {
  CopyArraysInto(src.data, &dst.data);
  CopyArraysInto(src.label, &dst.label);
  dst.pad = src.pad;
  dst.index.assign(src.index.begin(), src.index.end());
  dst.bucket_key = src.bucket_key;
  dst.provide_data = src.provide_data;
  dst.provide_label = src.provide_label;
}

}  // namespace

PrefetchingIter::PrefetchingIter(std::unique_ptr<DataIter> inner, int capacity)
    : inner_(std::move(inner)), slots_(capacity), filled_(capacity) {
  COHORT_CHECK(inner_ != nullptr) << "PrefetchingIter needs an iterator";
  COHORT_CHECK_GE(capacity, 1) << "PrefetchingIter capacity";
  for (int i = 0; i < capacity; ++i) free_.push_back(i);
  batches_this_epoch_ = inner_->BatchesThisEpoch();
  run_epoch_ = true;
  thread_ = std::thread([this] { Produce(); });
}

PrefetchingIter::~PrefetchingIter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void PrefetchingIter::Produce() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return run_epoch_ || stop_; });
    if (stop_) return;
    producing_ = true;
    while (true) {
      changed_.wait(lock, [this] { return !free_.empty() || stop_ || abort_epoch_; });
      if (stop_ || abort_epoch_) break;
      const int slot = free_.back();
      free_.pop_back();
      lock.unlock();
      bool more = false;
      std::exception_ptr error;
      try {
        more = inner_->Next();
        if (more) CopyBatch(inner_->Value(), slots_[slot]);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      if (!more) {
        free_.push_back(slot);
        error_ = error;
        epoch_done_ = true;
        changed_.notify_all();
        break;
      }
      filled_[(filled_head_ + filled_count_) % filled_.size()] = slot;
      ++filled_count_;
      changed_.notify_all();
    }
    producing_ = false;
    run_epoch_ = false;
    changed_.notify_all();
  }
}

bool PrefetchingIter::Next() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (current_ >= 0) {
    free_.push_back(current_);
    current_ = -1;
    changed_.notify_all();
  }
  changed_.wait(lock, [this] { return filled_count_ > 0 || epoch_done_; });
  if (filled_count_ > 0) {
    current_ = filled_[filled_head_];
    filled_head_ = (filled_head_ + 1) % filled_.size();
    --filled_count_;
    return true;
  }
  if (error_) {
    std::exception_ptr error = error_;
    error_ = nullptr;
    std::rethrow_exception(error);
  }
  return false;
}

const DataBatch& PrefetchingIter::Value() const {
  COHORT_CHECK_GE(current_, 0) << "PrefetchingIter::Value() before a successful Next()";
  return slots_[current_];
}

void PrefetchingIter::StopEpochLocked(std::unique_lock<std::mutex>& lock) {
  abort_epoch_ = true;
  changed_.notify_all();
  changed_.wait(lock, [this] { return !producing_ && !run_epoch_; });
  abort_epoch_ = false;
}

void PrefetchingIter::Reset() { StartNextEpoch(&DataIter::Reset); }

// The producer may have read part of the epoch ahead: the inner iterator skips the rest.
void PrefetchingIter::SkipEpoch() { StartNextEpoch(&DataIter::SkipEpoch); }

void PrefetchingIter::StartNextEpoch(void (DataIter::*advance)()) {
  std::unique_lock<std::mutex> lock(mutex_);
  StopEpochLocked(lock);
  // The producer is idle: every slot goes back to the free list.
  free_.clear();
  for (int i = 0; i < static_cast<int>(slots_.size()); ++i) free_.push_back(i);
  filled_head_ = filled_count_ = 0;
  current_ = -1;
  epoch_done_ = false;
  error_ = nullptr;
  ((*inner_).*advance)();
  batches_this_epoch_ = inner_->BatchesThisEpoch();
  run_epoch_ = true;
  changed_.notify_all();
}

}  // namespace cohort
