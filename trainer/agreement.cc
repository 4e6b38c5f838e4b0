// CheckWorkersAgree (Note [Agreement]).
#include "trainer/agreement.h"

#include <cstdint>

#include "base/error.h"

namespace cohort {
namespace {

uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

void CheckWorkersAgree(KVStore& kvstore,
                       const std::vector<std::pair<std::string, std::string>>& items) {
  const int n = kvstore.num_workers();
  if (n < 2) return;
  constexpr int kParts = 4;
  std::vector<double> sums(items.size() * kParts * 2);
  std::vector<double> mine(items.size() * kParts);
  for (size_t i = 0; i < items.size(); ++i) {
    const uint64_t h = Fnv1a(items[i].second);
    for (int p = 0; p < kParts; ++p) {
      const double v = static_cast<double>((h >> (16 * p)) & 0xffff);
      mine[i * kParts + p] = v;
      sums[(i * kParts + p) * 2] = v;
      sums[(i * kParts + p) * 2 + 1] = v * v;
    }
  }
  kvstore.SumAcrossWorkers(sums);
  std::string differ;
  for (size_t i = 0; i < items.size(); ++i) {
    bool same = true;
    for (int p = 0; p < kParts; ++p) {
      const double v = mine[i * kParts + p];
      same = same && sums[(i * kParts + p) * 2] == n * v && sums[(i * kParts + p) * 2 + 1] == n * v * v;
    }
    if (same) continue;
    std::string value = items[i].second;
    if (value.size() > 80) value = value.substr(0, 77) + "...";
    differ += (differ.empty() ? "" : "; ") + items[i].first + " (here: " + value + ")";
  }
  if (!differ.empty()) {
    throw ConfigError("the " + std::to_string(n) +
                          " workers do not train the same thing; they differ in " + differ,
                      __FILE__, __LINE__);
  }
}

}  // namespace cohort
