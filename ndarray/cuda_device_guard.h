// CudaDeviceGuard: makes a GPU current for the calling thread and restores the previous one
// afterwards, so that a call on one GPU leaves the caller's current device as it was.
#pragma once

#include <cuda_runtime.h>

#include "base/error_cuda.h"

namespace cohort {

class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device) {
    CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) CUDA_CHECK(cudaSetDevice(device));
  }
  ~CudaDeviceGuard() { cudaSetDevice(previous_); }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace cohort
