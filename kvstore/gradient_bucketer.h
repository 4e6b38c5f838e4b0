// GradientBucketer: reduces a step's gradients in buckets with any kind of kvstore, while
// backward still runs (Note [Overlapped push]).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "kvstore/kvstore.h"
#include "kvstore/overlapped_push_pull.h"

namespace cohort {

// Whether `kv`'s buckets are reduced on a communication thread during backward: the kind must
// allow it, and COHORT_KVSTORE_OVERLAP (1 or 0) decides, else the kind's default.
bool OverlapsBackward(const KVStore& kv);

// A step: Start announces the keys with their values, outputs and priorities; KeyReady(key)
// (any thread) says the key's values are final on every device; Finish waits for every bucket.
// Buckets hold keys of falling priority (MXNet's: higher first; the trainer gives the later
// layers, whose gradients backward makes first, the higher priorities) and are reduced in that
// order, which every worker shares whatever the timing, so their collectives match. When the
// kind does not overlap, Finish makes one PushPull of every key after backward.
class GradientBucketer {
 public:
  explicit GradientBucketer(KVStore& kv);
  ~GradientBucketer();

  bool overlaps() const { return overlaps_; }
  // The arguments must stay alive until Finish. priorities[k] is that of keys[k].
  void Start(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
             const std::vector<std::vector<NDArray>>& outs, const std::vector<int>& priorities);
  void KeyReady(int key);
  void Finish();

 private:
  void Plan(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
            const std::vector<int>& priorities);

  KVStore& kv_;
  const bool overlaps_;
  const std::vector<int>* step_keys_ = nullptr;
  const std::vector<std::vector<NDArray>>*step_values_ = nullptr, *step_outs_ = nullptr;
  // The plan, made again only when the keys or priorities change.
  std::vector<int> planned_keys_, planned_priorities_;
  std::vector<size_t> order_;         // positions in the caller's lists, by falling priority
  std::vector<int> position_of_key_;  // index: key; value: its place in order_
  std::vector<std::pair<size_t, size_t>> bucket_ranges_;  // over order_
  std::vector<int64_t> bucket_bytes_;                     // of each bucket, for the timeline
  struct Bucket {
    std::vector<int> keys;
    std::vector<std::vector<NDArray>> values, outs;
  };
  std::vector<Bucket> buckets_;
  std::unique_ptr<OverlappedPushPull> thread_;  // started on first use
};

}  // namespace cohort
