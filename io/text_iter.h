// TextIter: byte-level language-model windows over text files (data.kind: text).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "io/data_iter.h"

namespace cohort {

struct TextIterOptions {
  std::vector<std::string> files;  // concatenated in order; gzip / dictzip (.dz) read directly
  // The part [begin, end) of the concatenated text, as fractions of its length (validation on
  // the last 1%: begin 0.99; training on the rest: end 0.99).
  double begin_fraction = 0, end_fraction = 1;
  int64_t seq_len = 128;
  int64_t stride = 0;       // tokens between window starts; 0: seq_len (windows do not overlap)
  int64_t batch_size = 32;  // this worker's batch
  bool shuffle = true;
  uint64_t seed = 0;
  int num_parts = 1;  // workers; each global batch is num_parts · batch_size windows
  int part_index = 0;
  int64_t max_batches = 0;  // per epoch; 0: every full global batch
  // Bucketing (Note [Text buckets]): when given (ascending lengths), each line is a sample, padded
  // to the smallest bucket that holds it; seq_len and stride are then unused.
  std::vector<int64_t> buckets = {};
  // The model's vocabulary (model.vocab), when known: a byte at or above it is refused, naming
  // the file (an embedding would meet it only in some step). 0: not checked.
  int64_t vocab = 0;
  float pad_token = 0;      // the data of padded positions (byte 0 is not text)
  float ignore_label = -1;  // the label of padded positions
};

// Note [Text windows]
// The tokens are the text's bytes (vocabulary 256, no tokenizer to download). Sample w is the
// window of seq_len tokens from w · stride, its label the next token of each position (the window
// shifted by one). The epoch's order of windows depends on the seed alone; global batch b is
// windows [b·G, (b+1)·G) of that order (G = num_parts · batch_size) and worker r takes its r-th
// slice, so each global batch is the same whatever the number of workers (Note [Sharding]).
// Windows left over after the last full global batch are not served that epoch.
// Note [Text buckets]
// With buckets, sample i is line i of the text (the bytes between newlines; empty lines and
// lines longer than the largest bucket are left out, as MXNet's BucketSentenceIter leaves out
// sentences no bucket holds): its data the line's bytes, its labels the next byte of each (the
// last one is the newline), both padded to the bucket length with pad_token and ignore_label.
// Each batch comes from one bucket and carries its length as DataBatch::bucket_key and its
// shapes in provide_data/provide_label; provide_data() describes the largest bucket (the default
// bucket). Per epoch each bucket's lines are shuffled and cut into global batches (a partial one
// is dropped), and the global batches of all buckets are shuffled together, by the seed alone;
// worker r takes its r-th slice of each, so global batches do not depend on the worker count.
class TextIter : public DataIter {
 public:
  // Throws naming the file when one cannot be read, and the sizes when the text is too short
  // for one global batch.
  explicit TextIter(const TextIterOptions& options);

  void Reset() override;
  bool Next() override;
  const DataBatch& Value() const override { return *current_; }
  const std::vector<DataDesc>& provide_data() const override { return batch_.provide_data; }
  const std::vector<DataDesc>& provide_label() const override { return batch_.provide_label; }
  int64_t batch_size() const override { return options_.batch_size; }

  int64_t num_tokens() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t num_windows() const { return num_windows_; }
  int64_t batches_per_epoch() const { return batches_; }
  // Lines served with buckets, and lines left out for being longer than the largest bucket.
  int64_t num_lines() const { return static_cast<int64_t>(lines_.size()); }
  int64_t long_lines() const { return long_lines_; }

 private:
  void InitBuckets();
  // The files, and which part of them this iterator reads, for messages.
  std::string Source() const;
  bool NextBucketed();

  TextIterOptions options_;
  std::vector<uint8_t> tokens_;
  int64_t stride_ = 0;  // options_.stride, or seq_len for 0
  int64_t num_windows_ = 0, batches_ = 0, next_batch_ = 0;
  std::vector<int64_t> order_;
  std::mt19937_64 rng_;
  DataBatch batch_;  // windows; with buckets, the largest bucket's batch
  const DataBatch* current_ = &batch_;
  // Buckets: each line's (offset, length); per bucket its lines, its batch; this epoch's global
  // batches as (bucket, first position in that bucket's order).
  std::vector<std::pair<int64_t, int64_t>> lines_;
  int64_t long_lines_ = 0;
  std::vector<std::vector<int64_t>> bucket_lines_;
  std::vector<DataBatch> bucket_batches_;
  std::vector<std::pair<int, int64_t>> schedule_;
};

}  // namespace cohort
