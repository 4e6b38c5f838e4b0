// The "cohort" spdlog logger.
#include "base/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <string>

#include "base/env.h"
#include "base/error.h"

namespace cohort {
namespace {

// `what` names the setting in the message (a bad value is the user's: ConfigError, exit 2).
spdlog::level::level_enum ParseLevel(std::string_view level, const char* what) {
  auto parsed = spdlog::level::from_str(std::string(level));
  // spdlog maps unknown names to "off"; only "off" itself may mean off.
  if (parsed == spdlog::level::off && level != "off") {
    throw ConfigError(std::string(what) + ": unknown log level '" + std::string(level) +
                          "': expected trace, debug, info, warn, error, critical or off",
                      __FILE__, __LINE__);
  }
  return parsed;
}

std::shared_ptr<spdlog::logger> MakeLogger() {
  auto logger = spdlog::stderr_color_mt("cohort");
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  logger->set_level(ParseLevel(Env().log_level, "COHORT_LOG_LEVEL"));
  return logger;
}

}  // namespace

spdlog::logger& Log() {
  static std::shared_ptr<spdlog::logger> logger = MakeLogger();
  return *logger;
}

void SetLogLevel(std::string_view level) { Log().set_level(ParseLevel(level, "log_level")); }

}  // namespace cohort
