// Link units for cohort-plan (apps/link_units.h).
#include "apps/link_units.h"

#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "base/error.h"

namespace cohort {
namespace {

// The number at the front of `text` and the rest; false when there is no number.
bool SplitNumber(const std::string& text, double* value, std::string* unit) {
  const char* begin = text.c_str();
  char* end = nullptr;
  *value = std::strtod(begin, &end);
  if (end == begin) return false;
  *unit = std::string(end);
  while (!unit->empty() && unit->front() == ' ') unit->erase(0, 1);
  return true;
}

[[noreturn]] void Refuse(const std::string& option, const std::string& text,
                         const std::string& forms) {
  throw ConfigError(option + ": '" + text + "': expected " + forms, __FILE__, __LINE__);
}

}  // namespace

double ParseBandwidth(const std::string& text, const std::string& option) {
  const std::string forms =
      "a bandwidth with its unit, e.g. 100Gbit, 25Gbps, 12.5GB/s or 450GB/s (bits: bit, bit/s, "
      "b/s, bps; bytes: B, B/s, Bps; prefixes k, M, G, T or Ki, Mi, Gi, Ti)";
  double value = 0;
  std::string unit;
  if (!SplitNumber(text, &value, &unit)) Refuse(option, text, forms);
  if (unit.empty()) {
    Refuse(option, text,
           "a unit after the number (" + text + "GB/s or " + text + "Gbit? they differ by 8); " +
               forms);
  }
  static const std::vector<std::pair<std::string, double>> prefixes = {
      {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
      {"k", 1e3},     {"K", 1e3},        {"M", 1e6},           {"G", 1e9},
      {"T", 1e12},    {"", 1.0}};
  static const std::vector<std::pair<std::string, double>> units = {
      {"bit/s", 0.125}, {"bit", 0.125}, {"b/s", 0.125}, {"bps", 0.125},
      {"B/s", 1.0},     {"Bps", 1.0},   {"B", 1.0}};
  for (const auto& [prefix, scale] : prefixes) {
    if (unit.rfind(prefix, 0) != 0) continue;
    for (const auto& [name, bytes] : units) {
      if (unit.substr(prefix.size()) != name) continue;
      const double result = value * scale * bytes;
      if (!std::isfinite(result) || result <= 0) {
        Refuse(option, text, "a finite bandwidth above 0");
      }
      return result;
    }
  }
  Refuse(option, text, forms);
}

double ParseLatency(const std::string& text, const std::string& option) {
  const std::string forms = "a latency with its unit, e.g. 3us, 1.5ms (ns, us, µs, ms, s)";
  double value = 0;
  std::string unit;
  if (!SplitNumber(text, &value, &unit)) Refuse(option, text, forms);
  static const std::vector<std::pair<std::string, double>> units = {
      {"ns", 1e-9}, {"us", 1e-6}, {"\u00b5s", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  if (unit.empty()) Refuse(option, text, "a unit after the number (" + text + "us?); " + forms);
  for (const auto& [name, seconds] : units) {
    if (unit != name) continue;
    const double result = value * seconds;
    if (!std::isfinite(result) || result < 0) Refuse(option, text, "a finite latency >= 0");
    return result;
  }
  Refuse(option, text, forms);
}

}  // namespace cohort
