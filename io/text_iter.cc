// TextIter (Note [Text windows]).
#include "io/text_iter.h"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "base/logging.h"
#include "io/data_kinds.h"
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

// data.kind: text (Note [Data kinds], Note [Text windows]): files of text, gzip or dictzip.
namespace {
struct TextKeys {
  std::vector<std::string> train_files, val_files;
  double val_fraction = 0;
  int64_t val_batches = 0;
  int64_t stride = 0;
  std::vector<int64_t> buckets;

  static const OptionTable<TextKeys>& Table() {
    using K = TextKeys;
    static const OptionTable<K> table = [] {
      OptionTable<K> t("data");
      // Input files: type paths, relative to a configuration file's folder.
      auto files = [](std::vector<std::string> K::*member) {
        return std::pair<OptionTable<K>::Reader, OptionTable<K>::Shower>(
            [member](const Options& o, const std::string& key, K* k) {
              k->*member = o.Get<std::vector<std::string>>(key, k->*member);
            },
            [member](const K& k) { return OptionValue(k.*member); });
      };
      const auto [train_read, train_show] = files(&K::train_files);
      const auto [val_read, val_show] = files(&K::val_files);
      t.Custom("train_files", "paths", "text files, plain, gzip or dictzip", train_read, train_show)
          .Custom("val_files", "paths", "validation text (none: val_fraction)", val_read, val_show)
          .Field("val_fraction", &K::val_fraction,
                 "validate on this last part of the training text instead")
          .Field("val_batches", &K::val_batches, "at most this many validation batches (0: all)", 0,
                 kMaxDataCount)
          .Field("stride", &K::stride, "tokens between windows (0: the window, no overlap)", 0,
                 kMaxDataCount)
          .Field("buckets", &K::buckets,
                 "serve each line as a sample padded to the smallest of these lengths");
      return t;
    }();
    return table;
  }
};

void CheckTextKeys(const Options& data, const TextKeys& k, const DataContext& context) {
  for (const char* key : {"train_files", "val_files"}) {
    for (const std::string& path : data.Get<std::vector<std::string>>(key, {})) {
      if (!std::filesystem::exists(path)) {
        FailData("key '" + data.Where(key) + "': file '" + path + "' does not exist");
      }
    }
  }
  if (k.train_files.empty()) FailData("key 'data.train_files' is required for text data");
  if (k.val_fraction < 0 || k.val_fraction >= 1) {
    FailData("key 'data.val_fraction' must be in [0, 1)");
  }
  // Bucket lengths are sequence lengths, each a shape of its own: bounded one by one.
  for (int64_t length : k.buckets) {
    if (length <= 0) FailData("key '" + data.Where("buckets") + "' must list positive sizes");
    if (static_cast<double>(length) >= kMaxDataCount) {
      FailData("key '" + data.Where("buckets") + "' lists a length of 2^31 or more");
    }
  }
  for (size_t b = 1; b < k.buckets.size(); ++b) {
    if (k.buckets[b] <= k.buckets[b - 1]) {
      FailData("key 'data.buckets' must list positive lengths in ascending order");
    }
  }
  // Keys another text key overrides: said, as keys of other kinds are.
  if (!k.val_files.empty() && data.Has("val_fraction")) {
    Log().warn("config: data.val_fraction is ignored: data.val_files is the validation text");
  }
  if (!k.buckets.empty() && data.Has("stride")) {
    Log().warn("config: data.stride is ignored: with data.buckets every line is a sample");
  }
  if (!k.buckets.empty() && k.buckets.back() > context.seq_len) {
    FailData("key 'data.buckets': the largest bucket " + std::to_string(k.buckets.back()) +
             " exceeds model.seq_len " + std::to_string(context.seq_len) +
             " (the positions the model embeds)");
  }
}

// A text too short for the batch and window is a setting to change: exit 2, as config errors.
std::unique_ptr<TextIter> MakeTextIter(const TextIterOptions& options) {
  try {
    return std::make_unique<TextIter>(options);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    FailData("data: " + e.message());
  }
}
}  // namespace

DataKind TextDataKind() {
  auto check = [](const Options& data, const DataContext& context) {
    TextKeys k;
    TextKeys::Table().ReadKnown(data, &k);
    CheckTextKeys(data, k, context);
  };
  auto make = [](const Options& data, const DataSetup& setup) {
    TextKeys k;
    TextKeys::Table().ReadKnown(data, &k);
    const DataContext& c = setup.context;
    TextIterOptions o;
    o.seq_len = c.seq_len;
    o.vocab = c.vocab;
    o.stride = k.stride;
    o.buckets = k.buckets;  // Note [Text buckets]
    o.batch_size = c.batch_per_worker;
    o.seed = c.seed;
    o.num_parts = c.num_workers;
    o.part_index = c.rank;
    TextIterOptions train = o;
    train.files = k.train_files;
    train.shuffle = setup.common.shuffle;
    if (k.val_files.empty()) train.end_fraction = 1 - k.val_fraction;
    DataIters out;
    auto train_it = MakeTextIter(train);
    out.train_samples = train_it->batches_per_epoch() * c.batch_per_worker;
    out.train = setup.Wrap(std::move(train_it));
    if (!k.val_files.empty() || k.val_fraction > 0) {
      TextIterOptions val = o;
      val.files = k.val_files.empty() ? train.files : k.val_files;
      val.shuffle = false;
      if (k.val_files.empty()) val.begin_fraction = 1 - k.val_fraction;
      val.max_batches = k.val_batches;
      out.val = setup.Wrap(MakeTextIter(val));
    }
    return out;
  };
  return {"text", TextKeys::Table().Infos({}), check, make};
}

}  // namespace cohort
