// Tuning knobs read from COHORT_* environment variables, all in this one place (README lists them).
#pragma once

#include <string>

namespace cohort {

// The most kernel threads a process may ask for (COHORT_NUM_THREADS, the config's `threads`):
// more is a typo, and TBB's arena crashed on 2^31 - 1.
constexpr int kMaxThreads = 1024;

struct EnvConfig {
  // COHORT_LOG_LEVEL: trace, debug, info, warn, error, critical or off (default info).
  std::string log_level = "info";
  // COHORT_NUM_THREADS: worker threads for CPU kernels in all (default: this process's share of
  // the cores, Note [Default thread count]).
  int num_threads = 0;
  // COHORT_GPU_MEM_POOL: 1 caches freed GPU blocks for reuse, 0 frees them at once (default 1).
  bool gpu_mem_pool = true;
  // COHORT_GPU_TF32: 1 lets cuBLAS and cuDNN use TF32 tensor cores for float32 GEMMs and
  // convolutions (10-bit mantissa inputs, float32 accumulation); 0 keeps full float32 (default).
  bool gpu_tf32 = false;
  // COHORT_GPU_DETERMINISTIC: 1 (default) keeps cuDNN's convolutions to algorithms that give the
  // same bits on every run (some backward algorithms add with atomics); 0 takes the fastest.
  bool gpu_deterministic = true;
  // COHORT_KVSTORE_BUCKET_MB: gradients are fused into buckets of this size for each MPI
  // allreduce, and grouped by this size into one NCCL launch while backward runs (default 4).
  int kvstore_bucket_mb = 4;
  // COHORT_KVSTORE_OVERLAP: 1 reduces gradient buckets across workers on a communication thread
  // while backward still runs (Note [Overlapped push]), 0 after backward. Unset (-1): the
  // kvstore's default: on for nccl (the GPUs compute while NCCL communicates), off for mpi (with
  // CPU devices on every core the thread takes cycles from backward; LeNet under mpirun -np 2 on
  // 2 cores ran 19.0-20.6 ms per step with it, 18.2-19.4 without).
  int kvstore_overlap = -1;
  // COHORT_COMM_TIMEOUT: seconds a collective of the mpi kvstore may wait for the other workers
  // before the job is ended (Note [Collective deadline]); it warns at a quarter of it. 0 waits
  // forever (default 600).
  int comm_timeout = 600;
  // COHORT_RING_MIN_KB: reductions of the mpi kvstore of at least this size run as a pipelined
  // ring (Note [Ring all-reduce]) instead of MPI_Allreduce; 0 never. Unset (-1): by the ring's
  // link, 8192 over MPI messages (below 8 MB Open MPI was as fast here) and 64 through shared
  // memory or over TCP (Note [Shared-memory ring], Note [TCP ring]). COHORT_RING_CHUNK_KB: the
  // size of its MPI messages or shared slots (default 0: by the transport, 256 KB inside one
  // host and 16 MB across hosts, measured in comm_mpi.cc).
  int ring_min_kb = -1;
  // COHORT_KVSTORE_HIERARCHICAL: reduce inside each host first (Note [Hierarchical all-reduce]).
  // Unset (-1): in two levels of rings when the job spans hosts that all run as many ranks, two
  // or more, and COHORT_RING_MIN_KB is not 0; 1: also with a leader a host otherwise; 0: flat.
  int kvstore_hierarchical = -1;
  int ring_chunk_kb = 0;
  // COHORT_RING_TRANSPORT: how the ring's neighbours talk (Note [TCP ring], Note [Shared-memory
  // ring]): "auto" (TCP sockets when every rank of the ring has a host of its own, a shared
  // segment when all share one host, else MPI messages), "shm", "tcp" or "mpi".
  // COHORT_SOCKET_IFNAME: the interface whose IPv4 addresses the TCP ring uses (default: every
  // interface that is up and not loopback).
  std::string ring_transport = "auto";
  std::string socket_ifname;
};

// The default COHORT_NUM_THREADS (Note [Default thread count]): `allowed` cores of the affinity
// mask when that is narrower than the `hardware` cores, else the hardware split evenly over the
// `local_ranks` processes of an MPI job on this host (0 or 1: not under MPI).
int ShareOfCores(int hardware, int allowed, int local_ranks);

// Read once, on first use; a malformed value throws naming the variable.
const EnvConfig& Env();
// MXNet's MXNET_ELIMINATE_COMMON_EXPR, read at each bind as MXNet reads it: 1 (default) merges
// equal op nodes of the graph (Symbol::EliminateCommonExpr), 0 binds the graph as written.
bool EliminateCommonExprOn();
// COHORT_FUSE_OPS, read at each bind: 1 (default) runs the attention's scale, mask and softmax
// as one op (Note [Masked softmax fusion]), 0 binds the graph without fusing.
bool FuseOpsOn();
// Replaces COHORT_NUM_THREADS's value (a config's `threads`). Thread pools read it when they are
// made, so call it before the first parallel work: setenv after Env() was read changes nothing.
void SetNumThreads(int threads);

}  // namespace cohort
