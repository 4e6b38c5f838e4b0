// GpuResources on the CUDA runtime (Note [GPU streams]).
#include "base/env.h"
#include "operator/common/gpu_common.cuh"

namespace cohort::op {

std::unique_ptr<GpuResources> GpuResources::Create(int device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    count = 0;
  }
  COHORT_CHECK(device >= 0 && device < count)
      << "gpu:" << device << " does not exist: this process sees " << count << " GPU(s)";
  auto owned = std::make_unique<Impl>();
  Impl* impl = owned.get();
  impl->device = device;
  // Owned from here on, so that the destructor frees what was made when a later step throws.
  std::unique_ptr<GpuResources> resources(new GpuResources(std::move(owned)));
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaStreamCreate(&impl->stream));  // blocking: ordered with the default stream
  CUBLAS_CHECK(cublasCreate(&impl->cublas));
  CUBLAS_CHECK(cublasSetStream(impl->cublas, impl->stream));
  impl->tf32 = Env().gpu_tf32;
  impl->deterministic = Env().gpu_deterministic;
  CUBLAS_CHECK(cublasSetMathMode(impl->cublas,
                                 impl->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  CUDNN_CHECK(cudnnCreate(&impl->cudnn));
  CUDNN_CHECK(cudnnSetStream(impl->cudnn, impl->stream));
  return resources;
}

GpuResources::GpuResources(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GpuResources::~GpuResources() {
  if (!impl_) return;
  cudaSetDevice(impl_->device);
  if (impl_->stream) cudaStreamSynchronize(impl_->stream);  // kernels may still use the workspace
  impl_->plans.clear();
  impl_->workspace.reset();
  if (impl_->cudnn) cudnnDestroy(impl_->cudnn);
  if (impl_->cublas) cublasDestroy(impl_->cublas);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

int GpuResources::device() const { return impl_->device; }
void* GpuResources::stream() const { return impl_->stream; }
void GpuResources::MakeCurrent() const { CUDA_CHECK(cudaSetDevice(impl_->device)); }
void GpuResources::Synchronize() const { CUDA_CHECK(cudaStreamSynchronize(impl_->stream)); }

void* GpuResources::Impl::Workspace(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (!workspace || workspace->size() < bytes) {
    // Kernels enqueued earlier may still use the old block, and the caching pool may hand it at
    // once to another executor, whose stream is not ordered with this one: wait for them first.
    if (workspace) CUDA_CHECK(cudaStreamSynchronize(stream));
    workspace.reset();  // back to the pool first, so that the larger block may reuse it
    workspace = Storage::Alloc(bytes, Context::GPU(device));
  }
  return workspace->data();
}

bool BuiltWithGpuKernels() { return true; }

}  // namespace cohort::op
