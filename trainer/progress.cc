// ProgressLine: a throttled, in-place status line on a terminal.
#include "trainer/progress.h"

#include <unistd.h>

namespace cohort {

ProgressLine::ProgressLine(std::FILE* out, bool enabled, std::chrono::milliseconds period)
    : out_(out), enabled_(enabled && out && isatty(fileno(out))), period_(period) {}

std::string ProgressLine::Format(int epoch, int64_t batch, int64_t total_batches,
                                 double samples_per_sec,
                                 const std::vector<EvalMetric::NameValue>& metrics,
                                 double tokens_per_sec, double eta_seconds) {
  char head[96];
  if (total_batches > 0) {
    std::snprintf(head, sizeof(head), "Epoch %d [%lld/%lld] %.0f samples/s", epoch,
                  static_cast<long long>(batch), static_cast<long long>(total_batches),
                  samples_per_sec);
  } else {
    std::snprintf(head, sizeof(head), "Epoch %d [%lld] %.0f samples/s", epoch,
                  static_cast<long long>(batch), samples_per_sec);
  }
  std::string line = head;
  if (eta_seconds >= 0) {  // "ETA 1:05", or "ETA 2:03:05" past an hour
    const auto s = static_cast<long long>(eta_seconds + 0.5);
    char eta[48];
    if (s >= 3600) {
      std::snprintf(eta, sizeof(eta), " ETA %lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    } else {
      std::snprintf(eta, sizeof(eta), " ETA %lld:%02lld", s / 60, s % 60);
    }
    line += eta;
  }
  if (tokens_per_sec >= 0) {
    char tokens[48];
    std::snprintf(tokens, sizeof(tokens), " %.0f tokens/s", tokens_per_sec);
    line += tokens;
  }
  for (const auto& [name, value] : metrics) {
    char item[64];
    std::snprintf(item, sizeof(item), " %s=%.4f", name.c_str(), value);
    line += item;
  }
  return line;
}

std::string ProgressLine::FormatValidation(int epoch, int64_t batch, int64_t total_batches) {
  char text[96];
  if (total_batches > 0) {
    std::snprintf(text, sizeof(text), "Epoch %d validation [%lld/%lld]", epoch,
                  static_cast<long long>(batch), static_cast<long long>(total_batches));
  } else {
    std::snprintf(text, sizeof(text), "Epoch %d validation [%lld]", epoch,
                  static_cast<long long>(batch));
  }
  return text;
}

bool ProgressLine::Due() const {
  return enabled_ && (!shown_ || std::chrono::steady_clock::now() - last_ >= period_);
}

void ProgressLine::Update(int epoch, int64_t batch, int64_t total_batches, double samples_per_sec,
                          const std::vector<EvalMetric::NameValue>& metrics, double tokens_per_sec,
                          double eta_seconds) {
  if (!enabled_) return;
  Show(Format(epoch, batch, total_batches, samples_per_sec, metrics, tokens_per_sec, eta_seconds));
}

void ProgressLine::UpdateValidation(int epoch, int64_t batch, int64_t total_batches) {
  if (!enabled_) return;
  Show(FormatValidation(epoch, batch, total_batches));
}

void ProgressLine::Show(const std::string& text) {
  last_ = std::chrono::steady_clock::now();
  // \033[K erases what a longer previous line left to the right.
  std::fprintf(out_, "\r%s\033[K", text.c_str());
  std::fflush(out_);
  shown_ = true;
}

void ProgressLine::Clear() {
  if (!enabled_ || !shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = false;
}

}  // namespace cohort
