// The peer of cohort-allreduce-bench --kvstore mpi: raw MPI_Allreduce (in place, float sum) over
// the same sizes, printing the same columns, so that scripts/bench-allreduce.sh can put the
// kvstore beside the library it calls in one run.
//   mpirun -np N mpi_allreduce_peer [MIN_BYTES [MAX_BYTES [ITERS [MODE [CHUNK_BYTES]]]]]
// (bytes, as whole numbers; factor 2). MODE "mpi" (the default) times MPI_Allreduce; the others
// time Cohort's RingAllreduce (Note [Ring all-reduce]) instead, the reduction alone, without the
// kvstore around it: "ring" over MPI messages of CHUNK_BYTES, "shm" through a shared segment of
// CHUNK_BYTES slots (Note [Shared-memory ring]; every rank on this host), "tcp" over TCP sockets
// (Note [TCP ring]; COHORT_SOCKET_IFNAME picks the interface). MODE "paired" times both
// MPI_Allreduce and the mpi kvstore's PushPull (one device a rank, in place, as
// cohort-allreduce-bench --kvstore mpi --devices cpu:0) in the same processes, one reduction of
// each at every iteration (each first every other time), and prints the MPI table, then "# kvstore"
// and the kvstore's: on a loaded host the scheduler places a launch's ranks for its whole life,
// fast or slow, so two launches compare placements as much as reductions (Note [Waiting in the
// shared-memory ring]); paired, both meet the same ones.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kvstore/kvstore.h"
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

// The median over iterations of the mean over ranks (`times` summed over the ranks first), as
// cohort-allreduce-bench reports it.
double MedianOverRanks(std::vector<double>& times, int ranks) {
  MPI_Allreduce(MPI_IN_PLACE, times.data(), static_cast<int>(times.size()), MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  return (n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2) / ranks;
}

void PrintRow(long long bytes, double seconds, int ranks, long long wrong) {
  const double algbw = static_cast<double>(bytes) / seconds / 1e9;
  std::printf("%12lld %12lld %6s %10.1f %12.3f %12.3f %7lld\n", bytes, bytes / 4, "float",
              seconds * 1e6, algbw, algbw * 2.0 * (ranks - 1) / ranks, wrong);
}

}  // namespace

int main(int argc, char** argv) {
  // As the mpi kvstore asks (its communication thread), so that "paired" runs it as it trains.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long long min_bytes = Positive(argc, argv, 1, 4096);
  const long long max_bytes = Positive(argc, argv, 2, 256ll << 20);
  const int iters = static_cast<int>(Positive(argc, argv, 3, 20));
  const std::string mode = argc > 4 ? argv[4] : "mpi";
  if (mode != "mpi" && mode != "ring" && mode != "shm" && mode != "tcp" && mode != "paired") {
    std::fprintf(stderr, "mpi_allreduce_peer: mode '%s': expected mpi, ring, shm, tcp or paired\n",
                 mode.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::vector<float> buffer(static_cast<size_t>(max_bytes / 4));
  const bool use_ring = mode == "ring" || mode == "shm" || mode == "tcp";
  const long long chunk_bytes = Positive(argc, argv, 5, 256 << 10);
  std::unique_ptr<cohort::RingAllreduce> ring;
  if (use_ring) {
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
    ring = std::make_unique<cohort::RingAllreduce>(MPI_COMM_WORLD, std::move(link));
  }
  std::unique_ptr<cohort::KVStore> kv;
  if (mode == "paired") kv = cohort::KVStore::Create("mpi");
  const float want = static_cast<float>(size) * static_cast<float>(size + 1) / 2;
  long long total_wrong = 0;
  std::vector<std::vector<double>> mpi_times, kv_times;  // by size, then iteration
  std::vector<long long> sizes, mpi_wrong, kv_wrong;
  for (long long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const int count = static_cast<int>(bytes / 4);
    // The refill and the barrier are not timed, as in cohort-allreduce-bench.
    auto time = [&](float* data, const auto& reduce) {
      std::fill(data, data + count, static_cast<float>(rank + 1));
      MPI_Barrier(MPI_COMM_WORLD);
      const auto start = std::chrono::steady_clock::now();
      reduce();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    auto peer = [&] {
      return time(buffer.data(), [&] {
        if (ring) {
          ring->Sum(buffer.data(), count);
        } else {
          MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
      });
    };
    const int key = static_cast<int>(sizes.size());
    const cohort::NDArray values = cohort::NDArray::Zeros({kv ? count : 1});
    if (kv) kv->Init({key}, {values});
    const std::vector<std::vector<cohort::NDArray>> value_lists = {{values}};
    auto kvstore = [&] {
      return time(values.data<float>(), [&] { kv->PushPull({key}, value_lists, value_lists); });
    };
    for (int i = 0; i < 5; ++i) {
      peer();
      if (kv) kvstore();
    }
    std::vector<double> mpi(static_cast<size_t>(iters)), kvs(kv ? iters : 0);
    for (int i = 0; i < iters; ++i) {  // in turn, each first every other time
      if (kv && i % 2) kvs[i] = kvstore();
      mpi[i] = peer();
      if (kv && i % 2 == 0) kvs[i] = kvstore();
    }
    auto wrong = [&](const float* data) {
      long long n = 0;
      for (int i = 0; i < count; ++i) n += data[i] != want;
      total_wrong += n;
      return n;
    };
    sizes.push_back(bytes);
    mpi_times.push_back(std::move(mpi));
    mpi_wrong.push_back(wrong(buffer.data()));
    kv_times.push_back(std::move(kvs));
    kv_wrong.push_back(kv ? wrong(values.data<float>()) : 0);
  }
  const char* header =
      "#       size        count   type   time(us)  algbw(GB/s)  busbw(GB/s)  #wrong\n";
  if (rank == 0) std::printf("%s", header);
  for (size_t s = 0; s < sizes.size(); ++s) {
    const double seconds = MedianOverRanks(mpi_times[s], size);
    if (rank == 0) PrintRow(sizes[s], seconds, size, mpi_wrong[s]);
  }
  if (kv) {
    if (rank == 0)
      std::printf("# kvstore mpi, one device a rank, timed in turn with the above\n%s", header);
    for (size_t s = 0; s < sizes.size(); ++s) {
      const double seconds = MedianOverRanks(kv_times[s], size);
      if (rank == 0) PrintRow(sizes[s], seconds, size, kv_wrong[s]);
    }
    kv.reset();  // before MPI_Finalize
  }
  std::fflush(stdout);
  MPI_Finalize();
  return total_wrong == 0 ? 0 : 1;
}
