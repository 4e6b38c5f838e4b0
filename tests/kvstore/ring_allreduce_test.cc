// Runs under mpirun with 2 and with 3 ranks: the pipelined ring (Note [Ring all-reduce]) sums like
// MPI_Allreduce over MPI messages, through shared memory (Note [Shared-memory ring]) and over TCP
// sockets (Note [TCP ring], here on the loopback interface), for counts that do not divide into
// segments or chunks, and every rank ends with the same bits; a TCP ring that cannot connect, or
// whose neighbour goes away, says so.
#include "kvstore/ring_allreduce.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "base/error.h"
#include "kvstore/collective_watchdog.h"
#include "kvstore/shm_ring_link.h"
#include "kvstore/tcp_ring_link.h"

namespace cohort {
namespace {

int Rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int Size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Every rank holds the same sums (the lowest and the highest over the ranks are equal).
void ExpectAlikeOnEveryRank(const std::vector<float>& data, int64_t count) {
  std::vector<float> lowest = data, highest = data;
  MPI_Allreduce(MPI_IN_PLACE, lowest.data(), static_cast<int>(count), MPI_FLOAT, MPI_MIN,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, highest.data(), static_cast<int>(count), MPI_FLOAT, MPI_MAX,
                MPI_COMM_WORLD);
  EXPECT_EQ(lowest, highest) << "count " << count << ": ranks hold different sums";
}

// `sum` sums in place over every rank of MPI_COMM_WORLD.
void ExpectSumsLikeMpi(const std::function<void(float*, int64_t)>& sum) {
  const int rank = Rank(), size = Size();
  // 300001 floats: segments longer than the TCP link's staging chunk, summed in several.
  for (int64_t count : {0, 1, 2, 5, 16, 17, 33, 1000, 100003, 300001}) {
    std::mt19937 rng(static_cast<unsigned>(count * 31 + rank));
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<float> data(static_cast<size_t>(count)), want;
    for (float& v : data) v = value(rng);
    want = data;
    MPI_Allreduce(MPI_IN_PLACE, want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    sum(data.data(), count);
    // Two ranks add one pair: exact. More add in ring order, which MPI may not. (No ASSERT:
    // a rank that returned early would leave the others in the next collective.)
    int64_t off = 0;
    const float tolerance = size == 2 ? 0 : 1e-6f * static_cast<float>(size - 1);
    for (int64_t i = 0; i < count; ++i) off += std::fabs(data[i] - want[i]) > tolerance;
    EXPECT_EQ(off, 0) << "count " << count;
    ExpectAlikeOnEveryRank(data, count);
  }
}
void ExpectSumsLikeMpi(RingAllreduce& ring) {
  ExpectSumsLikeMpi([&](float* data, int64_t count) { ring.Sum(data, count); });
}

TEST(RingAllreduce, SumsLikeMpiOnEveryRankAlike) {
  RingAllreduce ring(MPI_COMM_WORLD, /*chunk_bytes=*/64);  // 16 floats a message: many chunks
  ExpectSumsLikeMpi(ring);
}

TEST(RingAllreduce, OverTcpSumsLikeMpiOnEveryRankAlike) {
  std::string why;
  std::unique_ptr<RingLink> link = ConnectTcpRing(MPI_COMM_WORLD, "lo", &why);
  ASSERT_TRUE(link) << why;  // null on every rank alike
  RingAllreduce ring(MPI_COMM_WORLD, std::move(link));
  ExpectSumsLikeMpi(ring);
}

// The shared segment's names in /dev/shm that start with `prefix`.
int ShmEntries(const std::string& prefix) {
  int found = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (const dirent* entry = readdir(dir))
      found += std::string(entry->d_name).rfind(prefix, 0) == 0;
    closedir(dir);
  }
  return found;
}

TEST(RingAllreduce, OverSharedMemorySumsLikeMpiOnEveryRankAlike) {
  std::string why;
  // 64 bytes a slot: 16 floats, so segments pass in many chunks and the slots are reused.
  std::unique_ptr<RingLink> link = ConnectShmRing(MPI_COMM_WORLD, 64, &why);
  ASSERT_TRUE(link) << why;  // null on every rank alike
  RingAllreduce ring(MPI_COMM_WORLD, std::move(link));
  ExpectSumsLikeMpi(ring);
  // The segment was unlinked once mapped: nothing of rank 0's is left in /dev/shm.
  int first_pid = static_cast<int>(getpid());
  MPI_Bcast(&first_pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_EQ(ShmEntries("cohort-ring-" + std::to_string(first_pid) + "-"), 0);
  MPI_Barrier(MPI_COMM_WORLD);  // before rank 0 makes the next test's segment
}

// A segment in /dev/shm whose job ended during its setup: its maker `pid`, last written
// `age_s` seconds ago, its call number `call`. Returns its name (without the leading slash).
std::string LeaveSegment(int pid, int age_s, int call) {
  const std::string name =
      "cohort-ring-" + std::to_string(pid) + "-" + std::to_string(call) + "-0badf00d";
  const int fd = shm_open(("/" + name).c_str(), O_CREAT | O_RDWR, 0600);
  EXPECT_GE(fd, 0);
  close(fd);
  const timeval then[2] = {{time(nullptr) - age_s, 0}, {time(nullptr) - age_s, 0}};
  EXPECT_EQ(utimes(("/dev/shm/" + name).c_str(), then), 0);
  return name;
}

// What a job killed during its setup left (a segment made, not yet unlinked) is removed by the
// next ring made on the host; a segment of a live process, or one written within the minute
// (a job of another PID namespace in its setup), is not.
TEST(RingAllreduce, SharedMemoryRingRemovesSegmentsEndedJobsLeft) {
  std::string stale, fresh, alive;
  if (Rank() == 0) {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);  // a pid that no longer runs
    stale = LeaveSegment(child, 120, 1);
    fresh = LeaveSegment(child, 5, 2);
    alive = LeaveSegment(static_cast<int>(getpid()), 120, 1);
  }
  std::string why;
  std::unique_ptr<RingLink> link = ConnectShmRing(MPI_COMM_WORLD, 4096, &why);
  ASSERT_TRUE(link) << why;
  if (Rank() == 0) {
    EXPECT_EQ(ShmEntries(stale), 0);
    EXPECT_EQ(ShmEntries(fresh), 1);
    EXPECT_EQ(ShmEntries(alive), 1);
    shm_unlink(("/" + fresh).c_str());
    shm_unlink(("/" + alive).c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Ranks that would lay the segment out differently (other slot sizes) are refused alike.
TEST(RingAllreduce, SharedMemoryRingRefusesOtherChunkSizes) {
  std::string why;
  EXPECT_FALSE(ConnectShmRing(MPI_COMM_WORLD, Rank() == 1 ? 8192 : 4096, &why));
  if (Rank() == 1) {
    EXPECT_NE(why.find("its slots hold 1024 floats on rank 0 and 2048 here (COHORT_RING_CHUNK_KB "
                       "must agree)"),
              std::string::npos)
        << why;
  } else {
    EXPECT_EQ(why, kAnotherRankFailed);
  }
}

// The ring's order of additions, whatever carries the chunks: the same bits as over MPI messages
// with three ranks too (where they may differ from MPI_Allreduce's).
TEST(RingAllreduce, OverSharedMemoryGivesTheBitsOfTheMpiRing) {
  std::string why;
  std::unique_ptr<RingLink> link = ConnectShmRing(MPI_COMM_WORLD, 4096, &why);
  ASSERT_TRUE(link) << why;
  RingAllreduce over_shm(MPI_COMM_WORLD, std::move(link));
  RingAllreduce over_mpi(MPI_COMM_WORLD, /*chunk_bytes=*/4096);
  std::mt19937 rng(static_cast<unsigned>(7 + Rank()));
  std::uniform_real_distribution<float> value(-1, 1);
  for (int64_t count : {3, 1025, 250007}) {
    std::vector<float> a(static_cast<size_t>(count));
    for (float& v : a) v = value(rng);
    std::vector<float> b = a;
    over_shm.Sum(a.data(), count);
    over_mpi.Sum(b.data(), count);
    EXPECT_EQ(a, b) << "count " << count;
  }
}

// Note [Gradient compression]: with the floats crossing as bfloat16 or float16, the sums are
// MPI's within the format's rounding of each hop, every rank holds the same bits (the owners round
// what they keep), and the links that convert while copying (shared memory) give the bits of the
// ring that packs the halves itself (MPI messages, TCP).
TEST(RingAllreduce, NarrowWireSumsWithinTheFormatOnEveryRankAlike) {
  const int rank = Rank(), size = Size();
  for (DType wire : {DType::kBFloat16, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(wire));
    std::string why;
    std::unique_ptr<RingLink> shm_link = ConnectShmRing(MPI_COMM_WORLD, 64, &why);
    ASSERT_TRUE(shm_link) << why;
    std::unique_ptr<RingLink> tcp_link = ConnectTcpRing(MPI_COMM_WORLD, "lo", &why);
    ASSERT_TRUE(tcp_link) << why;
    RingAllreduce over_shm(MPI_COMM_WORLD, std::move(shm_link));
    RingAllreduce over_tcp(MPI_COMM_WORLD, std::move(tcp_link));
    RingAllreduce over_mpi(MPI_COMM_WORLD, /*chunk_bytes=*/64);
    for (RingAllreduce* ring : {&over_shm, &over_tcp, &over_mpi}) ring->SetWire(wire);
    // Unit roundoff 2^-8 (bfloat16) or 2^-11 (float16) on partial sums of at most `size`.
    const float unit = wire == DType::kBFloat16 ? 1.0f / 256 : 1.0f / 2048;
    const float tolerance = unit * static_cast<float>(size * size);
    for (int64_t count : {1, 2, 5, 17, 1000, 100003}) {
      std::mt19937 rng(static_cast<unsigned>(count * 31 + rank));
      std::uniform_real_distribution<float> value(-1, 1);
      std::vector<float> data(static_cast<size_t>(count));
      for (float& v : data) v = value(rng);
      std::vector<float> want = data, tcp = data, mpi = data;
      MPI_Allreduce(MPI_IN_PLACE, want.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      over_shm.Sum(data.data(), count);
      over_tcp.Sum(tcp.data(), count);
      over_mpi.Sum(mpi.data(), count);
      int64_t off = 0, rounded = 0;
      for (int64_t i = 0; i < count; ++i) {
        off += std::fabs(data[i] - want[i]) > tolerance;
        rounded += data[i] != want[i];
      }
      EXPECT_EQ(off, 0) << "count " << count;
      if (count >= 1000) {
        EXPECT_GT(rounded, 0) << "count " << count << ": nothing was narrowed";
      }
      EXPECT_EQ(data, tcp) << "count " << count;
      EXPECT_EQ(data, mpi) << "count " << count;
      ExpectAlikeOnEveryRank(data, count);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// Note [Hierarchical all-reduce]: "hosts" of two ranks (0-1, 2-3, ...), a ring inside each
// (through shared memory, and over MPI messages), each segment summed across by a ring and by
// MPI_Allreduce: the sum over every rank, with the same bits on every rank. Its ctest
// ring_allreduce_test_4 runs 2 such hosts.
TEST(RingAllreduce, HierarchicalSumsLikeMpiOnEveryRankAlike) {
  const int rank = Rank();
  if (Size() % 2 != 0) GTEST_SKIP() << "needs hosts of two ranks";
  MPI_Comm host = MPI_COMM_NULL, across = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &host);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &across);
  for (bool shm : {true, false}) {
    std::string why;
    std::unique_ptr<RingLink> link =
        shm ? ConnectShmRing(host, 64, &why) : MakeMpiRingLink(host, 64);
    ASSERT_TRUE(link) << why;
    RingAllreduce inside(host, std::move(link));
    RingAllreduce across_ring(across, /*chunk_bytes=*/64);
    for (bool ring_across : {true, false}) {
      SCOPED_TRACE(std::string(shm ? "shm" : "mpi") + " inside, " +
                   (ring_across ? "ring" : "MPI_Allreduce") + " across");
      ExpectSumsLikeMpi([&](float* data, int64_t count) {
        HierarchicalSum(
            inside,
            [&](float* segment, int64_t n) {
              if (ring_across) {
                across_ring.Sum(segment, n);
              } else {
                MPI_Allreduce(MPI_IN_PLACE, segment, static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                              across);
              }
            },
            data, count);
      });
    }
  }
  MPI_Comm_free(&host);
  MPI_Comm_free(&across);
}

// A rank that comes late (rank 1) is the one the others note they wait on: the collective
// deadline's message names it. With 2 ranks, rank 0 waits on rank 1 both ways.
void ExpectNotesTheLateRank(RingAllreduce& ring) {
  const int rank = Rank(), size = Size();
  NoteWaitingOn(-1);
  if (rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<float> data(100000, 1.0f);
  ring.Sum(data.data(), static_cast<int64_t>(data.size()));
  EXPECT_EQ(data[0], static_cast<float>(size));
  EXPECT_EQ(data[99999], static_cast<float>(size));
  if (rank == (1 + 1) % size) {  // rank 1's next: it waited for rank 1's data
    const int prev = (rank + size - 1) % size, next = (rank + 1) % size;
    EXPECT_TRUE(WaitingOn() == prev || WaitingOn() == next) << WaitingOn();
    if (size == 2) {
      EXPECT_EQ(WaitingOn(), 1);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(RingAllreduce, SharedMemoryRingNotesTheRankItWaitsOn) {
  std::string why;
  std::unique_ptr<RingLink> link = ConnectShmRing(MPI_COMM_WORLD, 4096, &why);
  ASSERT_TRUE(link) << why;
  RingAllreduce ring(MPI_COMM_WORLD, std::move(link));
  ExpectNotesTheLateRank(ring);
}

// Note [Waiting in the shared-memory ring]: ranks with a CPU each spin through a slice; ranks
// that outnumber their CPUs yield at once.
TEST(RingAllreduce, SharedMemoryRingSpinsOnlyWhereEachRankHasACpu) {
  EXPECT_EQ(ShmRingSpin(2, 2), std::chrono::milliseconds(5));
  EXPECT_EQ(ShmRingSpin(2, 16), std::chrono::milliseconds(5));
  EXPECT_EQ(ShmRingSpin(4, 2), std::chrono::nanoseconds(0));
  EXPECT_EQ(ShmRingSpin(2, 1), std::chrono::nanoseconds(0));
}

// The CPUs counted are those of every rank together: ranks bound to a core each (mpirun
// --bind-to core, ring_allreduce_test_bound) are not oversubscribed, ranks all bound to one are.
TEST(RingAllreduce, CpusOfRanksCountsTheUnionOfTheirAffinities) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  std::vector<int> allowed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mine)) allowed.push_back(cpu);
  }
  cpu_set_t first = mine;  // rank 0's
  MPI_Bcast(&first, sizeof(first), MPI_BYTE, 0, MPI_COMM_WORLD);
  int alike = CPU_EQUAL(&first, &mine) ? 1 : 0, fewest = static_cast<int>(allowed.size());
  MPI_Allreduce(MPI_IN_PLACE, &alike, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const int all = CpusOfRanks(MPI_COMM_WORLD);
  if (!alike) {  // bound apart: more CPUs together than the rank with the fewest has
    EXPECT_GT(all, fewest);
    return;
  }
  EXPECT_EQ(all, fewest);
  const auto pin = [&](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  };
  pin(allowed[0]);  // one CPU for all
  EXPECT_EQ(CpusOfRanks(MPI_COMM_WORLD), 1);
  if (fewest >= Size()) {  // a CPU each
    pin(allowed[Rank()]);
    EXPECT_EQ(CpusOfRanks(MPI_COMM_WORLD), Size());
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(mine), &mine), 0);
  EXPECT_EQ(CpusOfRanks(MPI_COMM_WORLD), all);
}

TEST(RingAllreduce, TcpRingWithoutAddressesIsRefusedOnEveryRank) {
  std::string why;
  EXPECT_FALSE(ConnectTcpRing(MPI_COMM_WORLD, "no-such-if0", &why));
  EXPECT_NE(why.find("interface 'no-such-if0' (COHORT_SOCKET_IFNAME) has no IPv4 address"),
            std::string::npos)
      << why;
}

TEST(RingAllreduce, TcpRingNamesTheRankWhoseLinkClosed) {
  std::string why;
  std::unique_ptr<RingLink> link = ConnectTcpRing(MPI_COMM_WORLD, "lo", &why);
  ASSERT_TRUE(link) << why;
  const int rank = Rank(), size = Size();
  if (rank == 1) {
    link.reset();                 // rank 1 goes away: its sockets close
  } else if (rank == 2 % size) {  // rank 1's next: its link from rank 1 ends
    RingAllreduce ring(MPI_COMM_WORLD, std::move(link));
    std::vector<float> data(1000, 1.0f);
    try {
      ring.Sum(data.data(), static_cast<int64_t>(data.size()));
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(
                    "kvstore: TCP ring: the link from rank 1 (host 127.0.0.1) failed"),
                std::string::npos)
          << e.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(RingAllreduce, TcpRingNotesTheRankItWaitsOn) {
  std::string why;
  std::unique_ptr<RingLink> link = ConnectTcpRing(MPI_COMM_WORLD, "lo", &why);
  ASSERT_TRUE(link) << why;
  RingAllreduce ring(MPI_COMM_WORLD, std::move(link));
  ExpectNotesTheLateRank(ring);
}

}  // namespace
}  // namespace cohort
