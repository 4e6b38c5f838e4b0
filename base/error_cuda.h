// Check macros for CUDA runtime, cuBLAS, cuDNN and NCCL calls: each throws cohort::DeviceError
// naming the call, the library's own error string and the source location.
#pragma once

#include <cuda_runtime.h>

#include "base/error.h"

#define CUDA_CHECK(call)                                                     \
  do {                                                                       \
    cudaError_t cohort_cuda_status_ = (call);                                \
    if (cohort_cuda_status_ != cudaSuccess) {                                \
      COHORT_THROW_DEVICE() << "CUDA call " #call " failed: "                \
                            << cudaGetErrorName(cohort_cuda_status_) << ": " \
                            << cudaGetErrorString(cohort_cuda_status_);      \
    }                                                                        \
  } while (0)

#ifdef CUBLAS_API_H_
#define CUBLAS_CHECK(call)                                                   \
  do {                                                                       \
    cublasStatus_t cohort_cublas_status_ = (call);                           \
    if (cohort_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                    \
      COHORT_THROW_DEVICE() << "cuBLAS call " #call " failed: "              \
                            << cublasGetStatusString(cohort_cublas_status_); \
    }                                                                        \
  } while (0)
#endif

#ifdef CUDNN_VERSION
#define CUDNN_CHECK(call)                                                 \
  do {                                                                    \
    cudnnStatus_t cohort_cudnn_status_ = (call);                          \
    if (cohort_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                   \
      COHORT_THROW_DEVICE() << "cuDNN call " #call " failed: "            \
                            << cudnnGetErrorString(cohort_cudnn_status_); \
    }                                                                     \
  } while (0)
#endif

#ifdef NCCL_MAJOR
#define NCCL_CHECK(call)                                                \
  do {                                                                  \
    ncclResult_t cohort_nccl_status_ = (call);                          \
    if (cohort_nccl_status_ != ncclSuccess) {                           \
      COHORT_THROW_DEVICE() << "NCCL call " #call " failed: "           \
                            << ncclGetErrorString(cohort_nccl_status_); \
    }                                                                   \
  } while (0)
#endif
