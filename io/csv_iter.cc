// CSVIter and its parser.
#include "io/csv_iter.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "io/data_kinds.h"

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
      throw Error("'" + path + "': CSV values are read as float32, int32 or int64, not " +
                      std::string(DTypeName(dtype)),
                  __FILE__, __LINE__);
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

// data.kind: csv (Note [Data kinds]): data and label files of comma-separated numbers.
namespace {
struct CsvKeys {
  std::string train_data_csv, train_label_csv, val_data_csv, val_label_csv;
  std::vector<int64_t> data_shape;
  std::vector<int64_t> label_shape = {1};

  static const OptionTable<CsvKeys>& Table() {
    using K = CsvKeys;
    static const OptionTable<K> table = [] {
      OptionTable<K> t("data");
      t.Path("train_data_csv", &K::train_data_csv, "a row of values a sample")
          .Path("train_label_csv", &K::train_label_csv, "a row of labels a sample (none: zeros)")
          .Path("val_data_csv", &K::val_data_csv, "validation rows (none: no validation)")
          .Path("val_label_csv", &K::val_label_csv, "validation labels")
          .Field("data_shape", &K::data_shape, "the shape of a sample (required)")
          .Field("label_shape", &K::label_shape, "the shape of a sample's label");
      return t;
    }();
    return table;
  }
};
}  // namespace

DataKind CsvDataKind() {
  auto check = [](const Options& data, const DataContext&) {
    CsvKeys k;
    CsvKeys::Table().ReadKnown(data, &k);
    RequireDataWith(data, "val_label_csv", "val_data_csv");
    RequireDataFile(data, "train_data_csv");
    if (!data.Has("data_shape")) FailData("key 'data.data_shape' is required for csv data");
    CheckDataShape(data, "data_shape", k.data_shape);
    if (!k.label_shape.empty()) CheckDataShape(data, "label_shape", k.label_shape);
  };
  auto make = [](const Options& data, const DataSetup& setup) {
    CsvKeys k;
    CsvKeys::Table().ReadKnown(data, &k);
    auto iter = [&](const std::string& data_csv, const std::string& label_csv,
                    const BatchOptions& batch, int64_t* count) {
      CSVIterOptions o;
      o.data_csv = data_csv;
      o.label_csv = label_csv;
      o.data_shape = ShapeOf(k.data_shape);
      o.label_shape = ShapeOf(k.label_shape);
      o.batch = batch;
      auto it = std::make_unique<CSVIter>(o);
      if (count) *count = it->num_samples();
      return setup.Wrap(std::move(it));
    };
    DataIters out;
    out.train = iter(k.train_data_csv, k.train_label_csv, setup.train, &out.train_samples);
    if (!k.val_data_csv.empty()) {
      out.val = iter(k.val_data_csv, k.val_label_csv, setup.val, nullptr);
    }
    return out;
  };
  return {"csv", CsvKeys::Table().Infos({}), check, make};
}

}  // namespace cohort
