// OverlappedPushPull (Note [Overlapped push]) and the bucket plan.
#include "kvstore/overlapped_push_pull.h"

namespace cohort {

OverlappedPushPull::OverlappedPushPull(std::function<void(size_t)> push_pull)
    : push_pull_(std::move(push_pull)), thread_([this] { Loop(); }) {}

OverlappedPushPull::~OverlappedPushPull() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void OverlappedPushPull::Start(const std::vector<std::pair<size_t, size_t>>& buckets) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    buckets_ = &buckets;
    const size_t keys = buckets.empty() ? 0 : buckets.back().second;
    ready_.assign(keys, 0);  // no allocation once the size is reached
    buckets_done_ = 0;
    error_ = nullptr;
    running_ = true;
  }
  wake_.notify_all();
}

void OverlappedPushPull::Ready(size_t position) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ready_[position] = 1;
  }
  wake_.notify_all();
}

void OverlappedPushPull::Finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return !running_; });
  if (error_) std::rethrow_exception(error_);
}

void OverlappedPushPull::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // The next bucket whose keys are all ready, or the end of the step.
    wake_.wait(lock, [this] {
      if (stop_) return true;
      if (!running_) return false;
      if (buckets_done_ == buckets_->size()) return true;
      const auto [begin, end] = (*buckets_)[buckets_done_];
      for (size_t i = begin; i < end; ++i) {
        if (!ready_[i]) return false;
      }
      return true;
    });
    if (stop_) return;
    if (buckets_done_ == buckets_->size()) {
      running_ = false;
      done_.notify_all();
      continue;
    }
    const size_t bucket = buckets_done_;
    lock.unlock();
    std::exception_ptr error;
    try {
      push_pull_(bucket);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {  // the rest of the step is skipped; Finish rethrows
      error_ = error;
      buckets_done_ = buckets_->size();
    } else {
      ++buckets_done_;
    }
  }
}

std::vector<std::pair<size_t, size_t>> PlanBuckets(const std::vector<size_t>& sizes, size_t cap) {
  std::vector<std::pair<size_t, size_t>> buckets;
  size_t begin = 0, bytes = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > begin && bytes + sizes[i] > cap) {
      buckets.push_back({begin, i});
      begin = i;
      bytes = 0;
    }
    bytes += sizes[i];
  }
  if (begin < sizes.size()) buckets.push_back({begin, sizes.size()});
  return buckets;
}

}  // namespace cohort
