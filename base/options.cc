// Formatting of option values and the near-match suggestions of unknown keys.
#include "base/options.h"

#include <charconv>
#include <cmath>

namespace cohort {
namespace {

std::string NumberText(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<int64_t>(v));  // 1000000000, not 1e+09
  }
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof(buffer), v).ptr;  // shortest round trip
  return std::string(buffer, end);
}

template <typename T>
std::string ListText(const std::vector<T>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + OptionText(items[i]);
  return out + "]";
}

// Edits (insertions, deletions, substitutions, swaps of neighbours) from a to b.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string OptionText(const Options::Value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return NumberText(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return v.empty() ? "\"\"" : v;
        } else {
          return ListText(v);
        }
      },
      value);
}

std::string NearestName(const std::string& key, const std::vector<std::string>& accepted) {
  std::string best;
  size_t best_distance = std::max<size_t>(1, key.size() / 3) + 1;
  for (const std::string& candidate : accepted) {
    const size_t d = EditDistance(key, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best;
}

void FailUnknownOption(const std::string& where, const std::string& key,
                       const std::vector<std::string>& accepted, const std::string& owner) {
  const std::string prefix = where.substr(0, where.size() - key.size());
  const std::string near = NearestName(key, accepted);
  if (!near.empty()) {
    throw ConfigError("config: unknown key '" + where + "' (did you mean '" + prefix + near + "'?)",
                      __FILE__, __LINE__);
  }
  std::string names;
  for (const std::string& a : accepted) names += (names.empty() ? "" : ", ") + a;
  throw ConfigError("config: unknown key '" + where + "'; " +
                        (owner.empty() ? "the top level" : "'" + owner + "'") + " takes: " + names,
                    __FILE__, __LINE__);
}

}  // namespace cohort
