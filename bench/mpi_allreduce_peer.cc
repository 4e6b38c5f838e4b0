// The peer of cohort-allreduce-bench --kvstore mpi: raw MPI_Allreduce (in place, float sum) over
// the same sizes, printing the same columns, so that scripts/bench-allreduce.sh can put the
// kvstore beside the library it calls in one run.
//   mpirun -np N mpi_allreduce_peer [MIN_BYTES [MAX_BYTES [ITERS [MODE [CHUNK_BYTES]]]]]
// (bytes, as whole numbers; factor 2). MODE "mpi" (the default) times MPI_Allreduce; the others
// time Cohort's RingAllreduce (Note [Ring all-reduce]) instead, the reduction alone, without the
// kvstore around it: "ring" over MPI messages of CHUNK_BYTES, "shm" through a shared segment of
// CHUNK_BYTES slots (Note [Shared-memory ring]; every rank on this host), "tcp" over TCP sockets
// (Note [TCP ring]; COHORT_SOCKET_IFNAME picks the interface).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kvstore/ring_allreduce.h"
#include "kvstore/shm_ring_link.h"
#include "kvstore/tcp_ring_link.h"

namespace {

// argv[i] as a positive whole number, or `fallback` when absent; anything else ends the job
// (atoll read "64K" as 64, and the script then joined no sizes and printed nothing).
long long Positive(int argc, char** argv, int i, long long fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "mpi_allreduce_peer: argument %d '%s': expected a positive whole number "
                 "(bytes: scripts/bench-allreduce.sh converts 64K, 64M)\n", i, argv[i]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long long min_bytes = Positive(argc, argv, 1, 4096);
  const long long max_bytes = Positive(argc, argv, 2, 256ll << 20);
  const int iters = static_cast<int>(Positive(argc, argv, 3, 20));
  const std::string mode = argc > 4 ? argv[4] : "mpi";
  if (mode != "mpi" && mode != "ring" && mode != "shm" && mode != "tcp") {
    std::fprintf(stderr, "mpi_allreduce_peer: mode '%s': expected mpi, ring, shm or tcp\n",
                 mode.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::vector<float> buffer(static_cast<size_t>(max_bytes / 4));
  const bool use_ring = mode != "mpi";
  const long long chunk_bytes = Positive(argc, argv, 5, 256 << 10);
  std::unique_ptr<cohort::RingLink> link;
  std::string why;
  if (mode == "tcp") {
    const char* ifname = std::getenv("COHORT_SOCKET_IFNAME");
    link = cohort::ConnectTcpRing(MPI_COMM_WORLD, ifname ? ifname : "", &why);
  } else if (mode == "shm") {
    link = cohort::ConnectShmRing(MPI_COMM_WORLD, chunk_bytes, &why);
  } else {
    link = cohort::MakeMpiRingLink(MPI_COMM_WORLD, chunk_bytes);
  }
  if (!link) {
    std::fprintf(stderr, "mpi_allreduce_peer: the %s ring did not connect: %s\n", mode.c_str(),
                 why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  cohort::RingAllreduce ring(MPI_COMM_WORLD, std::move(link));
  auto reduce = [&](int count) {
    if (use_ring) {
      ring.Sum(buffer.data(), count);
    } else {
      MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
  };
  if (rank == 0) {
    std::printf("#       size        count   type   time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n");
  }
  long long total_wrong = 0;
  for (long long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const int count = static_cast<int>(bytes / 4);
    auto run = [&] {  // the refill and the barrier are not timed, as in cohort-allreduce-bench
      std::fill(buffer.begin(), buffer.begin() + count, static_cast<float>(rank + 1));
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = std::chrono::steady_clock::now();
      reduce(count);
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    for (int i = 0; i < 5; ++i) run();
    std::vector<double> times(static_cast<size_t>(iters));
    for (double& t : times) t = run();
    // The median over iterations of the mean over ranks, as cohort-allreduce-bench reports.
    MPI_Allreduce(MPI_IN_PLACE, times.data(), iters, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    std::sort(times.begin(), times.end());
    const double seconds =
        (iters % 2 ? times[iters / 2] : (times[iters / 2 - 1] + times[iters / 2]) / 2) / size;
    const float want = static_cast<float>(size) * static_cast<float>(size + 1) / 2;
    long long wrong = 0;
    for (int i = 0; i < count; ++i) wrong += buffer[i] != want;
    total_wrong += wrong;
    if (rank == 0) {
      const double algbw = static_cast<double>(bytes) / seconds / 1e9;
      std::printf("%12lld %12d %6s %10.1f %12.3f %12.3f %7lld\n", bytes, count, "float",
                  seconds * 1e6, algbw, algbw * 2.0 * (size - 1) / size, wrong);
    }
  }
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
