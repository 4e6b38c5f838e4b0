// Patterns over names (parameters, layers) that a user hands Cohort, on a linear-time engine.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace cohort {

// Note [Name patterns]
// Every pattern a user gives (model.fixed_params, and any later pattern over names) runs on RE2:
// matching takes time linear in the name whatever the pattern (no backtracking, so nested
// quantifiers such as "(a*)*b" cannot hang a run), parsing and compiling use no recursion that a
// long or deeply nested pattern could overflow the stack with, the compiled program is bounded in
// memory, and a pattern longer than kMaxLength is refused before it is parsed. RE2's syntax is the
// POSIX/Perl one that names need ("fc1_.*", "conv[0-9]+_weight", "(fc|conv)1_.*"); backreferences
// and lookaround are not in it, and a pattern that uses them is refused by name.
class NamePattern {
 public:
  static constexpr size_t kMaxLength = 4096;

  // Compiles `pattern`; throws ConfigError naming `what` (the key it came from) and the pattern
  // when it is too long or not a valid expression.
  NamePattern(std::string_view pattern, std::string_view what);
  ~NamePattern();
  NamePattern(NamePattern&&) noexcept;
  NamePattern& operator=(NamePattern&&) noexcept;

  // Whether the whole of `name` matches (as std::regex_match and MXNet's fixed names do).
  bool Matches(std::string_view name) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace cohort
