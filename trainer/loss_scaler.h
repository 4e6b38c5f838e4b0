// LossScaler: dynamic loss scaling for float16 training (Note [Loss scaling]).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace cohort {

// Note [Loss scaling]
// float16 holds nothing below 6e-8, and a network's activation gradients are often smaller, so
// in float16 they vanish. As PyTorch's GradScaler and MXNet AMP's LossScaler: the loss layers
// multiply the gradient they start backward with by a scale S (OpContext::loss_scale), which
// keeps small gradients representable, and the update divides S out again (folded into the
// step's rescale_grad). S is a power of two, so both products are exact: in float32, scaling
// changes no bit of the result. A step whose summed gradient holds a NaN or an infinity (S too
// large) is skipped and S halves; after growth_interval clean steps in a row S doubles, up to
// 2^24. Every worker holds the same sums, so all skip alike. At S = 1 the gradient is not
// finite even unscaled: that step is the non-finite handling's (on_nonfinite), as without
// scaling. S and the clean steps are saved in the checkpoint's states file and resumed, so a
// resumed run scales as the uninterrupted one would have.
class LossScaler {
 public:
  static constexpr int kMaxLog2 = 24;
  // The checkpoint entries CheckpointEntries writes and Restore reads.
  static constexpr const char* kLog2Entry = "checkpoint:loss_scale_log2";
  static constexpr const char* kCleanEntry = "checkpoint:loss_scale_clean";
  struct Options {
    bool enabled = false;
    int init_log2 = 16;  // S = 2^16 at the start, as GradScaler and MXNet's AMP
    int64_t growth_interval = 2000;
  };
  // What a step does with its summed gradient.
  enum class Verdict { kUpdate, kSkip, kNotFiniteUnscaled };

  LossScaler() = default;
  explicit LossScaler(const Options& options);

  bool enabled() const { return options_.enabled; }
  // The loss layers' factor for the next backward (1 when off).
  float scale() const;
  // After the step's sums: whether to update, and the scale for the next step.
  Verdict AfterStep(bool finite);
  // Steps skipped for an overflow since the start of this run.
  int64_t skipped_steps() const { return skipped_; }

  // The state a checkpoint keeps ("checkpoint:loss_scale_log2", "checkpoint:loss_scale_clean"),
  // empty when off; Restore takes them back, checked (throws DataError naming `path`).
  std::map<std::string, int64_t> CheckpointEntries() const;
  void Restore(const std::map<std::string, int64_t>& entries, const std::string& path);

 private:
  Options options_;
  int log2_ = 0;
  int64_t clean_ = 0, skipped_ = 0;
};

}  // namespace cohort
