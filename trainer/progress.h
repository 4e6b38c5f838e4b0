// ProgressLine: the one-line training progress shown on a terminal.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "metric/eval_metric.h"

namespace cohort {

// Rewrites one line of `out` in place ("\r..."), at most every `period` when callers ask Due():
// epoch, batch (of the previous epoch's count, once known), samples/s over the epoch so far and the
// running metrics. Disabled unless `out` is a terminal, so logs and pipes never see it.
class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out, bool enabled = true,
                        std::chrono::milliseconds period = std::chrono::milliseconds(250));
  ~ProgressLine() { Clear(); }

  bool enabled() const { return enabled_; }
  // Whether an update is due: enabled and the period has passed since the last one. Callers
  // ask first, so that a training step gathers metrics only when the line is redrawn.
  bool Due() const;
  // tokens_per_sec >= 0 (text data) is shown beside samples/s, eta_seconds >= 0 after [i/N].
  void Update(int epoch, int64_t batch, int64_t total_batches, double samples_per_sec,
              const std::vector<EvalMetric::NameValue>& metrics, double tokens_per_sec = -1,
              double eta_seconds = -1);
  // While validation runs: "Epoch 3 validation [12/79]" (total_batches 0: unknown).
  void UpdateValidation(int epoch, int64_t batch, int64_t total_batches);
  // Erases the line, so that a log line can take its place.
  void Clear();

  // The text of one update (without "\r"), for tests.
  static std::string Format(int epoch, int64_t batch, int64_t total_batches, double samples_per_sec,
                            const std::vector<EvalMetric::NameValue>& metrics,
                            double tokens_per_sec = -1, double eta_seconds = -1);
  static std::string FormatValidation(int epoch, int64_t batch, int64_t total_batches);

 private:
  void Show(const std::string& text);
  std::FILE* out_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace cohort
