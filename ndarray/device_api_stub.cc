// device_api for builds without CUDA: no GPUs, and a clear error from anything that needs one.
#include "base/error.h"
#include "ndarray/device_api.h"
#include "ndarray/stream_ops.h"

namespace cohort::device {
namespace {

[[noreturn]] void NoCuda(const char* what) {
  throw Error(std::string(what) +
                  " needs a GPU, but Cohort was built without CUDA "
                  "(configure on a machine with nvcc to enable COHORT_CUDA)",
              __FILE__, __LINE__);
}

}  // namespace

bool BuiltWithCuda() { return false; }
int Count() { return 0; }
void* Malloc(int, size_t) { NoCuda("GPU memory"); }
void Free(int, void*) { NoCuda("GPU memory"); }
void* MallocPinned(size_t) { NoCuda("pinned host memory"); }
void FreePinned(void*) { NoCuda("pinned host memory"); }
void Copy(void*, Context, const void*, Context, size_t) { NoCuda("a copy to or from a GPU"); }
void Fill(void*, int, const void*, size_t, size_t) { NoCuda("filling a GPU array"); }
void CastAsync(const void*, DType, void*, DType, size_t, int, void*) {
  NoCuda("casting a GPU array");
}
void MarkNonFinite(int, const float* const*, const size_t*, int, uint8_t*) {
  NoCuda("checking a GPU array for NaN");
}

}  // namespace cohort::device

namespace cohort {
std::unique_ptr<StreamOps> CreateCudaStreamOps() {
  throw Error("CUDA streams need a GPU, but Cohort was built without CUDA", __FILE__, __LINE__);
}
}  // namespace cohort
