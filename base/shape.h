// Shape: the dimensions of an array, held inline (no heap) so shapes are cheap on hot paths.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace cohort {

// Up to kMaxNdim dimensions. ndim 0 is a scalar (Size() == 1). A dimension below zero means
// "unknown" (shape inference fills it in); arrays are only made from known shapes.
class Shape {
 public:
  static constexpr int kMaxNdim = 8;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  int ndim() const { return ndim_; }
  int64_t operator[](int axis) const { return dims_[Check(axis)]; }
  int64_t& operator[](int axis) { return dims_[Check(axis)]; }
  std::span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(ndim_)}; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + ndim_; }

  // Number of elements: the product of the dimensions (1 for a scalar). Requires is_known().
  int64_t Size() const;
  bool is_known() const;
  // The same shape with axis 0 set to n (a batch slice).
  Shape WithDim0(int64_t n) const;

  // "(2,3)", "()" for a scalar, "(2,?)" for an unknown dimension.
  std::string ToString() const;
  // "2,3", "(2,3)" or "[2, 3]"; throws naming the text when it is not a list of integers.
  static Shape Parse(std::string_view text);

  friend bool operator==(const Shape& a, const Shape& b);

 private:
  int Check(int axis) const;

  std::array<int64_t, kMaxNdim> dims_{};
  int ndim_ = 0;
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace cohort
