// GpuResources in builds without CUDA: nothing can be created, and the error says why.
#include "operator/common/gpu_resources.h"

#include "base/error.h"

namespace cohort::op {

struct GpuResources::Impl {};

std::unique_ptr<GpuResources> GpuResources::Create(int device) {
  COHORT_THROW() << "gpu:" << device
                 << ": this build of Cohort has no GPU kernels (nvcc was not found at configure)";
  return nullptr;
}
GpuResources::GpuResources(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuResources::~GpuResources() = default;
int GpuResources::device() const { return -1; }
void* GpuResources::stream() const { return nullptr; }
void GpuResources::MakeCurrent() const {}
void GpuResources::Synchronize() const {}

bool BuiltWithGpuKernels() { return false; }

}  // namespace cohort::op
