// EnvConfig from the environment.
#include "base/env.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <thread>

#include "base/error.h"

namespace cohort {
namespace {

// A setting of the environment, within [min_value, max_value]; anything else is a ConfigError
// (exit 2) naming the variable, before any thread pool is sized from it.
int ReadInt(const char* name, int fallback, int min_value, int max_value = 1 << 30) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  std::string_view s(text);
  int value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || value < min_value || value > max_value) {
    throw ConfigError("environment variable " + std::string(name) + "='" + std::string(s) +
                          "': expected an integer in [" + std::to_string(min_value) + ", " +
                          std::to_string(max_value) + "]",
                      __FILE__, __LINE__);
  }
  return value;
}

// A setting of the environment that must be one of `choices`.
std::string ReadChoice(const char* name, const char* fallback,
                       std::initializer_list<std::string_view> choices) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  if (std::find(choices.begin(), choices.end(), std::string_view(text)) != choices.end())
    return text;
  std::string expected;
  for (std::string_view c : choices) expected += (expected.empty() ? "" : ", ") + std::string(c);
  throw ConfigError(
      "environment variable " + std::string(name) + "='" + text + "': expected one of " + expected,
      __FILE__, __LINE__);
}

// Note [Default thread count]
// A process gets the cores it may run on (its affinity mask, which mpirun --bind-to and taskset
// narrow). When it is not bound but shares the host with other ranks of an MPI job (Open MPI's
// OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS), it takes its share of the cores: two
// unbound ranks with all cores each oversubscribe the machine, and spinning BLAS and TBB threads
// then made `mpirun -np 2` on 2 cores run between 1.1x and 3.7x slower than one thread each.
int DefaultThreads() {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t mask;
  const int allowed = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : 0;
  int local_ranks = 0;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
    local_ranks = std::max(local_ranks, ReadInt(name, 0, 0));
  }
  return ShareOfCores(hardware, allowed, local_ranks);
}

}  // namespace

int ShareOfCores(int hardware, int allowed, int local_ranks) {
  hardware = std::max(1, hardware);
  if (allowed > 0 && allowed < hardware) return allowed;  // bound by mpirun or taskset
  return local_ranks > 1 ? std::max(1, hardware / local_ranks) : hardware;
}

namespace {

EnvConfig ReadEnv() {
  EnvConfig env;
  if (const char* level = std::getenv("COHORT_LOG_LEVEL"); level && *level) env.log_level = level;
  env.num_threads = ReadInt("COHORT_NUM_THREADS", DefaultThreads(), 1, kMaxThreads);
  env.gpu_mem_pool = ReadInt("COHORT_GPU_MEM_POOL", 1, 0) != 0;
  env.gpu_tf32 = ReadInt("COHORT_GPU_TF32", 0, 0) != 0;
  env.gpu_deterministic = ReadInt("COHORT_GPU_DETERMINISTIC", 1, 0, 1) != 0;
  env.kvstore_bucket_mb = ReadInt("COHORT_KVSTORE_BUCKET_MB", 4, 1, 4096);
  env.comm_timeout = ReadInt("COHORT_COMM_TIMEOUT", 600, 0, 1 << 24);
  env.kvstore_hierarchical = ReadInt("COHORT_KVSTORE_HIERARCHICAL", -1, 0, 1);
  env.ring_min_kb = ReadInt("COHORT_RING_MIN_KB", -1, 0, 1 << 24);
  env.ring_chunk_kb = ReadInt("COHORT_RING_CHUNK_KB", 0, 0, 1 << 20);
  env.ring_transport = ReadChoice("COHORT_RING_TRANSPORT", "auto", {"auto", "shm", "tcp", "mpi"});
  if (const char* name = std::getenv("COHORT_SOCKET_IFNAME")) env.socket_ifname = name;
  if (const char* o = std::getenv("COHORT_KVSTORE_OVERLAP"); o && *o) {
    env.kvstore_overlap = ReadInt("COHORT_KVSTORE_OVERLAP", 0, 0) != 0 ? 1 : 0;
  }
  return env;
}

}  // namespace

namespace {
EnvConfig& MutableEnv() {
  static EnvConfig env = ReadEnv();
  return env;
}
}  // namespace

const EnvConfig& Env() { return MutableEnv(); }

bool EliminateCommonExprOn() { return ReadInt("MXNET_ELIMINATE_COMMON_EXPR", 1, 0, 1) != 0; }

bool FuseOpsOn() { return ReadInt("COHORT_FUSE_OPS", 1, 0, 1) != 0; }

void SetNumThreads(int threads) {
  if (threads < 1 || threads > kMaxThreads) {
    throw ConfigError("threads: " + std::to_string(threads) + " is not between 1 and " +
                          std::to_string(kMaxThreads),
                      __FILE__, __LINE__);
  }
  MutableEnv().num_threads = threads;
}

}  // namespace cohort
