// TextIter (Note [Text windows]).
#include "io/text_iter.h"

#include <algorithm>
#include <numeric>

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
    all.insert(all.end(), bytes.begin(), bytes.end());
  }
  const auto n = static_cast<double>(all.size());
  const auto begin = static_cast<int64_t>(o.begin_fraction * n);
  const auto end = static_cast<int64_t>(o.end_fraction * n);
  all.erase(all.begin() + end, all.end());  // keep [begin, end) without a second copy
  all.erase(all.begin(), all.begin() + begin);
  tokens_ = std::move(all);
  stride_ = o.stride > 0 ? o.stride : o.seq_len;
  const int64_t usable = num_tokens() - o.seq_len - 1;  // the last window needs one more token
  num_windows_ = usable < 0 ? 0 : usable / stride_ + 1;
  const int64_t global = o.batch_size * o.num_parts;
  batches_ = num_windows_ / global;
  if (o.max_batches > 0) batches_ = std::min(batches_, o.max_batches);
  COHORT_CHECK(batches_ > 0) << "text data: " << num_tokens() << " tokens of " << o.files.front()
                             << (o.files.size() > 1 ? " and others" : "") << " give "
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

void TextIter::Reset() {
  if (options_.shuffle) std::shuffle(order_.begin(), order_.end(), rng_);
  next_batch_ = 0;
}

bool TextIter::Next() {
  if (next_batch_ >= batches_) return false;
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
