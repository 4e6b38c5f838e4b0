// Batcher: order, shuffling, last-batch handling, sharding and gathering.
#include "io/batcher.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace cohort {

LastBatchHandle ParseLastBatchHandle(std::string_view text) {
  if (text == "pad") return LastBatchHandle::kPad;
  if (text == "discard") return LastBatchHandle::kDiscard;
  if (text == "roll_over") return LastBatchHandle::kRollOver;
  COHORT_THROW() << "unknown last_batch_handle '" << text
                 << "': expected pad, discard or roll_over";
  return LastBatchHandle::kPad;
}

std::vector<int64_t> ShardIndices(int64_t num_samples, int num_parts, int part_index) {
  COHORT_CHECK(num_parts >= 1 && part_index >= 0 && part_index < num_parts)
      << "part_index " << part_index << " of num_parts " << num_parts
      << ": expected num_parts >= 1 and 0 <= part_index < num_parts";
  COHORT_CHECK_GT(num_samples, 0) << "cannot shard an empty data set";
  const int64_t per_part = (num_samples + num_parts - 1) / num_parts;
  std::vector<int64_t> out(per_part);
  for (int64_t i = 0; i < per_part; ++i) out[i] = (part_index * per_part + i) % num_samples;
  return out;
}

namespace {

NDArray MakeBatchArray(const BatchField& f, int64_t batch_size) {
  Shape shape = f.samples.shape().WithDim0(batch_size);
  return NDArray::Empty(shape, f.dtype, Context::CPU());
}

DataDesc Describe(const BatchField& f, int64_t batch_size) {
  Shape shape = f.samples.shape().WithDim0(batch_size);
  return {f.name, shape, f.dtype, DefaultLayout(shape.ndim())};
}

}  // namespace

Batcher::Batcher(std::vector<BatchField> data, std::vector<BatchField> label,
                 const BatchOptions& options)
    : data_(std::move(data)), label_(std::move(label)), options_(options), rng_(options.seed) {
  COHORT_CHECK_GT(options_.batch_size, 0) << "batch_size must be positive";
  COHORT_CHECK(!data_.empty()) << "an iterator needs at least one data array";
  const int64_t n = data_[0].samples.shape().ndim() > 0 ? data_[0].samples.shape()[0] : 0;
  for (const auto* fields : {&data_, &label_}) {
    for (const BatchField& f : *fields) {
      COHORT_CHECK(!f.samples.is_none() && f.samples.ctx().is_host())
          << "'" << f.name << "': samples must be an array in host memory";
      COHORT_CHECK(f.samples.shape().ndim() > 0 && f.samples.shape()[0] == n)
          << "'" << f.name << "' has shape " << f.samples.shape() << " but '" << data_[0].name
          << "' has " << n << " samples: every array needs the same first dimension";
    }
  }
  part_ = options_.sharding == BatchOptions::Sharding::kParts
              ? ShardIndices(n, options_.num_parts, options_.part_index)
              : ShardIndices(n, 1, 0);
  if (options_.sharding == BatchOptions::Sharding::kParts) {
    options_.num_parts = 1;  // from here on the part is the whole data set
    options_.part_index = 0;
  }
  COHORT_CHECK(options_.num_parts >= 1 && options_.part_index >= 0 &&
               options_.part_index < options_.num_parts)
      << "part_index " << options_.part_index << " of num_parts " << options_.num_parts;
  order_ = part_;
  const int64_t global = options_.batch_size * options_.num_parts;
  stream_.reserve(part_.size() + global);
  carry_.reserve(global);
  for (const BatchField& f : data_) {
    batch_.data.push_back(MakeBatchArray(f, options_.batch_size));
    batch_.provide_data.push_back(Describe(f, options_.batch_size));
  }
  for (const BatchField& f : label_) {
    batch_.label.push_back(MakeBatchArray(f, options_.batch_size));
    batch_.provide_label.push_back(Describe(f, options_.batch_size));
  }
  batch_.index.resize(options_.batch_size);
  StartEpoch();
}

void Batcher::StartEpoch() {
  if (options_.shuffle && (options_.reshuffle_each_epoch || !shuffled_)) {
    std::shuffle(order_.begin(), order_.end(), rng_);
    shuffled_ = true;
  }
  stream_.assign(carry_.begin(), carry_.end());
  stream_.insert(stream_.end(), order_.begin(), order_.end());
  carry_.clear();
  cursor_ = 0;
}

void Batcher::Reset() { StartEpoch(); }

int64_t Batcher::BatchesThisEpoch() const {
  const int64_t global = options_.batch_size * options_.num_parts;
  const int64_t samples = static_cast<int64_t>(stream_.size());
  return options_.last_batch == LastBatchHandle::kPad ? (samples + global - 1) / global
                                                      : samples / global;
}

void Batcher::SkipEpoch() {
  while (Advance(/*gather=*/false)) {
  }
  StartEpoch();
}

// Note [Sharding]: the global batch is cut from the stream; this part serves its rows of it.
bool Batcher::Advance(bool gather) {
  const int64_t bs = options_.batch_size, global = bs * options_.num_parts;
  const int64_t left = static_cast<int64_t>(stream_.size() - cursor_);
  if (left <= 0) return false;
  if (left < global && options_.last_batch != LastBatchHandle::kPad) {
    if (options_.last_batch == LastBatchHandle::kRollOver) {
      carry_.assign(stream_.begin() + cursor_, stream_.end());
    }
    cursor_ = stream_.size();
    return false;
  }
  const int64_t real = std::min(left, global);  // the rest of the global batch is padding
  const int64_t first = options_.part_index * bs;
  int64_t* rows = batch_.index.data();
  for (int64_t i = 0; i < bs; ++i) {
    const int64_t g = first + i;
    rows[i] = g < real ? stream_[cursor_ + g] : stream_[(g - real) % stream_.size()];
  }
  batch_.pad = std::clamp<int64_t>(first + bs - real, 0, bs);
  cursor_ += real;
  if (!gather) return true;
  for (size_t i = 0; i < data_.size(); ++i)
    Gather(data_[i], batch_.data[i], rows, options_.batch_size);
  for (size_t i = 0; i < label_.size(); ++i)
    Gather(label_[i], batch_.label[i], rows, options_.batch_size);
  return true;
}

std::optional<HeldLabels> Batcher::AllLabels() const {
  for (const BatchField& field : label_) {
    if (field.dtype != DType::kFloat32) return std::nullopt;
  }
  HeldLabels held;
  held.index = part_;
  held.every_worker_alike = options_.sharding == BatchOptions::Sharding::kGlobalBatch;
  const int64_t m = static_cast<int64_t>(part_.size());
  for (const BatchField& field : label_) {
    held.labels.push_back(NDArray::Empty(field.samples.shape().WithDim0(m), DType::kFloat32));
    Gather(field, held.labels.back(), part_.data(), m);
  }
  return held;
}

void Batcher::Gather(const BatchField& field, const NDArray& out, const int64_t* rows,
                     int64_t count) const {
  const int64_t n = field.samples.shape()[0];
  const int64_t per_row = n == 0 ? 0 : field.samples.size() / n;
  const size_t in_row_bytes = per_row * DTypeSize(field.samples.dtype());
  const size_t out_row_bytes = per_row * DTypeSize(field.dtype);
  const char* in = static_cast<const char*>(field.samples.raw_data());
  char* out_data = static_cast<char*>(out.raw_data());
  const DType from = field.samples.dtype(), to = field.dtype;
  COHORT_CHECK(field.scale == 1.0f || to == DType::kFloat32)
      << "'" << field.name << "': scale needs float32 batches";
  constexpr int64_t kAhead = 4;  // shuffled rows are random reads: fetch a few rows ahead
  for (int64_t i = 0; i < count; ++i) {
    if (i + kAhead < count) {
      const char* next = in + rows[i + kAhead] * in_row_bytes;
      for (size_t line = 0; line < in_row_bytes; line += 64) __builtin_prefetch(next + line);
    }
    const char* src = in + rows[i] * in_row_bytes;
    char* dst = out_data + i * out_row_bytes;
    if (from == DType::kUint8 && to == DType::kFloat32) {  // pixels: convert and scale in one pass
      const uint8_t* s = reinterpret_cast<const uint8_t*>(src);
      float* d = reinterpret_cast<float*>(dst);
      for (int64_t j = 0; j < per_row; ++j) d[j] = static_cast<float>(s[j]) * field.scale;
      continue;
    }
    if (from == to) {
      std::memcpy(dst, src, out_row_bytes);
    } else {
      CastElements(src, from, dst, to, per_row);
    }
    if (field.scale != 1.0f) {
      float* d = reinterpret_cast<float*>(dst);
      for (int64_t j = 0; j < per_row; ++j) d[j] *= field.scale;
    }
  }
}

}  // namespace cohort
