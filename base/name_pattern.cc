// Name patterns on RE2 (Note [Name patterns]).
#include "base/name_pattern.h"

#include <re2/re2.h>

#include "base/error.h"

namespace cohort {
namespace {

// What a pattern of a few thousand characters needs is far below this; RE2 refuses past it.
constexpr int64_t kMaxCompiledBytes = int64_t{8} << 20;

std::string Shown(std::string_view pattern) {
  constexpr size_t kShown = 80;
  if (pattern.size() <= kShown) return "'" + std::string(pattern) + "'";
  return "'" + std::string(pattern.substr(0, kShown)) + "...' (" + std::to_string(pattern.size()) +
         " characters)";
}

}  // namespace

NamePattern::NamePattern(std::string_view pattern, std::string_view what) : pattern_(pattern) {
  if (pattern.size() > kMaxLength) {
    throw ConfigError(std::string(what) + ": the pattern " + Shown(pattern) + " is longer than " +
                          std::to_string(kMaxLength) + " characters",
                      __FILE__, __LINE__);
  }
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxCompiledBytes);
  re_ = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re_->ok()) {
    throw ConfigError(std::string(what) + ": " + Shown(pattern) +
                          " is not a regular expression of RE2's syntax (" + re_->error() + ")",
                      __FILE__, __LINE__);
  }
}

NamePattern::~NamePattern() = default;
NamePattern::NamePattern(NamePattern&&) noexcept = default;
NamePattern& NamePattern::operator=(NamePattern&&) noexcept = default;

bool NamePattern::Matches(std::string_view name) const {
  return RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *re_);
}

}  // namespace cohort
