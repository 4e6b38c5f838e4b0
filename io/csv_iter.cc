// CSVIter and its parser.
#include "io/csv_iter.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <type_traits>

namespace cohort {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  COHORT_CHECK(in.good()) << "cannot open '" << path << "': " << std::strerror(errno);
  std::ostringstream text;
  text << in.rdbuf();
  COHORT_CHECK(!in.bad()) << "cannot read '" << path << "'";
  return std::move(text).str();
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

template <typename T>
NDArray ReadCsvAs(const std::string& path, const Shape& sample_shape, std::vector<int64_t>* lines) {
  if (lines) lines->clear();
  COHORT_CHECK(sample_shape.is_known() && sample_shape.Size() > 0)
      << "'" << path << "': invalid sample shape " << sample_shape;
  const int64_t width = sample_shape.Size();
  const std::string text = ReadText(path);
  std::vector<T> values;
  values.reserve(text.size() / 4);
  const char* p = text.data();
  const char* const end = p + text.size();
  int64_t line = 0, rows = 0;
  while (p < end) {
    ++line;
    const char* eol = std::find(p, end, '\n');
    const char* q = p;
    while (q < eol && IsSpace(*q)) ++q;
    const char* next_line = eol == end ? end : eol + 1;
    if (q == eol) {  // blank line
      p = next_line;
      continue;
    }
    int64_t field = 0;
    while (true) {
      while (q < eol && IsSpace(*q)) ++q;
      const char* comma = std::find(q, eol, ',');
      const char* value_end = comma;
      while (value_end > q && IsSpace(value_end[-1])) --value_end;
      T value = 0;
      if (*q == '+' && value_end - q > 1) ++q;  // from_chars takes no leading '+'
      auto [ptr, ec] = std::from_chars(q, value_end, value);
      if (ec != std::errc() || ptr != value_end) {
        COHORT_THROW() << "'" << path << "': line " << line << ", field " << field + 1 << ": '"
                       << std::string(q, value_end) << "' is not "
                       << (std::is_integral_v<T> ? "an integer" : "a number")
                       << (ec == std::errc::result_out_of_range ? " in range of " : " of ")
                       << DTypeName(kDTypeOf<T>);
      }
      ++field;
      if (field <= width) values.push_back(value);
      if (comma == eol) break;
      q = comma + 1;
    }
    COHORT_CHECK(field == width) << "'" << path << "': line " << line << " has " << field
                                 << " values, expected " << width << " (shape " << sample_shape
                                 << ")";
    ++rows;
    if (lines) lines->push_back(line);
    p = next_line;
  }
  COHORT_CHECK_GT(rows, 0) << "'" << path << "' holds no rows";
  std::vector<int64_t> dims = {rows};
  dims.insert(dims.end(), sample_shape.begin(), sample_shape.end());
  return NDArray::FromVector<T>(Shape(std::span<const int64_t>(dims)), values);
}

}  // namespace

NDArray ReadCsvFile(const std::string& path, const Shape& sample_shape, std::vector<int64_t>* lines,
                    DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return ReadCsvAs<float>(path, sample_shape, lines);
    case DType::kInt32: return ReadCsvAs<int32_t>(path, sample_shape, lines);
    case DType::kInt64: return ReadCsvAs<int64_t>(path, sample_shape, lines);
    default:
      COHORT_THROW() << "'" << path << "': CSV values are read as float32, int32 or int64, not "
                     << DTypeName(dtype);
  }
}

CSVIter::CSVIter(const CSVIterOptions& options) {
  NDArray data = ReadCsvFile(options.data_csv, options.data_shape, nullptr, options.dtype);
  const int64_t n = data.shape()[0];
  NDArray label;
  if (options.label_csv.empty()) {
    std::vector<int64_t> dims = {n};
    dims.insert(dims.end(), options.label_shape.begin(), options.label_shape.end());
    label = NDArray::Zeros(Shape(std::span<const int64_t>(dims)), options.dtype);
  } else {
    label = ReadCsvFile(options.label_csv, options.label_shape, &label_lines_, options.dtype);
    label_file_ = options.label_csv;
    label_unit_ = "line";  // as an editor numbers them, blank ones included
    COHORT_CHECK(label.shape()[0] == n) << "'" << options.label_csv << "' has " << label.shape()[0]
                                        << " rows but '" << options.data_csv << "' has " << n;
  }
  // A label of shape (1,) per sample is served as (batch,), as MXNet does.
  if (options.label_shape == Shape({1})) label = label.Reshape({n});
  batcher_ = std::make_unique<Batcher>(
      std::vector<BatchField>{{options.data_name, data, options.dtype, 1.0f}},
      std::vector<BatchField>{{options.label_name, label, options.dtype, 1.0f}}, options.batch);
}

}  // namespace cohort
