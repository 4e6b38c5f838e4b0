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
};

// Note [Text windows]
// The tokens are the text's bytes (vocabulary 256, no tokenizer to download). Sample w is the
// window of seq_len tokens from w · stride, its label the next token of each position (the window
// shifted by one). The epoch's order of windows depends on the seed alone; global batch b is
// windows [b·G, (b+1)·G) of that order (G = num_parts · batch_size) and worker r takes its r-th
// slice, so each global batch is the same whatever the number of workers (Note [Sharding]).
// Windows left over after the last full global batch are not served that epoch.
class TextIter : public DataIter {
 public:
  // Throws naming the file when one cannot be read, and the sizes when the text is too short
  // for one global batch.
  explicit TextIter(const TextIterOptions& options);

  void Reset() override;
  bool Next() override;
  const DataBatch& Value() const override { return batch_; }
  const std::vector<DataDesc>& provide_data() const override { return batch_.provide_data; }
  const std::vector<DataDesc>& provide_label() const override { return batch_.provide_label; }
  int64_t batch_size() const override { return options_.batch_size; }

  int64_t num_tokens() const { return static_cast<int64_t>(tokens_.size()); }
  int64_t num_windows() const { return num_windows_; }
  int64_t batches_per_epoch() const { return batches_; }

 private:
  TextIterOptions options_;
  std::vector<uint8_t> tokens_;
  int64_t stride_ = 0;  // options_.stride, or seq_len for 0
  int64_t num_windows_ = 0, batches_ = 0, next_batch_ = 0;
  std::vector<int64_t> order_;
  std::mt19937_64 rng_;
  DataBatch batch_;
};

}  // namespace cohort
