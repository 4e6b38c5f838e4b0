// Shape.
#include "base/shape.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "base/error.h"

namespace cohort {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  COHORT_CHECK_LE(dims.size(), static_cast<size_t>(kMaxNdim))
      << "a shape has at most " << kMaxNdim << " dimensions";
  ndim_ = static_cast<int>(dims.size());
  std::copy(dims.begin(), dims.end(), dims_.begin());
}

int Shape::Check(int axis) const {
  COHORT_CHECK(axis >= 0 && axis < ndim_)
      << "axis " << axis << " is out of range for shape " << ToString();
  return axis;
}

int64_t Shape::Size() const {
  COHORT_CHECK(is_known()) << "shape " << ToString() << " has unknown dimensions";
  int64_t size = 1;
  for (int i = 0; i < ndim_; ++i) {
    // A shape read from a file may claim more elements than int64 holds (found by fuzzing the
    // .params reader: 3372744704 x 4187177210 overflowed).
    COHORT_CHECK(!__builtin_mul_overflow(size, dims_[i], &size))
        << "shape " << ToString() << " has more than 2^63 elements";
  }
  return size;
}

bool Shape::is_known() const {
  return std::all_of(begin(), end(), [](int64_t d) { return d >= 0; });
}

Shape Shape::WithDim0(int64_t n) const {
  Shape s = *this;
  s[0] = n;
  return s;
}

std::string Shape::ToString() const {
  std::string out = "(";
  for (int i = 0; i < ndim_; ++i) {
    if (i) out += ",";
    out += dims_[i] < 0 ? "?" : std::to_string(dims_[i]);
  }
  return out + (ndim_ == 1 ? ",)" : ")");  // (6,) as Python prints a 1-tuple
}

Shape Shape::Parse(std::string_view text) {
  std::string_view s = text;
  auto trim = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '(' || v.front() == '[')) {
      v.remove_prefix(1);
    }
    while (!v.empty() && (v.back() == ' ' || v.back() == ')' || v.back() == ']')) {
      v.remove_suffix(1);
    }
    return v;
  };
  s = trim(s);
  if (!s.empty() && s.back() == ',') s = trim(s.substr(0, s.size() - 1));  // "(6,)"
  std::vector<int64_t> dims;
  while (!s.empty()) {
    auto comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    COHORT_CHECK(!item.empty() && ec == std::errc() && ptr == item.data() + item.size())
        << "invalid shape '" << text << "': expected integers separated by commas, e.g. 1,28,28";
    dims.push_back(value);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  COHORT_CHECK_LE(dims.size(), static_cast<size_t>(kMaxNdim)) << "in shape '" << text << "'";
  return Shape(std::span<const int64_t>(dims));
}

bool operator==(const Shape& a, const Shape& b) {
  return a.ndim_ == b.ndim_ && std::equal(a.begin(), a.end(), b.begin());
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.ToString(); }

}  // namespace cohort
