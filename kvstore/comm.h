// Comm: how a kvstore's sums cross workers, the strategy the host kvstore is composed with
// (Note [KVStore composition]).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ndarray/ndarray.h"

namespace cohort {

// The workers of a job and their collectives over host float32 buffers. Every worker calls
// each collective with buffers of the same sizes in the same order.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void Barrier() = 0;
  // Sums each buffer in place over every worker; every worker ends with the same bits.
  virtual void AllReduce(const std::vector<NDArray>& buffers) = 0;
  // Makes every worker's buffers equal to rank 0's.
  virtual void Broadcast(const std::vector<NDArray>& buffers) = 0;
  // Sums a few doubles in place over every worker (metric sums, agreement checks).
  virtual void SumDoubles(std::span<double> values) = 0;
  // Note [Gradient compression]: the type AllReduce's floats cross between workers in (float32,
  // bfloat16 or float16); returns false where nothing crosses (one worker).
  virtual bool SetWire(DType wire) {
    (void)wire;
    return false;
  }
  // Whether AllReduce may run on a communication thread while other threads compute, and
  // whether it does when COHORT_KVSTORE_OVERLAP is not set (Note [Overlapped push]).
  virtual bool CanOverlap() const = 0;
  virtual bool OverlapsByDefault() const = 0;
};

// One worker: every collective is a no-op (the local and device kinds).
std::unique_ptr<Comm> CreateSingleWorkerComm();
// One worker per process of an mpirun job: small buffers fused into buckets and summed by
// MPI_Allreduce, large ones by Cohort's pipelined ring (Note [Ring all-reduce]), inside each host
// first when the job spans hosts of several ranks (Note [Hierarchical all-reduce]). Initialises
// MPI when the program did not.
std::unique_ptr<Comm> CreateMpiComm();

}  // namespace cohort
