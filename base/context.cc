// Context parsing and printing.
#include "base/context.h"

#include <algorithm>
#include <charconv>
#include <ostream>

#include "base/error.h"

namespace cohort {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ParseId(std::string_view s, int32_t* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size() && *out >= 0;
}

bool ParseType(std::string_view s, DeviceType* type) {
  if (s == "cpu")
    *type = DeviceType::kCPU;
  else if (s == "gpu")
    *type = DeviceType::kGPU;
  else if (s == "cpu_pinned")
    *type = DeviceType::kCPUPinned;
  else
    return false;
  return true;
}

// Splits "gpu:0-3" / "gpu(2)" / "cpu" into type and id range; false when malformed.
bool ParseItem(std::string_view item, DeviceType* type, int32_t* first, int32_t* last) {
  std::string_view name = item, ids;
  if (auto colon = item.find(':'); colon != std::string_view::npos) {
    name = item.substr(0, colon);
    ids = item.substr(colon + 1);
  } else if (auto paren = item.find('('); paren != std::string_view::npos && item.back() == ')') {
    name = item.substr(0, paren);
    ids = item.substr(paren + 1, item.size() - paren - 2);
  }
  if (!ParseType(name, type)) return false;
  if (ids.empty()) {
    if (name != item) return false;  // "gpu:" with nothing after it
    *first = *last = 0;
    return true;
  }
  if (auto dash = ids.find('-'); dash != std::string_view::npos) {
    return ParseId(ids.substr(0, dash), first) && ParseId(ids.substr(dash + 1), last) &&
           *first <= *last;
  }
  if (!ParseId(ids, first)) return false;
  *last = *first;
  return true;
}

const char* kExpected = "expected cpu, cpu:N, gpu:N, gpu:A-B or cpu_pinned:N";

}  // namespace

std::string Context::ToString() const {
  switch (type) {
    case DeviceType::kCPU: return "cpu:" + std::to_string(id);
    case DeviceType::kGPU: return "gpu:" + std::to_string(id);
    case DeviceType::kCPUPinned: return "cpu_pinned:" + std::to_string(id);
  }
  return "unknown:" + std::to_string(id);
}

Context Context::Parse(std::string_view text) {
  DeviceType type;
  int32_t first, last;
  std::string_view item = Trim(text);
  COHORT_CHECK(ParseItem(item, &type, &first, &last) && first == last)
      << "invalid device '" << text << "': " << kExpected;
  return {type, first};
}

std::vector<Context> ParseContexts(std::string_view spec) {
  std::vector<Context> out;
  COHORT_CHECK(!Trim(spec).empty()) << "empty device list: " << kExpected;
  std::string_view rest = spec;
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = Trim(rest.substr(0, comma));
    DeviceType type;
    int32_t first, last;
    COHORT_CHECK(ParseItem(item, &type, &first, &last))
        << "invalid device '" << item << "' in '" << spec << "': " << kExpected;
    for (int32_t id = first; id <= last; ++id) {
      Context ctx{type, id};
      COHORT_CHECK(std::find(out.begin(), out.end(), ctx) == out.end())
          << "device " << ctx.ToString() << " is listed twice in '" << spec << "'";
      out.push_back(ctx);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, const Context& ctx) { return os << ctx.ToString(); }

}  // namespace cohort
