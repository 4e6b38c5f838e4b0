// The few CUDA runtime services that storage and copies need, behind a plain C++ interface:
// device_api.cu implements them with CUDA; device_api_stub.cc, in builds without CUDA, reports
// no GPUs and throws a clear error from everything that would need one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/context.h"
#include "base/dtype.h"

namespace cohort::device {

// Whether this build has CUDA support compiled in.
bool BuiltWithCuda();
// Number of GPUs visible to this process: 0 without CUDA, without a driver, or without a GPU.
int Count();

// Raw device memory on GPU `device`; nullptr when the device is out of memory.
void* Malloc(int device, size_t bytes);
void Free(int device, void* ptr);
// Page-locked host memory; throws when it cannot be had.
void* MallocPinned(size_t bytes);
void FreePinned(void* ptr);

// Copies `bytes` from src on src_ctx to dst on dst_ctx (any pair of host and GPU contexts). A copy
// to or from the host returns when it is complete; one between GPUs (or on one GPU) returns at
// once, ordered with the devices' legacy-stream work (CUDA's rules for device-to-device copies).
void Copy(void* dst, Context dst_ctx, const void* src, Context src_ctx, size_t bytes);
// Writes `count` copies of the `elem_size`-byte pattern (1, 2, 4 or 8 bytes) to dst on GPU.
void Fill(void* dst, int device, const void* pattern, size_t elem_size, size_t count);
// Enqueues on `stream` (a cudaStream_t of GPU `device`) the conversion of n elements of src to
// dst, between float32 and bfloat16 or float16, rounding to nearest even (base/half.h's): the
// nccl kvstore's gradient compression (Note [Gradient compression]).
void CastAsync(const void* src, DType from, void* dst, DType to, size_t n, int device,
               void* stream);
// Sets flags[i] to 1 when arrays[i] (sizes[i] float32 values on GPU `device`) holds a NaN or an
// infinity, else to 0, once the work queued before on the device's blocking streams is done
// (it runs on the legacy stream, so work on non-blocking streams, such as NCCL's, must have been
// waited for: the trainer checks after the buckets' Finish).
// One pass over every array on the device; only the flags come back to the host, where copying
// the arrays would move all their bytes (ndarray/finite.h).
void MarkNonFinite(int device, const float* const* arrays, const size_t* sizes, int count,
                   uint8_t* flags);

}  // namespace cohort::device
