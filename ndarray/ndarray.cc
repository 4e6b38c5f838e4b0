// NDArray: views, copies between contexts, casts and fills.
#include "ndarray/ndarray.h"

#include <algorithm>
#include <cstring>

#include "ndarray/device_api.h"

namespace cohort {

NDArray NDArray::Empty(const Shape& shape, DType dtype, Context ctx) {
  COHORT_CHECK(shape.is_known()) << "cannot make an array of unknown shape " << shape;
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(shape.Size()), DTypeSize(dtype), &bytes)) {
    // 2^62 floats would wrap to 0 bytes, an allocation that succeeds and is then overrun.
    throw OutOfMemoryError("cannot allocate an array of shape " + shape.ToString() +
                               ": its bytes exceed 2^64",
                           __FILE__, __LINE__);
  }
  return NDArray(Storage::Alloc(bytes, ctx), 0, shape, dtype);
}

NDArray NDArray::Zeros(const Shape& shape, DType dtype, Context ctx) {
  return Full(shape, 0.0, dtype, ctx);
}

NDArray NDArray::Full(const Shape& shape, double value, DType dtype, Context ctx) {
  NDArray out = Empty(shape, dtype, ctx);
  out.Fill(value);
  return out;
}

void NDArray::CheckNotNone(const char* what) const {
  COHORT_CHECK(!is_none()) << what << " on a none NDArray (one that holds no array)";
}

Context NDArray::ctx() const { return storage_ ? storage_->ctx() : Context::CPU(); }

void* NDArray::raw_data() const {
  CheckNotNone("raw_data()");
  return storage_->data() ? static_cast<char*>(storage_->data()) + offset_ : nullptr;
}

NDArray NDArray::Slice(int64_t begin, int64_t end) const {
  CheckNotNone("Slice");
  COHORT_CHECK(shape_.ndim() > 0) << "Slice on a scalar array";
  COHORT_CHECK(0 <= begin && begin <= end && end <= shape_[0])
      << "Slice(" << begin << ", " << end << ") is out of range for shape " << shape_;
  const size_t row_bytes = shape_[0] == 0 ? 0 : nbytes() / static_cast<size_t>(shape_[0]);
  return NDArray(storage_, offset_ + static_cast<size_t>(begin) * row_bytes,
                 shape_.WithDim0(end - begin), dtype_);
}

NDArray NDArray::At(int64_t i) const {
  NDArray row = Slice(i, i + 1);
  return NDArray(row.storage_, row.offset_, Shape(shape_.dims().subspan(1)), dtype_);
}

NDArray NDArray::Reshape(const Shape& shape) const {
  CheckNotNone("Reshape");
  COHORT_CHECK(shape.is_known()) << "Reshape to unknown shape " << shape;
  COHORT_CHECK_LE(shape.Size(), size())
      << "Reshape from " << shape_ << " to " << shape << " needs more elements than it has";
  return NDArray(storage_, offset_, shape, dtype_);
}

NDArray NDArray::Wrap(void* data, const Shape& shape, DType dtype, Context ctx,
                      std::function<void()> release) {
  COHORT_CHECK(shape.is_known()) << "Wrap: unknown shape " << shape;
  const size_t bytes = static_cast<size_t>(shape.Size()) * DTypeSize(dtype);
  return NDArray(Storage::Wrap(data, bytes, ctx, std::move(release)), 0, shape, dtype);
}

NDArray NDArray::View(const Shape& shape, DType dtype) const {
  CheckNotNone("View");
  COHORT_CHECK(shape.is_known()) << "View as unknown shape " << shape;
  const size_t bytes = static_cast<size_t>(shape.Size()) * DTypeSize(dtype);
  COHORT_CHECK_LE(bytes, nbytes()) << "View of " << shape_ << " " << dtype_ << " as " << shape
                                   << " " << dtype << " needs more bytes than it has";
  return NDArray(storage_, offset_, shape, dtype);
}

void CastElements(const void* src, DType src_dtype, void* dst, DType dst_dtype, int64_t n) {
  DispatchDType(src_dtype, [&](auto src_tag) {
    using From = decltype(src_tag);
    DispatchDType(dst_dtype, [&](auto dst_tag) {
      using To = decltype(dst_tag);
      const From* in = static_cast<const From*>(src);
      To* out = static_cast<To*>(dst);
      for (int64_t i = 0; i < n; ++i) out[i] = ConvertValue<To>(in[i]);
    });
  });
}

void CopyArraysInto(const std::vector<NDArray>& src, std::vector<NDArray>* dst) {
  dst->resize(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    NDArray& d = (*dst)[i];
    if (d.is_none() || d.shape() != src[i].shape() || d.dtype() != src[i].dtype()) {
      d = NDArray::Empty(src[i].shape(), src[i].dtype(), src[i].ctx());
    }
    src[i].CopyTo(d);
  }
}

void NDArray::CopyTo(const NDArray& dst) const {
  CheckNotNone("CopyTo (source)");
  dst.CheckNotNone("CopyTo (destination)");
  COHORT_CHECK(shape_ == dst.shape_)
      << "CopyTo: source shape " << shape_ << " differs from destination shape " << dst.shape_;
  if (size() == 0) return;
  if (dtype_ == dst.dtype_) {
    if (ctx().is_host() && dst.ctx().is_host()) {
      std::memmove(dst.raw_data(), raw_data(), nbytes());  // views of one storage may overlap
    } else {
      device::Copy(dst.raw_data(), dst.ctx(), raw_data(), ctx(), nbytes());
    }
    return;
  }
  if (ctx().is_host() && dst.ctx().is_host()) {
    CastElements(raw_data(), dtype_, dst.raw_data(), dst.dtype_, size());
    return;
  }
  // A cast that involves a GPU goes through host memory (not on any hot path).
  NDArray host_src = ctx().is_host() ? *this : CopyTo(Context::CPU());
  NDArray host_dst = Empty(shape_, dst.dtype_, Context::CPU());
  host_src.CopyTo(host_dst);
  host_dst.CopyTo(dst);
}

NDArray NDArray::CopyTo(Context ctx) const {
  CheckNotNone("CopyTo");
  NDArray out = Empty(shape_, dtype_, ctx);
  CopyTo(out);
  return out;
}

const NDArray& NDArray::OnHost(NDArray* staging, Context host) const {
  if (ctx().is_host()) return *this;
  if (staging->is_none() || !staging->ctx().is_host() || staging->shape() != shape_ ||
      staging->dtype() != dtype_) {
    *staging = Empty(shape_, dtype_, host);
  }
  CopyTo(*staging);
  return *staging;
}

NDArray NDArray::AsType(DType dtype) const {
  CheckNotNone("AsType");
  NDArray out = Empty(shape_, dtype, ctx());
  CopyTo(out);
  return out;
}

void NDArray::Fill(double value) const {
  CheckNotNone("Fill");
  DispatchDType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T element = ConvertValue<T>(value);
    if (ctx().is_host()) {
      std::fill_n(static_cast<T*>(raw_data()), size(), element);
    } else {
      device::Fill(raw_data(), ctx().id, &element, sizeof(T), static_cast<size_t>(size()));
    }
  });
}

}  // namespace cohort
