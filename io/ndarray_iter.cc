// NDArrayIter.
#include "io/ndarray_iter.h"

namespace cohort {
namespace {

std::vector<BatchField> Fields(const NDArrayIter::NamedArrays& arrays) {
  std::vector<BatchField> out;
  for (const auto& [name, array] : arrays) {
    COHORT_CHECK(!array.is_none()) << "NDArrayIter: array '" << name << "' is none";
    // Arrays on a GPU are served from a host copy; host arrays are used in place.
    NDArray host = array.ctx().is_host() ? array : array.CopyTo(Context::CPU());
    out.push_back({name, host, array.dtype(), 1.0f});
  }
  return out;
}

}  // namespace

NDArrayIter::NDArrayIter(const NamedArrays& data, const NamedArrays& label,
                         const BatchOptions& options) {
  batcher_ = std::make_unique<Batcher>(Fields(data), Fields(label), options);
}

}  // namespace cohort
