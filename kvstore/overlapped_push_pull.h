// OverlappedPushPull: reduces a step's gradient buckets on a communication thread as soon as each
// bucket's last gradient is ready, while backward still runs (Note [Overlapped push]).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace cohort {

// Note [Overlapped push]
// Backward produces gradients last layer first (Note [Gradient ready]). The trainer announces
// a step's keys with priorities that put them in that order (GradientBucketer::Start), reports
// each key as its gradient becomes final on every device (KeyReady, from the device threads),
// and waits at the end (Finish). A communication thread
// takes the buckets in order (contiguous key ranges of at most COHORT_KVSTORE_BUCKET_MB, planned
// once: PlanBuckets) and reduces each once all its keys are ready, so the allreduce of the last
// layers overlaps the backward of the first ones. Every worker forms the same buckets from the
// same sizes, so the collectives match across workers whatever the timing.
class OverlappedPushPull {
 public:
  // push_pull(bucket) reduces, updates and pulls the keys of bucket `bucket` of the plan given
  // to Start; it runs on the communication thread.
  explicit OverlappedPushPull(std::function<void(size_t bucket)> push_pull);
  ~OverlappedPushPull();
  OverlappedPushPull(const OverlappedPushPull&) = delete;
  OverlappedPushPull& operator=(const OverlappedPushPull&) = delete;

  // A new step: `buckets` are [begin, end) ranges of key positions covering 0..n in order.
  void Start(const std::vector<std::pair<size_t, size_t>>& buckets);
  // The key at `position` is ready (any thread; once per step).
  void Ready(size_t position);
  // Waits until every bucket of the step is done; rethrows the first error of push_pull.
  void Finish();

 private:
  void Loop();

  std::function<void(size_t)> push_pull_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::vector<std::pair<size_t, size_t>>* buckets_ = nullptr;
  std::vector<char> ready_;  // per key position
  size_t buckets_done_ = 0;
  bool running_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

// Contiguous ranges of positions whose sizes (bytes) sum to at most `cap` each; a size above the
// cap gets a range of its own.
std::vector<std::pair<size_t, size_t>> PlanBuckets(const std::vector<size_t>& sizes, size_t cap);

}  // namespace cohort
