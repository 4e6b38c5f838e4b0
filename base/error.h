// Errors: cohort::Error and the COHORT_CHECK family of macros that throw it.
#pragma once

#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace cohort {

// The one exception type of Cohort's libraries. what() is the message followed by the source
// location, e.g. "model.params: array 3: truncated data [ndarray/params_io.cc:210]".
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, const char* file, int line);

  const std::string& message() const { return message_; }
  const char* file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string message_;
  const char* file_;
  int line_;
};

// A setting is wrong (an unknown key, a wrong type, a value out of range, a missing file): the
// CLIs exit 2 for it with its one-line message.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// The contents of an input file are wrong (a torn record, an image that does not decode, a
// label out of place): the user's data to fix, so the CLIs exit 2 for it as for a bad config.
class DataError : public Error {
 public:
  using Error::Error;
};

// A label the network or a metric cannot take (not a class number, or past the classes). It
// carries the value so that the trainer, which knows the batch, can name the sample holding it
// (a record of a .rec, a row of a CSV file): Trainer's Note [Naming a bad label].
class LabelError : public DataError {
 public:
  LabelError(const std::string& message, float label, const char* file, int line)
      : DataError(message, file, line), label_(label) {}
  float label() const { return label_; }

 private:
  float label_;
};

// An allocation that cannot succeed: the message says how many bytes on which device, and the
// code that knows what they were for adds it (the executor names the network and its shapes).
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// A CUDA, cuBLAS, cuDNN or NCCL call failed (base/error_cuda.h's checks). The library's message
// names no operator, so the executor adds the node whose kernel made the call.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// Every worker of a job meets this error at the same step, decided from values all of them hold
// alike (a summed gradient that is not finite): the CLIs print it once, from rank 0, and the
// workers exit together instead of aborting one another.
class AgreedError : public Error {
 public:
  using Error::Error;
};

namespace detail {

// Collects a message with operator<< and throws it as an Error when the full expression ends.
// For a failed check the message is the streamed text when there is one (what the user needs to
// read), else "Check failed: <condition>"; a comparison adds its operands' values.
class ErrorStream {
 public:
  ErrorStream(const char* file, int line, const char* check = nullptr, std::string values = {},
              bool device = false)
      : file_(file), line_(line), check_(check), values_(std::move(values)), device_(device) {}
  ErrorStream(const ErrorStream&) = delete;
  ErrorStream& operator=(const ErrorStream&) = delete;
  ~ErrorStream() noexcept(false);
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
  const char* file_;
  int line_;
  const char* check_;
  std::string values_;
  bool device_;  // throw a DeviceError
};

// Turns `cond ? (void)0 : stream << ...` into a void expression (glog's trick).
struct Voidify {
  void operator&(std::ostream&) {}
};

// Nothing when pred(a, b) holds, else "<a> vs. <b>".
template <typename A, typename B, typename Pred>
std::optional<std::string> CheckOp(const A& a, const B& b, Pred pred) {
  if (pred(a, b)) return std::nullopt;
  std::ostringstream s;
  s << a << " vs. " << b;
  return s.str();
}

}  // namespace detail
}  // namespace cohort

// COHORT_THROW() << "message": throws cohort::Error with the streamed message.
#define COHORT_THROW() ::cohort::detail::ErrorStream(__FILE__, __LINE__).stream()

// COHORT_THROW_DEVICE() << "message": throws cohort::DeviceError (a GPU library call failed).
#define COHORT_THROW_DEVICE() \
  ::cohort::detail::ErrorStream(__FILE__, __LINE__, nullptr, {}, true).stream()
// COHORT_CHECK(cond) << "what was expected": throws when cond is false.
#define COHORT_CHECK(cond)               \
  (cond) ? (void)0                       \
         : ::cohort::detail::Voidify() & \
               ::cohort::detail::ErrorStream(__FILE__, __LINE__, #cond).stream()

#define COHORT_CHECK_OP_(a, b, pred, op)                                                     \
  while (auto cohort_check_values_ = ::cohort::detail::CheckOp((a), (b), pred))              \
  ::cohort::detail::ErrorStream(__FILE__, __LINE__, #a " " op " " #b, *cohort_check_values_) \
      .stream()

// COHORT_CHECK_EQ(a, b) << "...": the message names both values.
#define COHORT_CHECK_EQ(a, b) COHORT_CHECK_OP_(a, b, std::equal_to<>(), "==")
#define COHORT_CHECK_NE(a, b) COHORT_CHECK_OP_(a, b, std::not_equal_to<>(), "!=")
#define COHORT_CHECK_LT(a, b) COHORT_CHECK_OP_(a, b, std::less<>(), "<")
#define COHORT_CHECK_LE(a, b) COHORT_CHECK_OP_(a, b, std::less_equal<>(), "<=")
#define COHORT_CHECK_GT(a, b) COHORT_CHECK_OP_(a, b, std::greater<>(), ">")
#define COHORT_CHECK_GE(a, b) COHORT_CHECK_OP_(a, b, std::greater_equal<>(), ">=")
