// TextIter (Note [Text windows]).
#include "io/text_iter.h"

#include <algorithm>
#include <numeric>

#include "base/logging.h"
#include "io/idx_reader.h"

namespace cohort {

TextIter::TextIter(const TextIterOptions& options) : options_(options), rng_(options.seed) {
  const TextIterOptions& o = options_;
  COHORT_CHECK(!o.files.empty()) << "text data: no files given";
  COHORT_CHECK(o.seq_len > 0) << "text data: seq_len must be positive, got " << o.seq_len;
  COHORT_CHECK(o.stride >= 0) << "text data: stride must be positive, got " << o.stride;
  COHORT_CHECK(o.batch_size > 0) << "text data: batch_size must be positive";
  COHORT_CHECK(o.num_parts > 0 && o.part_index >= 0 && o.part_index < o.num_parts)
      << "text data: part " << o.part_index << " of " << o.num_parts;
  COHORT_CHECK(0 <= o.begin_fraction && o.begin_fraction < o.end_fraction && o.end_fraction <= 1)
      << "text data: the part [" << o.begin_fraction << ", " << o.end_fraction
      << ") of the text is empty or outside [0, 1]";
  std::vector<uint8_t> all;
  for (const std::string& path : o.files) {
    std::vector<uint8_t> bytes = ReadDecompressed(path);
    if (o.vocab > 0 && o.vocab < 256 && !bytes.empty()) {
      const uint8_t top = *std::max_element(bytes.begin(), bytes.end());
      if (top >= o.vocab) {
        throw ConfigError("text data: '" + path + "' holds byte " + std::to_string(top) +
                              ", outside the model's vocabulary of " + std::to_string(o.vocab) +
                              " (model.vocab; the tokens are the text's bytes)",
                          __FILE__, __LINE__);
      }
    }
    all.insert(all.end(), bytes.begin(), bytes.end());
  }
  const auto n = static_cast<double>(all.size());
  const auto begin = static_cast<int64_t>(o.begin_fraction * n);
  const auto end = static_cast<int64_t>(o.end_fraction * n);
  all.erase(all.begin() + end, all.end());  // keep [begin, end) without a second copy
  all.erase(all.begin(), all.begin() + begin);
  tokens_ = std::move(all);
  if (!o.buckets.empty()) {
    InitBuckets();
    Reset();
    return;
  }
  stride_ = o.stride > 0 ? o.stride : o.seq_len;
  const int64_t usable = num_tokens() - o.seq_len - 1;  // the last window needs one more token
  num_windows_ = usable < 0 ? 0 : usable / stride_ + 1;
  const int64_t global = o.batch_size * o.num_parts;
  batches_ = num_windows_ / global;
  if (o.max_batches > 0) batches_ = std::min(batches_, o.max_batches);
  COHORT_CHECK(batches_ > 0) << "text data: " << num_tokens() << " tokens of " << Source()
                             << " give "
                             << num_windows_ << " windows of " << o.seq_len
                             << ", fewer than one global batch of " << global;
  order_.resize(num_windows_);
  std::iota(order_.begin(), order_.end(), 0);
  const Shape shape{o.batch_size, o.seq_len};
  batch_.data.push_back(NDArray::Zeros(shape));
  batch_.label.push_back(NDArray::Zeros(shape));
  batch_.provide_data.push_back({"data", shape, DType::kFloat32, "NT"});
  batch_.provide_label.push_back({"softmax_label", shape, DType::kFloat32, "NT"});
  batch_.index.resize(o.batch_size);
  Reset();
}

std::string TextIter::Source() const {
  const TextIterOptions& o = options_;
  std::string source = o.files.front() + (o.files.size() > 1 ? " and others" : "");
  if (o.begin_fraction > 0) return source + " (the validation part)";
  if (o.end_fraction < 1) return source + " (the training part)";
  return source;
}

void TextIter::InitBuckets() {
  const TextIterOptions& o = options_;
  for (size_t b = 0; b < o.buckets.size(); ++b) {
    COHORT_CHECK(o.buckets[b] > 0 && (b == 0 || o.buckets[b] > o.buckets[b - 1]))
        << "text data: buckets must be positive lengths in ascending order, got "
        << o.buckets[b] << " at position " << b;
  }
  const int64_t longest = o.buckets.back();
  bucket_lines_.resize(o.buckets.size());
  const int64_t n = num_tokens();
  for (int64_t start = 0, i = 0; i < n; ++i) {
    if (tokens_[i] != '\n') continue;  // a line counts once its newline (its last label) is seen
    const int64_t length = i - start;
    if (length > longest) {
      ++long_lines_;
    } else if (length > 0) {
      const auto b = std::lower_bound(o.buckets.begin(), o.buckets.end(), length) - o.buckets.begin();
      bucket_lines_[b].push_back(num_lines());
      lines_.emplace_back(start, length);
    }
    start = i + 1;
  }
  const int64_t global = o.batch_size * o.num_parts;
  int64_t batches = 0;
  for (const auto& lines : bucket_lines_) batches += static_cast<int64_t>(lines.size()) / global;
  // A line is a sample once its newline (its last label) is read: a text's last line without
  // one is not.
  COHORT_CHECK(batches > 0) << "text data: " << num_lines() << " line(s) of " << Source()
                            << " fit buckets up to " << longest << " (" << long_lines_
                            << " longer; a line counts with its newline), fewer than one global "
                            << "batch of " << global << " in any bucket";
  if (long_lines_ > 0) {  // as MXNet's BucketSentenceIter: said, not dropped unseen
    Log().warn("text data: {} line(s) of {} are longer than the largest bucket, {}: left out",
               long_lines_, Source(), longest);
  }
  for (int64_t length : o.buckets) {
    const Shape shape{o.batch_size, length};
    DataBatch batch;
    batch.data.push_back(NDArray::Zeros(shape));
    batch.label.push_back(NDArray::Zeros(shape));
    batch.provide_data.push_back({"data", shape, DType::kFloat32, "NT"});
    batch.provide_label.push_back({"softmax_label", shape, DType::kFloat32, "NT"});
    batch.index.resize(o.batch_size);
    batch.bucket_key = length;
    bucket_batches_.push_back(std::move(batch));
  }
  batch_ = bucket_batches_.back();  // the default bucket's descriptors (and arrays)
}

void TextIter::Reset() {
  next_batch_ = 0;
  if (options_.buckets.empty()) {
    if (options_.shuffle) std::shuffle(order_.begin(), order_.end(), rng_);
    return;
  }
  const int64_t global = options_.batch_size * options_.num_parts;
  schedule_.clear();
  for (size_t b = 0; b < bucket_lines_.size(); ++b) {
    std::vector<int64_t>& lines = bucket_lines_[b];
    if (options_.shuffle) std::shuffle(lines.begin(), lines.end(), rng_);
    for (int64_t first = 0; first + global <= static_cast<int64_t>(lines.size()); first += global) {
      schedule_.emplace_back(static_cast<int>(b), first);
    }
  }
  if (options_.shuffle) std::shuffle(schedule_.begin(), schedule_.end(), rng_);
  batches_ = static_cast<int64_t>(schedule_.size());
  if (options_.max_batches > 0) batches_ = std::min(batches_, options_.max_batches);
}

bool TextIter::NextBucketed() {
  const TextIterOptions& o = options_;
  const auto [b, first] = schedule_[next_batch_++];
  DataBatch& batch = bucket_batches_[b];
  const int64_t length = o.buckets[b];
  float* data = static_cast<float*>(batch.data[0].raw_data());
  float* label = static_cast<float*>(batch.label[0].raw_data());
  for (int64_t i = 0; i < o.batch_size; ++i) {
    const int64_t line = bucket_lines_[b][first + o.part_index * o.batch_size + i];
    const auto [offset, n] = lines_[line];
    const uint8_t* t = tokens_.data() + offset;
    for (int64_t k = 0; k < length; ++k) {
      data[i * length + k] = k < n ? static_cast<float>(t[k]) : o.pad_token;
      label[i * length + k] = k < n ? static_cast<float>(t[k + 1]) : o.ignore_label;
    }
    batch.index[i] = line;
  }
  batch.pad = 0;
  current_ = &batch;
  return true;
}

bool TextIter::Next() {
  if (next_batch_ >= batches_) return false;
  if (!options_.buckets.empty()) return NextBucketed();
  const TextIterOptions& o = options_;
  const int64_t first = next_batch_ * o.batch_size * o.num_parts + o.part_index * o.batch_size;
  float* data = static_cast<float*>(batch_.data[0].raw_data());
  float* label = static_cast<float*>(batch_.label[0].raw_data());
  for (int64_t i = 0; i < o.batch_size; ++i) {
    const int64_t window = order_[first + i];
    const uint8_t* t = tokens_.data() + window * stride_;
    for (int64_t k = 0; k < o.seq_len; ++k) {
      data[i * o.seq_len + k] = static_cast<float>(t[k]);
      label[i * o.seq_len + k] = static_cast<float>(t[k + 1]);
    }
    batch_.index[i] = window;
  }
  batch_.pad = 0;
  ++next_batch_;
  return true;
}

}  // namespace cohort
