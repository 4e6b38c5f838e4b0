// What an operator takes, declared once as data (MXNet's DMLC_DECLARE_FIELD idea): its inputs and
// each parameter's name, type, default and description. The C++ parser (ParamReader) takes the
// defaults, the enum choices and the set of known attributes from it, the Python constructors
// of cohort.nd / cohort.sym their signatures and docstrings, and `cohort-model ops` its listing
// (Note [Operator specs], operator.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cohort::op {

// The default of a parameter the caller must give.
inline constexpr std::nullopt_t kRequired = std::nullopt;

struct ParamSpec {
  std::string name;
  // As MXNet's documentation spells it: "int", "float", "double", "boolean", "string",
  // "Shape(tuple)", "{'max', 'avg'}" (an enum: the choices Cohort takes), "int or None", ...
  std::string type;
  std::optional<std::string> default_text;  // as MXNet writes it ("0", "[]", "None"); kRequired
  std::string doc;
};

struct OpSpec {
  std::string name;
  std::string doc;
  // The inputs in calling order (arguments, then auxiliary states); with var_inputs, the name
  // of the one variadic input.
  std::vector<std::string> inputs;
  // The parameter that counts a variable number of inputs ("num_args"), or "".
  std::string var_inputs;
  std::vector<ParamSpec> params;

  // The parameter named `name`, or nullptr.
  const ParamSpec* Param(const std::string& param) const;
};

// The choices of an enum type "{None, 'NCHW'}": None, NCHW; empty when `type` is no enum.
std::vector<std::string> EnumChoices(const std::string& type);

}  // namespace cohort::op
