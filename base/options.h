// Options: one section of a configuration as typed values (Note [Options]), and the tables in
// which parts declare their sections' keys (Note [Declared options]).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
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

// Note [Declared options]
// Each part declares the keys of its configuration section once, in an OptionTable over the
// struct that holds them: key, type, the struct member, a range for numbers, a line of doc.
// The struct's initializers are the defaults. Every front end reads that one declaration: the
// YAML checker (the types), the YAML and --set reader and Module.fit's keywords (Read), the
// workers' agreement (Show) and `cohort-train --help-config` (Infos). A key added to a part is
// then accepted, checked, agreed and documented everywhere at once.

// One key as --help-config and the YAML checker see it.
struct OptionInfo {
  std::string key;    // within its section
  std::string type;   // int, int_or_auto, float, bool, string, path, ints, floats, strings, paths
  std::string value;  // the default, as YAML text; "" where it depends on other keys (see doc)
  std::string doc;
};

// A value as YAML text: shortest round-trip numbers, [a, b] lists.
std::string OptionText(const Options::Value& value);

// "unknown key 'optimizer.lrr' (did you mean 'optimizer.lr'?)" or "...; optimizer takes: a, b".
[[noreturn]] void FailUnknownOption(const std::string& where, const std::string& key,
                                    const std::vector<std::string>& accepted,
                                    const std::string& owner);
// The accepted name within a typo's reach of `key` (edits: insert, delete, substitute, swap),
// else "".
std::string NearestName(const std::string& key, const std::vector<std::string>& accepted);

// The option type of a member type, its value as an Options::Value, and a read that range-checks
// numbers (lo..hi, inclusive, within T's own range) before they are narrowed.
template <typename T>
std::string OptionTypeName() {
  if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_integral_v<T>) {
    return "int";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "float";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    return "ints";
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    return "floats";
  } else {
    static_assert(std::is_same_v<T, std::vector<std::string>>, "no option type for T");
    return "strings";
  }
}

template <typename T>
Options::Value OptionValue(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<int64_t>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(v);
  } else {
    return v;
  }
}

template <typename T>
T ReadOption(const Options& o, const std::string& key, const T& fallback,
             double lo = -std::numeric_limits<double>::infinity(),
             double hi = std::numeric_limits<double>::infinity()) {
  if constexpr (std::is_same_v<T, bool> || !std::is_arithmetic_v<T>) {
    return o.Get<T>(key, fallback);
  } else {
    using Wide = std::conditional_t<std::is_integral_v<T>, int64_t, double>;
    const Wide v = o.Get<Wide>(key, static_cast<Wide>(fallback));
    const double low = std::max<double>(lo, static_cast<double>(std::numeric_limits<T>::lowest()));
    const double high = std::min<double>(hi, static_cast<double>(std::numeric_limits<T>::max()));
    if (!(static_cast<double>(v) >= low && static_cast<double>(v) <= high)) {
      throw ConfigError("config: key '" + o.Where(key) + "': " + OptionText(OptionValue(v)) +
                            " is outside [" + OptionText(low) + ", " + OptionText(high) + "]",
                        __FILE__, __LINE__);
    }
    return static_cast<T>(v);
  }
}

template <typename S>
class OptionTable {
 public:
  using Reader = std::function<void(const Options&, const std::string& key, S*)>;
  using Shower = std::function<Options::Value(const S&)>;

  explicit OptionTable(std::string section) : section_(std::move(section)) {}

  // A member of S. Numbers are range-checked (lo..hi, inclusive) before they are narrowed.
  template <typename T>
  OptionTable& Field(std::string key, T S::*member, std::string doc,
                     double lo = -std::numeric_limits<double>::infinity(),
                     double hi = std::numeric_limits<double>::infinity()) {
    return Custom(
        std::move(key), OptionTypeName<T>(), std::move(doc),
        [member, lo, hi](const Options& o, const std::string& k, S* s) {
          s->*member = ReadOption<T>(o, k, s->*member, lo, hi);
        },
        [member](const S& s) { return OptionValue(s.*member); });
  }
  // A member of a member (a nested options struct).
  template <typename Sub, typename T>
  OptionTable& Field(std::string key, Sub S::*outer, T Sub::*member, std::string doc,
                     double lo = -std::numeric_limits<double>::infinity(),
                     double hi = std::numeric_limits<double>::infinity()) {
    return Custom(
        std::move(key), OptionTypeName<T>(), std::move(doc),
        [outer, member, lo, hi](const Options& o, const std::string& k, S* s) {
          (s->*outer).*member = ReadOption<T>(o, k, (s->*outer).*member, lo, hi);
        },
        [outer, member](const S& s) { return OptionValue((s.*outer).*member); });
  }
  // A string member that names an input file (relative to the configuration file's folder).
  OptionTable& Path(std::string key, std::string S::*member, std::string doc) {
    Field(std::move(key), member, std::move(doc));
    fields_.back().type = "path";
    return *this;
  }
  // The last key's default depends on other settings (its doc says how): none is listed.
  OptionTable& DefaultInDoc() {
    fields_.back().default_in_doc = true;
    return *this;
  }
  // A key read and shown by functions (enums, units, keys that set several members).
  OptionTable& Custom(std::string key, std::string type, std::string doc, Reader read,
                      Shower show) {
    fields_.push_back(
        {std::move(key), std::move(type), std::move(doc), std::move(read), std::move(show), false});
    return *this;
  }

  const std::string& section() const { return section_; }
  std::vector<std::string> Keys() const {
    std::vector<std::string> keys;
    for (const auto& f : fields_) keys.push_back(f.key);
    return keys;
  }
  // The option type of `key` ("" when the table lacks it).
  std::string TypeOf(const std::string& key) const {
    for (const auto& f : fields_) {
      if (f.key == key) return f.type;
    }
    return "";
  }
  // Sets the members of the keys `options` holds; a key the table lacks is a ConfigError with
  // the near match (`owner` names who refuses it in messages).
  void Read(const Options& options, S* s) const {
    const std::vector<std::string> keys = Keys();
    for (const std::string& key : options.Keys()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        FailUnknownOption(options.Where(key), key, keys, section_);
      }
    }
    for (const auto& f : fields_) {
      if (options.Has(f.key)) f.read(options, f.key, s);
    }
  }
  // Sets the members of the keys `options` holds that the table has, leaving the others to whoever
  // reads them (a data kind's keys among those of every kind).
  void ReadKnown(const Options& options, S* s) const {
    for (const auto& f : fields_) {
      if (options.Has(f.key)) f.read(options, f.key, s);
    }
  }
  // Every key with its type, its value in `defaults` and its doc.
  std::vector<OptionInfo> Infos(const S& defaults) const {
    std::vector<OptionInfo> infos;
    for (const auto& f : fields_) {
      infos.push_back({f.key, f.type, f.default_in_doc ? "" : OptionText(f.show(defaults)), f.doc});
    }
    return infos;
  }
  // "key value" for every key, for the workers' agreement and logs.
  std::string Show(const S& s) const {
    std::string out;
    for (const auto& f : fields_)
      out += (out.empty() ? "" : " ") + f.key + " " + OptionText(f.show(s));
    return out;
  }

 private:
  struct Entry {
    std::string key, type, doc;
    Reader read;
    Shower show;
    bool default_in_doc = false;
  };

  std::string section_;
  std::vector<Entry> fields_;
};

}  // namespace cohort
