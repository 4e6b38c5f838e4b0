// The single-worker Comm (the local and device kinds).
#include "kvstore/comm.h"

namespace cohort {
namespace {

class SingleWorkerComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void Barrier() override {}
  void AllReduce(const std::vector<NDArray>&) override {}
  void Broadcast(const std::vector<NDArray>&) override {}
  void SumDoubles(std::span<double>) override {}
  bool CanOverlap() const override { return false; }  // nothing to overlap
  bool OverlapsByDefault() const override { return false; }
};

}  // namespace

std::unique_ptr<Comm> CreateSingleWorkerComm() { return std::make_unique<SingleWorkerComm>(); }

}  // namespace cohort
