#include "trainer/loss_scaler.h"

#include <cmath>

#include "base/error.h"

namespace cohort {

LossScaler::LossScaler(const Options& options) : options_(options), log2_(options.init_log2) {
  COHORT_CHECK(options.init_log2 >= 0 && options.init_log2 <= kMaxLog2)
      << "loss scale 2^" << options.init_log2 << " is outside 2^0 .. 2^" << kMaxLog2;
  COHORT_CHECK(options.growth_interval >= 1) << "loss scale growth interval must be >= 1";
}

float LossScaler::scale() const { return enabled() ? std::ldexp(1.0f, log2_) : 1.0f; }

LossScaler::Verdict LossScaler::AfterStep(bool finite) {
  if (!enabled()) return finite ? Verdict::kUpdate : Verdict::kNotFiniteUnscaled;
  if (finite) {
    if (++clean_ >= options_.growth_interval) {
      clean_ = 0;
      if (log2_ < kMaxLog2) ++log2_;
    }
    return Verdict::kUpdate;
  }
  clean_ = 0;
  if (log2_ == 0) return Verdict::kNotFiniteUnscaled;
  --log2_;
  ++skipped_;
  return Verdict::kSkip;
}

std::map<std::string, int64_t> LossScaler::CheckpointEntries() const {
  if (!enabled()) return {};
  return {{kLog2Entry, log2_}, {kCleanEntry, clean_}};
}

void LossScaler::Restore(const std::map<std::string, int64_t>& entries, const std::string& path) {
  const auto log2 = entries.find(kLog2Entry);
  const auto clean = entries.find(kCleanEntry);
  if (log2 == entries.end() && clean == entries.end()) return;  // saved without scaling
  if (log2 == entries.end() || clean == entries.end()) {
    throw DataError(
        "'" + path + "': " + kLog2Entry + " and " + kCleanEntry + " come together; one is missing",
        __FILE__, __LINE__);
  }
  if (log2->second < 0 || log2->second > kMaxLog2) {
    throw DataError("'" + path + "': " + kLog2Entry + " " + std::to_string(log2->second) +
                        " is outside 0.." + std::to_string(kMaxLog2),
                    __FILE__, __LINE__);
  }
  if (clean->second < 0) {  // one above the growth interval grows at the next clean step
    throw DataError(
        "'" + path + "': " + kCleanEntry + " " + std::to_string(clean->second) + " is negative",
        __FILE__, __LINE__);
  }
  if (!enabled()) return;  // a run without scaling ignores them
  log2_ = static_cast<int>(log2->second);
  clean_ = clean->second;
}

}  // namespace cohort
