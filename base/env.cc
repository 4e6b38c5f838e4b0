// EnvConfig from the environment.
#include "base/env.h"

#include <charconv>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "base/error.h"

namespace cohort {
namespace {

int ReadInt(const char* name, int fallback, int min_value) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  std::string_view s(text);
  int value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  COHORT_CHECK(ec == std::errc() && ptr == s.data() + s.size() && value >= min_value)
      << "environment variable " << name << "='" << s << "': expected an integer >= " << min_value;
  return value;
}

EnvConfig ReadEnv() {
  EnvConfig env;
  if (const char* level = std::getenv("COHORT_LOG_LEVEL"); level && *level) env.log_level = level;
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  env.num_threads = ReadInt("COHORT_NUM_THREADS", hardware > 0 ? hardware : 1, 1);
  env.gpu_mem_pool = ReadInt("COHORT_GPU_MEM_POOL", 1, 0) != 0;
  env.kvstore_bucket_mb = ReadInt("COHORT_KVSTORE_BUCKET_MB", 4, 1);
  return env;
}

}  // namespace

const EnvConfig& Env() {
  static const EnvConfig env = ReadEnv();
  return env;
}

}  // namespace cohort
