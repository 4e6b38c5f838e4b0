// ImageRecordIter: batches of images from MXNet RecordIO files (.rec, with an .idx when given),
// decoded and augmented on a thread pool (Note [Image records]).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/thread_arena.h"
#include "io/data_iter.h"
#include "io/image_augment.h"
#include "io/image_codec.h"
#include "io/recordio.h"

namespace cohort {

// MXNet's ImageRecordIter parameters, under the same names.
struct ImageRecordIterOptions {
  std::string path_imgrec;
  std::string path_imgidx;  // optional: without it the .rec is read once for record offsets
  std::array<int64_t, 3> data_shape = {3, 224, 224};  // (channels: 3 RGB or 1 gray, height, width)
  int64_t batch_size = 128;                          // this worker's batch
  int64_t resize = -1;  // the shorter side is resized to this before cropping; -1: no resize
  bool rand_crop = false;    // a random data_shape window; otherwise the center one
  bool rand_mirror = false;  // flip left-right with probability 1/2
  std::array<float, 3> mean = {0, 0, 0};  // mean_r, mean_g, mean_b
  std::array<float, 3> std = {1, 1, 1};   // std_r, std_g, std_b
  float scale = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  int64_t label_width = 1;
  int preprocess_threads = 4;
  // Note [Decode budget]: the decoded pixels the decoding threads may hold at once.
  int64_t decode_budget_mb = 2048;
  LastBatchHandle last_batch = LastBatchHandle::kPad;  // round_batch: true is kPad
  int num_parts = 1;  // workers; each global batch is num_parts · batch_size samples
  int part_index = 0;
  bool skip_bad = false;    // an undecodable image is logged and replaced (see the Note)
  int64_t max_batches = 0;  // per epoch; 0: all
  // The per-pixel mean (MXNet's mean_img): a .params file holding "mean_img" of data_shape,
  // computed over every record (center crops, no random augmentation) and written when missing.
  std::string mean_img;
  ImageAugmentOptions augment;  // Note [Image augmenters]
  int64_t seed_aug = -1;        // the augmenters' seed; -1: `seed`
};

// Note [Decode budget]
// A PNG of a few hundred KB can declare 16384 x 16384 pixels (805 MB decoded), and eight in a
// batch took 3-6 GB. So the decoded pixels the pipeline holds are bounded by decode_budget_mb
// (data.decode_budget_mb, 2048): each decoding thread works on one image at a time and holds at
// most three images of it (decoded, resized, warped), so an image may have at most
// budget / (threads x 3 images x 3 bytes) pixels; a larger one is refused before its pixels are
// allocated, as a bad image (skip_bad decides) named with the size it declares and the budget.
// After a sample is cropped into the batch, a slot gives back images over 1 MB, so the slots of
// a batch keep only small buffers between batches.

// Note [Image records]
// Each record is MXNet's IRHeader, its labels and an encoded JPEG or PNG (io/recordio.h). A
// sample goes through what MXNet's default augmenter does, in its order: decode (RGB, or gray
// for 1 channel); when `resize` > 0, scale so the shorter side is `resize` (the longer one
// resize·long/short, truncated), bilinear with OpenCV's pixel-center mapping; crop a data_shape
// window (random with rand_crop, else the center one, (H - h) / 2 rounded down); flip left-right
// with rand_mirror; then out[c][y][x] = (pixel - mean_c) / std_c · scale, planar (NCHW).
// Randomness comes from a hash of (seed, epoch, record number) alone, so a sample's crop and
// flip do not depend on the thread count, the number of workers or the batch it falls in.
//
// The epoch's order of records depends on the seed alone (shuffled per epoch); global batch b
// is positions [b·G, (b+1)·G) of that order (G = num_parts · batch_size) and worker r takes its
// r-th slice, so each global batch is the same whatever the number of workers (Note [Sharding],
// as TextIter). With kPad the last global batch wraps to the start of the order and
// DataBatch::pad counts the repeated samples of this worker's slice; kDiscard drops a partial
// last batch. Records are read on the calling thread (one file handle), then decoded and
// augmented on `preprocess_threads` threads into batch arrays allocated once.
//
// Bad input: a torn record, a wrong magic word or a label count other than label_width throws
// naming the file, the record number and its byte offset. An image that does not decode, or is
// smaller than data_shape after resizing, throws the same way, unless skip_bad: then it is
// logged and its slot takes the batch's first good sample (batches keep their size, so workers
// stay in step), and bad_count() counts it.
class ImageRecordIter : public DataIter {
 public:
  explicit ImageRecordIter(const ImageRecordIterOptions& options);

  void Reset() override;
  bool Next() override;
  const DataBatch& Value() const override { return batch_; }
  const std::vector<DataDesc>& provide_data() const override { return batch_.provide_data; }
  const std::vector<DataDesc>& provide_label() const override { return batch_.provide_label; }
  int64_t batch_size() const override { return options_.batch_size; }
  std::string DescribeLabelOf(int64_t record) const override;

  int64_t num_records() const { return static_cast<int64_t>(offsets_.size()); }
  int64_t batches_per_epoch() const { return batches_; }
  // Images skipped as undecodable since construction (skip_bad).
  int64_t bad_count() const { return bad_count_; }

 private:
  // One batch slot's work space, reused from batch to batch.
  struct Slot {
    std::string record;
    Image decoded, resized, warped;
    std::string error;  // empty when the sample is good
  };
  // Decodes `record` into `s` (its labels into `label`) and applies resize and, with `random`,
  // the warp and HSL jitter; returns the image to crop, or null with s.error set.
  const Image* Prepare(Slot& s, int64_t record, bool random, float* label);
  // Gives back a slot's images larger than kKeepBytes (Note [Decode budget]).
  static void ReleaseLarge(Slot& s);
  void Process(int64_t slot, int64_t record);
  void LoadOrComputeMeanImage();
  // The sample's random bits this epoch, from seed_aug (or seed) (Note [Image records]).
  uint64_t AugmentBits(int64_t record) const;
  [[noreturn]] void FailAt(int64_t record, const std::string& what) const;

  ImageRecordIterOptions options_;
  RecordIOReader reader_;
  std::vector<uint64_t> offsets_;  // byte offset of each record
  std::vector<int64_t> order_;
  std::mt19937_64 rng_;
  int64_t epoch_ = -1, batches_ = 0, next_batch_ = 0, bad_count_ = 0;
  std::vector<Slot> slots_;
  uint64_t max_pixels_ = 0;  // an image's share of the decode budget (Note [Decode budget])
  std::unique_ptr<ThreadArena> arena_;
  DataBatch batch_;
  std::vector<float> mean_image_;  // (channels, height, width) when mean_img is given
};

}  // namespace cohort
