// cohort::Error.
#include "base/error.h"

namespace cohort {
namespace {

// __FILE__ is relative to the repository root (-fmacro-prefix-map in CMakeLists.txt).
std::string WithLocation(const std::string& message, const char* file, int line) {
  return message + " [" + file + ":" + std::to_string(line) + "]";
}

}  // namespace

Error::Error(const std::string& message, const char* file, int line)
    : std::runtime_error(WithLocation(message, file, line)),
      message_(message),
      file_(file),
      line_(line) {}

namespace detail {

ErrorStream::~ErrorStream() noexcept(false) {
  std::string message = stream_.str();
  if (check_) {
    const std::string values = values_.empty() ? "" : ": " + values_;
    if (message.empty()) {
      message =
          std::string("Check failed: ") + check_ + (values_.empty() ? "" : " (" + values_ + ")");
    } else if (!values_.empty()) {
      message += std::string(" (") + check_ + values + ")";
    }
  }
  if (device_) throw DeviceError(message, file_, line_);
  throw Error(message, file_, line_);
}

}  // namespace detail
}  // namespace cohort
