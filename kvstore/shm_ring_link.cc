// The ring all-reduce's link through a shared segment (Note [Shared-memory ring]).
#include "kvstore/shm_ring_link.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <utility>

#include "base/error_mpi.h"
#include "base/logging.h"
#include "kvstore/collective_watchdog.h"
#include "ndarray/convert.h"

namespace cohort {
namespace {

constexpr int64_t kSlots = 4;           // chunks a rank may have in flight
constexpr int64_t kCounterBytes = 256;  // each counter alone on its cache lines (and their pair)

// One rank's part of the segment: its two counters, then its slots.
struct Region {
  uint64_t* produced;  // chunks this rank has put in its slots, ever
  uint64_t* consumed;  // chunks this rank has taken from the previous rank's slots, ever
  float* slots;
};

uint64_t Load(uint64_t* counter) {
  return std::atomic_ref<uint64_t>(*counter).load(std::memory_order_acquire);
}
void Store(uint64_t* counter, uint64_t value) {
  std::atomic_ref<uint64_t>(*counter).store(value, std::memory_order_release);
}
static_assert(std::atomic_ref<uint64_t>::is_always_lock_free,
              "the counters are shared between processes");

// Spins for `spin` (checking the clock every kSpins pauses), then yields the core at each call.
class Backoff {
 public:
  explicit Backoff(std::chrono::nanoseconds spin) : spin_(spin) {}
  // Returns true the first time it yields (the wait is then worth noting).
  bool Wait() {
    if (!yielding_) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      if (++spins_ % kSpins != 0) return false;
      const auto now = std::chrono::steady_clock::now();
      if (spins_ == kSpins) started_ = now;
      if (now - started_ < spin_) return false;
      yielding_ = true;
      sched_yield();
      return true;
    }
    sched_yield();
    return false;
  }
  void Reset() {
    spins_ = 0;
    yielding_ = false;
  }

 private:
  static constexpr int kSpins = 256;
  std::chrono::nanoseconds spin_;
  std::chrono::steady_clock::time_point started_;
  int spins_ = 0;
  bool yielding_ = false;
};

class ShmRingLink final : public RingLink {
 public:
  ShmRingLink(void* segment, int64_t segment_bytes, int rank, int size, int64_t chunk_floats,
              int next_job_rank, int prev_job_rank, std::chrono::nanoseconds spin)
      : segment_(segment),
        segment_bytes_(segment_bytes),
        chunk_(chunk_floats),
        mine_(RegionOf(rank)),
        next_(RegionOf((rank + 1) % size)),
        prev_(RegionOf((rank + size - 1) % size)),
        next_rank_(next_job_rank),
        prev_rank_(prev_job_rank),
        spin_(spin) {}  // a new segment is all zero: every counter starts at 0
  ~ShmRingLink() override { munmap(segment_, static_cast<size_t>(segment_bytes_)); }

  static int64_t RegionBytes(int64_t chunk_floats) {
    return 2 * kCounterBytes + kSlots * chunk_floats * static_cast<int64_t>(sizeof(float));
  }

  void Exchange(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                bool accumulate) override {
    Pass(send, send_count, recv, recv_count, accumulate, DType::kFloat32, false);
  }

  // Note [Gradient compression]: narrowed into the slots, widened out of them.
  bool ExchangeNarrow(const float* send, int64_t send_count, float* recv, int64_t recv_count,
                      bool accumulate, DType wire, bool round_sum) override {
    Pass(send, send_count, recv, recv_count, accumulate, wire, round_sum);
    return true;
  }

 private:
  // A slot holds chunk_ floats, or twice as many values of a 2-byte wire type.
  void Pass(const float* send, int64_t send_count, float* recv, int64_t recv_count, bool accumulate,
            DType wire, bool round_sum) {
    const bool narrow = wire != DType::kFloat32;
    const int64_t chunk = narrow ? 2 * chunk_ : chunk_;
    const int64_t send_chunks = (send_count + chunk - 1) / chunk;
    const int64_t recv_chunks = (recv_count + chunk - 1) / chunk;
    int64_t sent = 0, got = 0;
    Backoff backoff(spin_);
    while (sent < send_chunks || got < recv_chunks) {
      bool moved = false;
      // Put chunk `sent` in a slot once the next rank has freed it.
      if (sent < send_chunks && produced_ - Load(next_.consumed) < kSlots) {
        const int64_t n = std::min(chunk, send_count - sent * chunk);
        if (narrow) {
          NarrowFromFloat(send + sent * chunk, n, wire, Slot(mine_, produced_));
        } else {
          std::copy_n(send + sent * chunk, n, Slot(mine_, produced_));
        }
        Store(mine_.produced, ++produced_);
        ++sent;
        moved = true;
      }
      // Take chunk `got` once the previous rank has put it in its slot.
      if (got < recv_chunks && Load(prev_.produced) > consumed_) {
        const int64_t n = std::min(chunk, recv_count - got * chunk);
        const float* in = Slot(prev_, consumed_);
        float* out = recv + got * chunk;
        if (narrow && accumulate && round_sum) {
          AddWidenedRounded(wire, in, n, out);
        } else if (narrow && accumulate) {
          AddWidened(wire, in, n, out);
        } else if (narrow) {
          WidenToFloat(wire, in, n, out);
        } else if (accumulate) {
          for (int64_t i = 0; i < n; ++i) out[i] += in[i];
        } else {
          std::copy_n(in, n, out);
        }
        Store(mine_.consumed, ++consumed_);
        ++got;
        moved = true;
      }
      if (moved) {
        backoff.Reset();
      } else if (backoff.Wait()) {  // for the deadline's message
        NoteWaitingOn(got < recv_chunks ? prev_rank_ : next_rank_);
      }
    }
  }

  Region RegionOf(int rank) const {
    char* base = static_cast<char*>(segment_) + rank * RegionBytes(chunk_);
    return {reinterpret_cast<uint64_t*>(base), reinterpret_cast<uint64_t*>(base + kCounterBytes),
            reinterpret_cast<float*>(base + 2 * kCounterBytes)};
  }
  float* Slot(const Region& region, uint64_t chunk) const {
    return region.slots + static_cast<int64_t>(chunk % kSlots) * chunk_;
  }

  void* segment_;
  int64_t segment_bytes_;
  int64_t chunk_;  // floats a slot
  Region mine_, next_, prev_;
  int next_rank_, prev_rank_;  // in MPI_COMM_WORLD, for messages
  uint64_t produced_ = 0, consumed_ = 0;
  // How long a wait spins before it yields (Note [Waiting in the shared-memory ring]).
  std::chrono::nanoseconds spin_;
};

// The rank of `comm`'s rank `rank` in MPI_COMM_WORLD.
int WorldRank(MPI_Comm comm, int rank) {
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  MPI_CHECK(MPI_Comm_group(comm, &group));
  MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int world_rank = MPI_UNDEFINED;
  MPI_CHECK(MPI_Group_translate_ranks(group, 1, &rank, world, &world_rank));
  MPI_CHECK(MPI_Group_free(&group));
  MPI_CHECK(MPI_Group_free(&world));
  return world_rank;
}

// Removes the segments that jobs left in /dev/shm when they ended during their setup (killed
// between making a segment and every rank mapping it, when it is unlinked): those whose maker
// no longer runs and that have not been written for a minute. A job of another PID namespace
// sharing /dev/shm unlinks its segment within its setup, in seconds, so none of it is touched.
int RemoveStaleSegments() {
  DIR* dir = opendir("/dev/shm");
  if (!dir) return 0;
  int removed = 0;
  const time_t now = std::time(nullptr);
  while (const dirent* entry = readdir(dir)) {
    int pid = 0;
    if (std::sscanf(entry->d_name, "cohort-ring-%d-", &pid) != 1 || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    struct stat st = {};
    const std::string name = entry->d_name;
    if (stat(("/dev/shm/" + name).c_str(), &st) != 0 || now - st.st_mtime < 60) continue;
    removed += shm_unlink(("/" + name).c_str()) == 0;
  }
  closedir(dir);
  return removed;
}

}  // namespace

int CpusOfRanks(MPI_Comm comm) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) CPU_SET(0, &cpus);  // count one
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &cpus, sizeof(cpus), MPI_BYTE, MPI_BOR, comm));
  return CPU_COUNT(&cpus);
}

std::chrono::nanoseconds ShmRingSpin(int ranks, int cpus) {
  return ranks > cpus ? std::chrono::nanoseconds(0) : std::chrono::milliseconds(5);
}

std::unique_ptr<RingLink> ConnectShmRing(MPI_Comm comm, int64_t chunk_bytes, std::string* why) {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  // The first rank names and sizes the segment; the others must lay it out alike, so they take
  // its slot size and check that it is theirs. The name is unique to its process, its call and
  // a random token (processes of other PID namespaces may share /dev/shm).
  struct {
    char name[64];
    int64_t chunk_floats;
  } plan = {};
  plan.chunk_floats = std::max<int64_t>(16, chunk_bytes / int64_t{sizeof(float)});
  const int64_t mine = plan.chunk_floats;
  static int calls = 0;
  bool ok = true, created = false;
  int fd = -1;
  auto fail = [&](const std::string& what) {
    *why = "shared memory segment " + std::string(plan.name) + ": " + what;
    ok = false;
  };
  if (rank == 0) {
    if (const int n = RemoveStaleSegments(); n > 0)
      Log().info("Removed {} shared-memory segment(s) that ended jobs left in /dev/shm", n);
    std::snprintf(plan.name, sizeof(plan.name), "/cohort-ring-%d-%d-%08x",
                  static_cast<int>(getpid()), ++calls, static_cast<unsigned>(std::random_device{}()));
  }
  MPI_CHECK(MPI_Bcast(&plan, sizeof(plan), MPI_BYTE, 0, comm));
  const int64_t bytes = size * ShmRingLink::RegionBytes(plan.chunk_floats);
  if (plan.chunk_floats != mine) {
    fail("its slots hold " + std::to_string(plan.chunk_floats) + " floats on rank 0 and " +
         std::to_string(mine) + " here (COHORT_RING_CHUNK_KB must agree)");
  } else if (rank == 0) {
    fd = shm_open(plan.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    created = fd >= 0;
    if (fd < 0) {
      fail(std::string("cannot create: ") + std::strerror(errno));
    } else if (const int err = posix_fallocate(fd, 0, bytes); err != 0) {  // not a SIGBUS later
      fail("cannot reserve " + std::to_string(bytes) + " bytes: " + std::strerror(err));
    }
  }
  if (!AllRanks(comm, ok)) {
    if (fd >= 0) close(fd);
    if (created) shm_unlink(plan.name);
    if (ok) *why = kAnotherRankFailed;
    return nullptr;
  }
  if (rank != 0) {
    fd = shm_open(plan.name, O_RDWR, 0600);
    if (fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  }
  void* segment = MAP_FAILED;
  if (fd >= 0) {
    segment = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (segment == MAP_FAILED) fail(std::string("cannot map: ") + std::strerror(errno));
    close(fd);
  }
  const bool all_mapped = AllRanks(comm, ok);  // a barrier: every rank has opened it
  if (created) shm_unlink(plan.name);
  if (!all_mapped) {
    if (segment != MAP_FAILED) munmap(segment, static_cast<size_t>(bytes));
    if (ok) *why = kAnotherRankFailed;
    return nullptr;
  }
  const int next = WorldRank(comm, (rank + 1) % size), prev = WorldRank(comm, (rank + size - 1) % size);
  const int cpus = CpusOfRanks(comm);
  if (size > cpus && rank == 0) {
    Log().info("{} ranks share {} CPU(s): a rank waiting in the shared-memory ring yields at once",
               size, cpus);
  }
  const std::chrono::nanoseconds spin = ShmRingSpin(size, cpus);
  return std::make_unique<ShmRingLink>(segment, bytes, rank, size, plan.chunk_floats, next, prev,
                                       spin);
}

}  // namespace cohort
