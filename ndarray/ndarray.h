// NDArray: an n-dimensional array on a context; a handle to shared storage plus an offset.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "base/context.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "ndarray/storage.h"

namespace cohort {

// Value semantics of a handle, as MXNet's NDArray: copying an NDArray shares its memory, and
// Slice, At and Reshape return views of the same storage. Writes through any handle (even a
// const one) are seen by all views: constness is that of the handle, not of the data. A
// default-made NDArray is "none" (no storage).
//
// Reuse instead of allocation: make arrays once at their largest size and take views
// (Slice / Reshape to a smaller size) and CopyTo into them; nothing in here allocates except
// Empty/Zeros/Full/FromVector, CopyTo(Context) and AsType.
class NDArray {
 public:
  NDArray() = default;

  // Uninitialised memory.
  static NDArray Empty(const Shape& shape, DType dtype = DType::kFloat32,
                       Context ctx = Context::CPU());
  static NDArray Zeros(const Shape& shape, DType dtype = DType::kFloat32,
                       Context ctx = Context::CPU());
  static NDArray Full(const Shape& shape, double value, DType dtype = DType::kFloat32,
                      Context ctx = Context::CPU());
  // An array of T's dtype holding `values` (row-major); values.size() must equal shape.Size().
  template <typename T>
  static NDArray FromVector(const Shape& shape, std::span<const T> values,
                            Context ctx = Context::CPU());
  template <typename T>
  static NDArray FromVector(const Shape& shape, const std::vector<T>& values,
                            Context ctx = Context::CPU()) {
    return FromVector<T>(shape, std::span<const T>(values), ctx);
  }

  // An array over memory owned elsewhere (zero-copy from DLPack): `data` holds shape's elements
  // of dtype, row-major, on ctx; `release` runs when the last array over it is dropped.
  static NDArray Wrap(void* data, const Shape& shape, DType dtype, Context ctx,
                      std::function<void()> release);

  bool is_none() const { return storage_ == nullptr; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Context ctx() const;
  int64_t size() const { return shape_.Size(); }
  size_t nbytes() const { return static_cast<size_t>(size()) * DTypeSize(dtype_); }
  // Bytes from the start of the storage to element 0.
  size_t byte_offset() const { return offset_; }
  bool SharesStorageWith(const NDArray& other) const {
    return storage_ && storage_ == other.storage_;
  }

  // The first element's address (on the array's device).
  void* raw_data() const;
  // Typed host access: T must be the array's element type and the array must be in host memory.
  template <typename T>
  T* data() const;

  // Rows [begin, end) along axis 0, as a view.
  NDArray Slice(int64_t begin, int64_t end) const;
  // Row i along axis 0, as a view with one dimension less.
  NDArray At(int64_t i) const;
  // A view with another shape of at most as many elements (as MXNet's Reshape).
  NDArray Reshape(const Shape& shape) const;
  // A view of this array's bytes as another dtype and shape, of at most as many bytes (the
  // executor carves its planned blocks into arrays of every dtype this way).
  NDArray View(const Shape& shape, DType dtype) const;

  // Copies into dst, which must have the same shape; contexts may differ, and so may dtypes
  // (values convert as ConvertValue does).
  void CopyTo(const NDArray& dst) const;
  // A new array on ctx holding a copy.
  NDArray CopyTo(Context ctx) const;
  void CopyFrom(const NDArray& src) const { src.CopyTo(*this); }
  // This array when it is in host memory; else a copy in *staging, which is (re)made on `host`
  // only when its shape or dtype does not fit, so a loop that reads GPU arrays allocates once.
  const NDArray& OnHost(NDArray* staging, Context host = Context::CPU()) const;
  // A new array of another dtype on the same context.
  NDArray AsType(DType dtype) const;
  // Sets every element to value (converted to the array's dtype).
  void Fill(double value) const;

  // The elements, converted to T, in row-major order, wherever the array lives.
  template <typename T>
  std::vector<T> ToVector() const;

 private:
  NDArray(std::shared_ptr<Storage> storage, size_t offset, Shape shape, DType dtype)
      : storage_(std::move(storage)), offset_(offset), shape_(shape), dtype_(dtype) {}
  void CheckNotNone(const char* what) const;

  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
};

// Converts n elements between host buffers of any two dtypes.
void CastElements(const void* src, DType src_dtype, void* dst, DType dst_dtype, int64_t n);

// Copies each src[i] into (*dst)[i], reusing dst's arrays where shape and dtype match (else made
// anew on src[i]'s context), so a loop that keeps copies of its batches allocates once.
void CopyArraysInto(const std::vector<NDArray>& src, std::vector<NDArray>* dst);

template <typename T>
NDArray NDArray::FromVector(const Shape& shape, std::span<const T> values, Context ctx) {
  COHORT_CHECK_EQ(static_cast<int64_t>(values.size()), shape.Size())
      << "FromVector: " << values.size() << " values do not fill shape " << shape;
  NDArray host = Empty(shape, kDTypeOf<T>, Context::CPU());
  std::copy(values.begin(), values.end(), host.data<T>());
  return ctx == Context::CPU() ? host : host.CopyTo(ctx);
}

template <typename T>
T* NDArray::data() const {
  CheckNotNone("data()");
  COHORT_CHECK(dtype_ == kDTypeOf<T>)
      << "data<" << DTypeName(kDTypeOf<T>) << ">() on an array of dtype " << dtype_;
  COHORT_CHECK(ctx().is_host()) << "data() on an array on " << ctx()
                                << ": copy it to the CPU first";
  return static_cast<T*>(raw_data());
}

template <typename T>
std::vector<T> NDArray::ToVector() const {
  CheckNotNone("ToVector()");
  std::vector<T> out(static_cast<size_t>(size()));
  if (out.empty()) return out;
  NDArray host = ctx().is_host() ? *this : CopyTo(Context::CPU());
  if constexpr (std::is_same_v<T, bool>) {  // vector<bool> has no data(): go through uint8
    std::vector<uint8_t> bytes(out.size());
    CastElements(host.raw_data(), dtype_, bytes.data(), DType::kUint8, size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
  } else {
    CastElements(host.raw_data(), dtype_, out.data(), kDTypeOf<T>, size());
  }
  return out;
}

}  // namespace cohort
