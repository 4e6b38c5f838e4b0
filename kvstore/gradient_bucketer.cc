// GradientBucketer (Note [Overlapped push]).
#include "kvstore/gradient_bucketer.h"

#include <algorithm>
#include <numeric>

#include "base/env.h"
#include "base/error.h"
#include "base/timeline.h"

namespace cohort {

bool OverlapsBackward(const KVStore& kv) {
  if (!kv.CanOverlap()) return false;
  return Env().kvstore_overlap < 0 ? kv.OverlapsByDefault() : Env().kvstore_overlap > 0;
}

GradientBucketer::GradientBucketer(KVStore& kv) : kv_(kv), overlaps_(OverlapsBackward(kv)) {}

GradientBucketer::~GradientBucketer() = default;

void GradientBucketer::Plan(const std::vector<int>& keys,
                            const std::vector<std::vector<NDArray>>& values,
                            const std::vector<int>& priorities) {
  order_.resize(keys.size());
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return priorities[a] > priorities[b]; });
  std::vector<size_t> bytes;
  for (size_t i : order_) {
    COHORT_CHECK(!values[i].empty()) << "kvstore: no values for key " << keys[i];
    bytes.push_back(values[i][0].nbytes());
  }
  bucket_ranges_ = PlanBuckets(bytes, static_cast<size_t>(Env().kvstore_bucket_mb) << 20);
  const int largest = keys.empty() ? -1 : *std::max_element(keys.begin(), keys.end());
  position_of_key_.assign(static_cast<size_t>(largest + 1), -1);
  for (size_t p = 0; p < order_.size(); ++p) {
    const int key = keys[order_[p]];
    COHORT_CHECK(key >= 0) << "kvstore: negative key " << key;
    COHORT_CHECK(position_of_key_[key] < 0) << "kvstore: key " << key << " is listed twice";
    position_of_key_[key] = static_cast<int>(p);
  }
  bucket_bytes_.clear();
  for (const auto& [begin, end] : bucket_ranges_) {
    int64_t total = 0;
    for (size_t p = begin; p < end; ++p) total += static_cast<int64_t>(bytes[p]);
    bucket_bytes_.push_back(total);
  }
  planned_keys_ = keys;
  planned_priorities_ = priorities;
}

void GradientBucketer::Start(const std::vector<int>& keys,
                             const std::vector<std::vector<NDArray>>& values,
                             const std::vector<std::vector<NDArray>>& outs,
                             const std::vector<int>& priorities) {
  COHORT_CHECK(keys.size() == values.size() && keys.size() == outs.size() &&
               keys.size() == priorities.size())
      << "kvstore: a step of " << keys.size() << " keys with " << values.size() << " values, "
      << outs.size() << " outputs and " << priorities.size() << " priorities";
  step_keys_ = &keys;
  step_values_ = &values;
  step_outs_ = &outs;
  kv_.StartStep();
  if (!overlaps_) return;
  if (keys != planned_keys_ || priorities != planned_priorities_ || bucket_ranges_.empty()) {
    Plan(keys, values, priorities);
  }
  // The arrays of each bucket, rebuilt every step (the caller may pass other arrays), in
  // vectors whose capacity stays: no allocation in the steady state.
  buckets_.resize(bucket_ranges_.size());
  for (size_t b = 0; b < bucket_ranges_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    const auto [begin, end] = bucket_ranges_[b];
    bucket.keys.resize(end - begin);
    bucket.values.resize(end - begin);
    bucket.outs.resize(end - begin);
    for (size_t p = begin; p < end; ++p) {
      const size_t i = order_[p];
      bucket.keys[p - begin] = keys[i];
      bucket.values[p - begin] = values[i];
      bucket.outs[p - begin] = outs[i];
    }
  }
  if (!thread_) {
    thread_ = std::make_unique<OverlappedPushPull>([this](size_t b) {
      timeline::LabelThread("comm");
      timeline::Span span("allreduce", static_cast<int64_t>(b), bucket_bytes_[b]);
      kv_.PushPull(buckets_[b].keys, buckets_[b].values, buckets_[b].outs);
    });
  }
  thread_->Start(bucket_ranges_);
}

void GradientBucketer::KeyReady(int key) {
  if (!overlaps_ || !thread_) return;
  COHORT_CHECK(key >= 0 && static_cast<size_t>(key) < position_of_key_.size() &&
               position_of_key_[key] >= 0)
      << "kvstore KeyReady: key " << key << " is not one of this step's keys";
  thread_->Ready(static_cast<size_t>(position_of_key_[key]));
}

void GradientBucketer::Finish() {
  COHORT_CHECK(step_keys_ != nullptr) << "kvstore: a step finished that never started";
  if (overlaps_) {
    timeline::Span span("wait_allreduce");
    thread_->Finish();
  } else {
    timeline::Span span("allreduce", -1, -1);  // every key at once, after backward
    kv_.PushPull(*step_keys_, *step_values_, *step_outs_);
  }
  kv_.FinishStep(*step_keys_, *step_outs_);
  step_keys_ = nullptr;
}

}  // namespace cohort
