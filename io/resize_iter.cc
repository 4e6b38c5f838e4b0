// ResizeIter.
#include "io/resize_iter.h"

namespace cohort {

ResizeIter::ResizeIter(std::unique_ptr<DataIter> inner, int64_t size, bool reset_internal)
    : inner_(std::move(inner)), size_(size), reset_internal_(reset_internal) {
  COHORT_CHECK(inner_ != nullptr) << "ResizeIter needs an iterator";
  COHORT_CHECK_GT(size_, 0) << "ResizeIter size";
}

void ResizeIter::Reset() {
  served_ = 0;
  if (reset_internal_) inner_->Reset();
}

void ResizeIter::SkipEpoch() {
  while (Next()) {
  }
  Reset();
}

bool ResizeIter::Next() {
  if (served_ == size_) return false;
  if (!inner_->Next()) {
    inner_->Reset();
    COHORT_CHECK(inner_->Next()) << "ResizeIter: the inner iterator yields no batch after Reset";
  }
  ++served_;
  return true;
}

}  // namespace cohort
