// Logging on spdlog: one "cohort" logger writing to stderr, its level from COHORT_LOG_LEVEL.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string_view>

namespace cohort {

// The shared logger; created on first use. Library code logs here, never to stdout.
spdlog::logger& Log();

// Sets the level by name (trace, debug, info, warn, error, critical, off); throws on others.
void SetLogLevel(std::string_view level);

}  // namespace cohort
