// GpuResources: the CUDA stream, cuBLAS/cuDNN handles, workspace and cached cuDNN plans of one
// executor on one GPU (Note [GPU streams]). Plain C++: the CUDA types live in gpu_common.cuh.
#pragma once

#include <memory>

namespace cohort::op {

// Note [GPU streams]
// Every executor bound on a GPU enqueues its kernels, in graph order, on a stream of its own,
// made with cudaStreamCreate: a *blocking* stream, which the legacy default stream waits for and
// which waits for it. NDArray's copies (CopyTo, ToVector, LoadDataBatch) and fills run on the
// default stream, so a copy that reads an output or a gradient starts after the kernels that
// wrote it, and kernels enqueued after a copy into an input see the copied data; no explicit
// events are needed between the executor and NDArray. Forward and Backward therefore return as
// soon as their kernels are enqueued (as MXNet's engine does), and Synchronize() waits for them.
// Work on other streams (NCCL's communication stream) is ordered with events, see kvstore_nccl.
class GpuResources {
 public:
  // Stream, handles and a workspace on GPU `device`; throws in builds without CUDA.
  static std::unique_ptr<GpuResources> Create(int device);
  ~GpuResources();
  GpuResources(const GpuResources&) = delete;
  GpuResources& operator=(const GpuResources&) = delete;

  int device() const;
  void* stream() const;      // the cudaStream_t
  void MakeCurrent() const;  // cudaSetDevice(device()) for the calling thread
  void Synchronize() const;  // waits for every kernel enqueued so far

  struct Impl;  // gpu_common.cuh
  Impl& impl() const { return *impl_; }

 private:
  explicit GpuResources(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether this build compiled GPU kernels (CUDA found at configure time).
bool BuiltWithGpuKernels();

}  // namespace cohort::op
