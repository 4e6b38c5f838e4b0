// The MPI comm: one worker per process, buffers fused into buckets and summed with
// MPI_Allreduce or the ring, initial weights broadcast from rank 0.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/error_mpi.h"
#include "base/logging.h"
#include "kvstore/collective_watchdog.h"
#include "kvstore/comm.h"
#include "kvstore/kvstore.h"
#include "kvstore/overlapped_push_pull.h"
#include "kvstore/ring_allreduce.h"
#include "kvstore/shm_ring_link.h"
#include "kvstore/tcp_ring_link.h"

namespace cohort {
namespace {

// Initialises MPI on first use when the program did not (asking for MPI_THREAD_SERIALIZED, so
// that a communication thread may reduce while the main thread computes), and finalises it at
// exit. Returns the thread support MPI provides.
int EnsureMpi() {
  int initialized = 0, provided = MPI_THREAD_SINGLE;
  MPI_CHECK(MPI_Initialized(&initialized));
  if (initialized) {
    MPI_CHECK(MPI_Query_thread(&provided));
    return provided;
  }
  MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
  struct Finalizer {
    ~Finalizer() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    }
  };
  static Finalizer finalizer;
  return provided;
}

// How many ranks of `comm` share a rank's host, reduced over the ranks with `op` (MPI_MIN: the
// emptiest host's count, MPI_MAX: the fullest's), so that every rank gets the same answer. A
// collective of `comm`.
int RanksOnAHost(MPI_Comm comm, MPI_Op op) {
  MPI_Comm same_host = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &same_host));
  int here = 0, reduced = 0;
  MPI_CHECK(MPI_Comm_size(same_host, &here));
  MPI_CHECK(MPI_Comm_free(&same_host));
  MPI_CHECK(MPI_Allreduce(&here, &reduced, 1, MPI_INT, op, comm));
  return reduced;
}

// Note [Gradient buckets]
// Reducing each parameter with its own MPI_Allreduce pays the latency of a collective per tensor
// (LeNet has 8, ResNets hundreds). Consecutive reduction buffers are instead copied into one
// bucket of at most COHORT_KVSTORE_BUCKET_MB (allocated once, for the largest group planned)
// and summed with one MPI_Allreduce, then
// copied back; a buffer larger than the bucket is reduced in place on its own. The buffers
// arrive in the order of the PushPull's keys (the GradientBucketer's: falling priority, the
// order backward produces gradients) and are grouped by PlanBuckets, as Note [Overlapped push]
// groups keys.
class MpiComm final : public Comm {
 public:
  MpiComm() {
    thread_support_ = EnsureMpi();
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    MPI_CHECK(MPI_Comm_size(comm_, &size_));
    if (size_ > 1) {
      watchdog_ =
          std::make_unique<CollectiveWatchdog>(rank_, static_cast<double>(Env().comm_timeout));
    } else {
      watchdog_ = std::make_unique<CollectiveWatchdog>(rank_, 0.0);  // one worker waits for none
    }
    CollectiveWatchdog::Scope timed(*watchdog_, "kvstore setup", 0);
    CheckJobSettingsAgree();
    if (Env().kvstore_hierarchical != 0) SplitByHost();
    const int64_t chunk_bytes = RingChunkBytes();  // a collective of every rank
    // The ring joins every rank; or, when reducing inside hosts first, the ranks of one local
    // rank on every host (or the hosts' leaders).
    const MPI_Comm ring_comm = across_ != MPI_COMM_NULL ? across_
                               : host_ != MPI_COMM_NULL ? leaders_
                                                        : comm_;
    if (ring_comm != MPI_COMM_NULL) {
      ring_ = MakeRing(ring_comm, chunk_bytes);
      const int ring_min_kb = RingMinKb(ring_link_ != RingLinkKind::kMpi);
      ring_min_bytes_ = int64_t{ring_min_kb} << 10;
      // The ranks of the ring agree on the threshold in effect, not on how it was set: unset
      // on one rank and 64 on another agree over TCP.
      const Setting in_effect[] = {{"COHORT_RING_MIN_KB", ring_min_kb}};
      CheckSettingsAgree(ring_comm, in_effect);
    }
    if (across_ != MPI_COMM_NULL) MakeHostRing();
  }
  ~MpiComm() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    for (MPI_Comm* c : {&host_, &leaders_, &across_}) {
      if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
    }
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Barrier() override {
    CollectiveWatchdog::Scope timed(*watchdog_, "barrier", 0);
    MPI_CHECK(MPI_Barrier(comm_));
  }

  bool SetWire(DType wire) override {
    for (RingAllreduce* ring : {ring_.get(), host_ring_.get()}) {
      if (ring) ring->SetWire(wire);
    }
    return size_ > 1;
  }

  void SumDoubles(std::span<double> values) override {
    CollectiveWatchdog::Scope timed(*watchdog_, "allreduce of sums", values.size_bytes());
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                            MPI_DOUBLE, MPI_SUM, comm_));
  }

  void AllReduce(const std::vector<NDArray>& buffers) override {
    sizes_.resize(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) sizes_[i] = buffers[i].nbytes();
    if (sizes_ != planned_sizes_) {  // the same buffers every step: plan once
      plan_ = PlanBuckets(sizes_, static_cast<size_t>(Env().kvstore_bucket_mb) << 20);
      planned_sizes_ = sizes_;
      // The bucket holds the largest group the plan copies, no more: a COHORT_KVSTORE_BUCKET_MB
      // far above the gradients' size costs no memory.
      size_t largest = 0;
      for (const auto& [first, end] : plan_) {
        if (end - first < 2) continue;
        size_t bytes = 0;
        for (size_t i = first; i < end; ++i) bytes += sizes_[i];
        largest = std::max(largest, bytes);
      }
      std::vector<float>(largest / sizeof(float)).swap(bucket_);
    }
    for (const auto& [first, end] : plan_) {
      if (end - first == 1) {  // one buffer (or one too big for a bucket): in place, no copies
        CollectiveWatchdog::Scope timed(*watchdog_, "gradient allreduce", buffers[first].nbytes());
        Sum(buffers[first].data<float>(), buffers[first].size());
        continue;
      }
      float* bucket = bucket_.data();
      for (size_t i = first; i < end; ++i) {
        bucket = std::copy_n(buffers[i].data<float>(), buffers[i].size(), bucket);
      }
      const int used = static_cast<int>(bucket - bucket_.data());
      {
        CollectiveWatchdog::Scope timed(*watchdog_, "gradient bucket allreduce", int64_t{used} * 4);
        Sum(bucket_.data(), used);
      }
      const float* sums = bucket_.data();
      for (size_t i = first; i < end; ++i) {
        std::copy_n(sums, buffers[i].size(), buffers[i].data<float>());
        sums += buffers[i].size();
      }
    }
  }

  // MPI calls come from one thread at a time: the communication thread during a step, the
  // main thread between steps (Note [Overlapped push]).
  bool CanOverlap() const override { return size_ > 1 && thread_support_ >= MPI_THREAD_SERIALIZED; }
  // Off: with CPU devices on every core the communication thread slows backward more than it
  // saves (LeNet, 2 ranks on 2 cores, one epoch, two runs each: 7.62-7.91 s without, 7.73-8.03 s
  // with).
  bool OverlapsByDefault() const override { return false; }

  void Broadcast(const std::vector<NDArray>& buffers) override {
    for (const NDArray& b : buffers) {
      CollectiveWatchdog::Scope timed(*watchdog_, "broadcast of initial weights", b.nbytes());
      MPI_CHECK(MPI_Bcast(b.raw_data(), static_cast<int>(b.size()), MPI_FLOAT, 0, comm_));
    }
  }

 private:
  // COHORT_RING_CHUNK_KB, or by the transport when it is 0: 256 KB when every rank of the job
  // shares this host (Open MPI's shared memory), 16 MB when the job spans hosts (then the ring,
  // flat, between the hosts' leaders, or one for each rank of a host, crosses them, over MPI
  // where it does not talk TCP itself: Note [TCP ring]; the ring inside a host takes 256 KB).
  // Measured
  // with mpi_allreduce_peer's ring, 2 ranks, 8-64 MB: over shared memory 256 KB beat 128 KB,
  // 1 MB and 4 MB (3 runs each); between two namespace hosts over TCP 256 KB reached 0.06 GB/s,
  // 1 MB 0.21-0.25, 4 MB 0.25-0.35, 16 MB 0.25-0.49 (raw MPI_Allreduce 0.15-0.24): there each
  // message costs milliseconds, as the ranks' polling starves the kernel's forwarding on 2 cores.
  int64_t RingChunkBytes() {
    if (Env().ring_chunk_kb > 0) return int64_t{Env().ring_chunk_kb} << 10;
    // On one host every rank sees all of them on its own.
    const bool one_host = RanksOnAHost(comm_, MPI_MIN) == size_;
    return one_host ? int64_t{256} << 10 : int64_t{16} << 20;
  }

  struct Setting {
    const char* name;
    int64_t value;
  };

  // Every rank must sum each bucket the same way (MPI_Allreduce or the ring, flat or by host):
  // settings that shape the job's collectives (which buffers meet in which call, in which
  // order, over which transport) and differ between ranks would sum unrelated gradients or
  // hang the job at its first reduction.
  void CheckJobSettingsAgree() {
    const std::string& t = Env().ring_transport;
    const Setting settings[] = {
        {"COHORT_RING_TRANSPORT", t == "auto"  ? 0
                                  : t == "tcp" ? 1
                                  : t == "shm" ? 2
                                               : 3},
        {"COHORT_RING_MIN_KB", Env().ring_min_kb == 0},  // 0: no ring, no sockets (MakeRing)
        {"COHORT_RING_CHUNK_KB", Env().ring_chunk_kb},
        {"COHORT_KVSTORE_HIERARCHICAL", Env().kvstore_hierarchical},
        {"COHORT_KVSTORE_BUCKET_MB", Env().kvstore_bucket_mb},
        {"COHORT_KVSTORE_OVERLAP", Env().kvstore_overlap}};
    CheckSettingsAgree(comm_, settings);
  }

  // A collective of `comm`: one MPI_MAX of each value and its negation gives the highest and
  // the lowest of each.
  void CheckSettingsAgree(MPI_Comm comm, std::span<const Setting> settings) {
    const size_t count = settings.size();
    std::vector<int64_t> extremes(2 * count);
    for (size_t i = 0; i < count; ++i) {
      extremes[i] = settings[i].value;
      extremes[count + i] = -settings[i].value;
    }
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, extremes.data(), static_cast<int>(2 * count),
                            MPI_INT64_T, MPI_MAX, comm));
    for (size_t i = 0; i < count; ++i) {
      if (extremes[i] != -extremes[count + i]) {
        const char* value = std::getenv(settings[i].name);
        throw ConfigError(std::string(settings[i].name) +
                              " differs between the ranks of the job (rank " +
                              std::to_string(rank_) + ": '" + (value ? value : "") +
                              "'): set it alike on every rank (mpirun -x)",
                          __FILE__, __LINE__);
      }
    }
  }

  // How the ring's neighbours talk: TCP sockets (Note [TCP ring]) where each of its ranks has a
  // host of its own (COHORT_RING_TRANSPORT=auto) or where asked to (tcp); a shared segment (Note
  // [Shared-memory ring]) where all share one host (auto) or where asked to (shm); MPI messages
  // otherwise, when asked to (mpi), and when the sockets or the segment fail in auto mode. A
  // collective of `ring_comm`.
  std::unique_ptr<RingAllreduce> MakeRing(MPI_Comm ring_comm, int64_t chunk_bytes) {
    int ring_size = 1, ring_rank = 0;
    MPI_CHECK(MPI_Comm_size(ring_comm, &ring_size));
    MPI_CHECK(MPI_Comm_rank(ring_comm, &ring_rank));
    const std::string& transport = Env().ring_transport;
    // COHORT_RING_MIN_KB=0: the ring never runs, so no sockets or segment either.
    const bool may_ring = ring_size > 1 && Env().ring_min_kb != 0;
    if (!may_ring || transport == "mpi")
      return std::make_unique<RingAllreduce>(ring_comm, chunk_bytes);
    std::string why;
    std::unique_ptr<RingLink> link;
    if (transport == "tcp" || (transport == "auto" && RanksOnAHost(ring_comm, MPI_MAX) == 1)) {
      link = ConnectTcpRing(ring_comm, Env().socket_ifname, &why);
      ring_link_ = RingLinkKind::kTcp;
    } else if (RanksOnAHost(ring_comm, MPI_MIN) == ring_size) {
      link = ConnectShmRing(ring_comm, chunk_bytes, &why);
      ring_link_ = RingLinkKind::kShm;
    } else if (transport == "shm") {
      throw ConfigError(
          std::string("COHORT_RING_TRANSPORT=shm: the ranks of the ring are not all on one host") +
              (host_ != MPI_COMM_NULL ? " (it is the ring between the hosts: 'auto' passes the "
                                        "sums inside each host through shared memory already)"
                                      : ""),
          __FILE__, __LINE__);
    } else {
      return std::make_unique<RingAllreduce>(ring_comm, chunk_bytes);
    }
    const char* name = ring_link_ == RingLinkKind::kTcp ? "TCP" : "shared memory";
    if (link) {
      if (rank_ == 0) {  // with two levels, one ring for each rank of a host: said once
        Log().info("kvstore: ring all-reduce over {} between {} ranks{}", name, ring_size,
                   across_ != MPI_COMM_NULL ? " (one ring for each rank of a host)" : "");
      }
      return std::make_unique<RingAllreduce>(ring_comm, std::move(link));
    }
    ring_link_ = RingLinkKind::kMpi;
    if (transport != "auto") {
      throw ConfigError("COHORT_RING_TRANSPORT=" + transport + ": rank " + std::to_string(rank_) +
                            " cannot connect the ring over " + name + ": " + why,
                        __FILE__, __LINE__);
    }
    if (ring_rank == 0 || why != kAnotherRankFailed) {  // each cause once
      Log().warn("rank {}: the ring all-reduce runs over MPI: its {} link did not connect ({})",
                 rank_, name, why);
    }
    return std::make_unique<RingAllreduce>(ring_comm, chunk_bytes);
  }

  // Note [Hierarchical all-reduce] (ring_allreduce.h): in two levels of rings when every host
  // runs as many ranks and the ring may run (COHORT_RING_MIN_KB is not 0); otherwise with a
  // leader a host when COHORT_KVSTORE_HIERARCHICAL=1, flat when it is unset. Flat anyway when
  // the job has one host or one rank on every host. Measured on 2 namespace hosts of 2 ranks
  // (TCP between them, the 4 ranks on 2 cores, medians of 3 runs of cohort-allreduce-bench):
  // two levels beat the flat ring over MPI messages 2.0-8.7x and a leader a host 1.2-6.4x from
  // 64 KB to 64 MB (2.1x and 3.0x at 64 MB). Against raw MPI_Allreduce, medians of 5 rounds
  // (scripts/bench-allreduce.sh with RANKS_PER_HOST=2): 1.17-8.0x, 2.85x at 64 MB.
  void SplitByHost() {
    MPI_CHECK(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host_));
    int host_rank = 0, host_size = 1;
    MPI_CHECK(MPI_Comm_rank(host_, &host_rank));
    MPI_CHECK(MPI_Comm_size(host_, &host_size));
    MPI_CHECK(MPI_Comm_split(comm_, host_rank == 0 ? 0 : MPI_UNDEFINED, rank_, &leaders_));
    int hosts = 0;  // known to the leaders, then told to the host
    if (leaders_ != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_size(leaders_, &hosts));
    MPI_CHECK(MPI_Bcast(&hosts, 1, MPI_INT, 0, host_));
    // Decided alike everywhere: a host of one rank among hosts of several is its own leader.
    int extremes[2] = {host_size, -host_size};  // the fullest host's count, the emptiest's
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_INT, MPI_MAX, comm_));
    const int most_on_a_host = extremes[0], fewest_on_a_host = -extremes[1];
    const bool two_levels = most_on_a_host == fewest_on_a_host && Env().ring_min_kb != 0;
    if (hosts > 1 && most_on_a_host > 1 && (two_levels || Env().kvstore_hierarchical == 1)) {
      host_rank_ = host_rank;
      if (two_levels) {  // local rank j of every host sums its segment with the others' j
        if (leaders_ != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(&leaders_));
        MPI_CHECK(MPI_Comm_split(comm_, host_rank, rank_, &across_));
      }
      if (rank_ == 0) {
        const std::string ranks =
            most_on_a_host == fewest_on_a_host
                ? std::to_string(most_on_a_host)
                : std::to_string(fewest_on_a_host) + " to " + std::to_string(most_on_a_host);
        Log().info("kvstore: hierarchical all-reduce, {} hosts of {} ranks{}", hosts, ranks,
                   two_levels ? ": reduce-scatter inside each host, all-reduce across, all-gather"
                              : ": reduce to a leader a host, all-reduce across, broadcast");
      }
      return;
    }
    for (MPI_Comm* c : {&host_, &leaders_}) {  // flat
      if (*c != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_free(c));
    }
  }

  // The smallest buffer (KB) a ring sums: COHORT_RING_MIN_KB, or by its link. Over TCP and shared
  // memory the ring beat MPI_Allreduce from 64 KB (Note [TCP ring], Note [Shared-memory ring]);
  // over MPI messages from 8 MB.
  static int RingMinKb(bool own_link) {
    return Env().ring_min_kb >= 0 ? Env().ring_min_kb : own_link ? 64 : 8192;
  }

  // The ring inside the host for two-level sums: through shared memory unless
  // COHORT_RING_TRANSPORT=mpi, or when the segment cannot be set up (then MPI messages, with a
  // warning). It sums buffers from COHORT_RING_MIN_KB, or 64 KB (8 MB over MPI messages); below
  // that one MPI_Allreduce of every rank is cheaper. A collective of every rank.
  void MakeHostRing() {
    const int64_t chunk_bytes =
        Env().ring_chunk_kb > 0 ? int64_t{Env().ring_chunk_kb} << 10 : int64_t{256} << 10;
    std::unique_ptr<RingLink> link;
    std::string why = "COHORT_RING_TRANSPORT=mpi";
    if (Env().ring_transport != "mpi") link = ConnectShmRing(host_, chunk_bytes, &why);
    if (!link && Env().ring_transport != "mpi" && (host_rank_ == 0 || why != kAnotherRankFailed))
      Log().warn("rank {}: the ring inside the host runs over MPI: {}", rank_, why);
    // Every rank must take the same path for a buffer: the threshold goes by the slowest host.
    const bool shm_everywhere = AllRanks(comm_, link != nullptr);
    const int min_kb = RingMinKb(shm_everywhere);
    host_ring_min_bytes_ = int64_t{min_kb} << 10;
    host_ring_ = link ? std::make_unique<RingAllreduce>(host_, std::move(link))
                      : std::make_unique<RingAllreduce>(host_, chunk_bytes);
    const Setting in_effect[] = {{"COHORT_RING_MIN_KB", min_kb}};  // which sums use it
    CheckSettingsAgree(comm_, in_effect);
    if (rank_ == 0) {
      int host_size = 1;
      MPI_CHECK(MPI_Comm_size(host_, &host_size));
      Log().info("kvstore: ring inside each host between {} ranks over {}, buffers from {} KB",
                 host_size, shm_everywhere ? "shared memory" : "MPI messages on at least one host",
                 min_kb);
    }
  }

  // Note [Ring all-reduce]: large reductions as a pipelined ring, small ones by MPI; Note
  // [Hierarchical all-reduce]: inside the host first, in two levels of rings or by a leader.
  void Sum(float* data, int64_t count) {
    if (host_ring_) {
      if (count * 4 >= host_ring_min_bytes_) {
        HierarchicalSum(
            *host_ring_, [this](float* segment, int64_t n) { FlatSum(across_, segment, n); }, data,
            count);
      } else {
        MPI_CHECK(
            MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm_));
      }
      return;
    }
    if (host_ != MPI_COMM_NULL) {
      const bool root = host_rank_ == 0;  // the receive buffer counts at the root alone
      MPI_CHECK(MPI_Reduce(root ? MPI_IN_PLACE : data, root ? data : nullptr,
                           static_cast<int>(count), MPI_FLOAT, MPI_SUM, 0, host_));
      if (leaders_ != MPI_COMM_NULL) FlatSum(leaders_, data, count);
      MPI_CHECK(MPI_Bcast(data, static_cast<int>(count), MPI_FLOAT, 0, host_));
      return;
    }
    FlatSum(comm_, data, count);
  }

  void FlatSum(MPI_Comm comm, float* data, int64_t count) {
    if (ring_min_bytes_ > 0 && count * 4 >= ring_min_bytes_) {
      ring_->Sum(data, count);
      return;
    }
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm));
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  // Hierarchical only: the host's ranks; its leader and the other hosts' (a leader a host), or
  // this local rank on every host (two levels).
  MPI_Comm host_ = MPI_COMM_NULL, leaders_ = MPI_COMM_NULL, across_ = MPI_COMM_NULL;
  int host_rank_ = 0;
  std::unique_ptr<RingAllreduce> host_ring_;  // two levels only
  int64_t host_ring_min_bytes_ = 0;
  std::unique_ptr<RingAllreduce> ring_;
  int64_t ring_min_bytes_ = 0;
  enum class RingLinkKind { kMpi, kShm, kTcp };
  RingLinkKind ring_link_ = RingLinkKind::kMpi;  // the same on every rank of the ring
  int rank_ = 0, size_ = 1;
  int thread_support_ = MPI_THREAD_SINGLE;
  std::vector<float> bucket_;                  // sized by the plan (AllReduce)
  std::vector<size_t> sizes_, planned_sizes_;  // bytes of each buffer, now and when planned
  std::vector<std::pair<size_t, size_t>> plan_;
  std::unique_ptr<CollectiveWatchdog> watchdog_;  // made once MPI is up
};

}  // namespace

std::unique_ptr<Comm> CreateMpiComm() { return std::make_unique<MpiComm>(); }

int DistributedRank() {
  int initialized = 0, finalized = 0, size = 1, rank = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return -1;
  MPI_Finalized(&finalized);
  if (finalized) return -1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void AbortDistributedJob(int exit_code) {
  if (DistributedRank() < 0) return;
  std::fflush(stdout);
  std::fflush(stderr);
  RunAbortHooks();  // NCCL communicators first: their kernels would wait for the dead
  MPI_Abort(MPI_COMM_WORLD, exit_code);
}

}  // namespace cohort
