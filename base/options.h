// Options: one section of a configuration as typed values (Note [Options]).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "base/error.h"

namespace cohort {

// Note [Options]
// An app reads the configuration file (YAML for cohort-train) and hands each part its section as
// an Options; the part declares its keys with their types (a schema) so that the app rejects an
// unknown key or a wrong type before any work, and reads its own keys with Get. So a part that
// gains a key, or a data kind that is added, changes only that part.
class Options {
 public:
  using Value = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                             std::vector<double>, std::vector<std::string>>;

  // `section` names the keys in messages: "data" gives "data.batch".
  explicit Options(std::string section = "") : section_(std::move(section)) {}

  void Set(const std::string& key, Value value) { values_[key] = std::move(value); }
  bool Has(const std::string& key) const { return values_.count(key) != 0; }
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (const auto& [key, value] : values_) keys.push_back(key);
    return keys;
  }
  // "section.key", for messages.
  std::string Where(const std::string& key) const {
    return section_.empty() ? key : section_ + "." + key;
  }

  // The value of `key`, or `fallback` when it is absent. Integers read as floats too; any other
  // type than T throws a ConfigError naming the key.
  template <typename T>
  T Get(const std::string& key, T fallback) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    if (const T* v = std::get_if<T>(&it->second)) return *v;
    if constexpr (std::is_same_v<T, double>) {
      if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
    }
    if constexpr (std::is_same_v<T, std::vector<double>>) {
      if (const auto* i = std::get_if<std::vector<int64_t>>(&it->second)) {
        return std::vector<double>(i->begin(), i->end());
      }
    }
    throw ConfigError("config: key '" + Where(key) + "' has another type than its reader expects",
                      __FILE__, __LINE__);
  }

 private:
  std::string section_;
  std::map<std::string, Value> values_;
};

}  // namespace cohort
