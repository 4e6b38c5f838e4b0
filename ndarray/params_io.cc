// Reading and writing MXNet .params files (Note [MXNet .params format]).
#include "ndarray/params_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include "base/atomic_file.h"

namespace cohort {
namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993FAC8;
constexpr uint32_t kV2Magic = 0xF993FAC9;
constexpr uint32_t kV3Magic = 0xF993FACA;
constexpr int32_t kDenseStorage = 0;
constexpr int32_t kUndefinedStorage = -1;

// ---- Writing -------------------------------------------------------------------------------

template <typename Sink>
void Put(Sink& sink, const void* data, size_t bytes) {
  sink.Write(data, bytes);
}

template <typename Sink, typename T>
void PutValue(Sink& sink, T value) {
  sink.Write(&value, sizeof(value));
}

bool UsesV3(const ParamsFile& file, ParamsFormat format) {
  if (format != ParamsFormat::kAuto) return format == ParamsFormat::kV3;
  for (const NDArray& a : file.arrays) {
    if (!a.is_none() && a.shape().ndim() == 0) return true;
  }
  return false;
}

template <typename Sink>
void WriteArray(Sink& sink, const NDArray& array, bool v3, size_t index) {
  PutValue(sink, v3 ? kV3Magic : kV2Magic);
  if (array.is_none()) {
    PutValue(sink, kUndefinedStorage);
    PutValue(sink, int32_t{v3 ? -1 : 0});
    return;
  }
  COHORT_CHECK(v3 || array.shape().ndim() > 0)
      << "array " << index << " is a scalar (shape ()): the V2 format cannot hold it; use V3";
  PutValue(sink, kDenseStorage);
  PutValue(sink, static_cast<int32_t>(array.shape().ndim()));
  Put(sink, array.shape().begin(), sizeof(int64_t) * array.shape().ndim());
  PutValue(sink, static_cast<int32_t>(DeviceType::kCPU));  // saved arrays load on the CPU
  PutValue(sink, int32_t{0});
  PutValue(sink, static_cast<int32_t>(array.dtype()));
  NDArray host = array.ctx().is_host() ? array : array.CopyTo(Context::CPU());
  Put(sink, host.raw_data(), host.nbytes());
}

template <typename Sink>
void WriteFile(Sink& sink, const ParamsFile& file, ParamsFormat format) {
  COHORT_CHECK(file.names.empty() || file.names.size() == file.arrays.size())
      << "params: " << file.names.size() << " names for " << file.arrays.size() << " arrays";
  const bool v3 = UsesV3(file, format);
  PutValue(sink, kListMagic);
  PutValue(sink, uint64_t{0});
  PutValue(sink, static_cast<uint64_t>(file.arrays.size()));
  for (size_t i = 0; i < file.arrays.size(); ++i) WriteArray(sink, file.arrays[i], v3, i);
  PutValue(sink, static_cast<uint64_t>(file.names.size()));
  for (const std::string& name : file.names) {
    PutValue(sink, static_cast<uint64_t>(name.size()));
    Put(sink, name.data(), name.size());
  }
}

struct StringSink {
  std::string bytes;
  void Write(const void* data, size_t n) { bytes.append(static_cast<const char*>(data), n); }
};

// ---- Reading -------------------------------------------------------------------------------

// Bytes to read from, with how many are left (every size is checked against it first).
class Source {
 public:
  virtual ~Source() = default;
  virtual size_t remaining() const = 0;
  virtual void ReadBytes(void* dst, size_t n) = 0;  // n <= remaining()
};

class MemorySource : public Source {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  size_t remaining() const override { return bytes_.size(); }
  void ReadBytes(void* dst, size_t n) override {
    if (n) std::memcpy(dst, bytes_.data(), n);
    bytes_.remove_prefix(n);
  }

 private:
  std::string_view bytes_;
};

class FileSource : public Source {
 public:
  explicit FileSource(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "rb");
    COHORT_CHECK(file_ != nullptr) << "cannot open '" << path << "': " << std::strerror(errno);
    const bool sized = std::fseek(file_, 0, SEEK_END) == 0;
    const long size = sized ? std::ftell(file_) : -1;
    if (size < 0 || std::fseek(file_, 0, SEEK_SET) != 0) {
      std::fclose(file_);
      COHORT_THROW() << "cannot read '" << path << "': not a regular file";
    }
    remaining_ = static_cast<size_t>(size);
  }
  ~FileSource() override { std::fclose(file_); }
  size_t remaining() const override { return remaining_; }
  void ReadBytes(void* dst, size_t n) override {
    COHORT_CHECK_EQ(std::fread(dst, 1, n, file_), n)
        << "cannot read '" << path_ << "': " << std::strerror(errno);
    remaining_ -= n;
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  size_t remaining_ = 0;
};

class Reader {
 public:
  Reader(Source& source, const std::string& name) : source_(source), name_(name) {}

  // Where an error happened: "'file': array 3: " (or no array part for list-level fields).
  std::string Where() const {
    std::ostringstream s;
    s << "'" << name_ << "': ";
    if (array_ >= 0) s << "array " << array_ << ": ";
    return s.str();
  }
  void set_array(int64_t index) { array_ = index; }
  size_t remaining() const { return source_.remaining(); }

  void Read(void* dst, size_t n, const char* field) {
    COHORT_CHECK(n <= source_.remaining())
        << Where() << "file ends inside the " << field << " (needs " << n << " bytes, "
        << source_.remaining() << " left)";
    source_.ReadBytes(dst, n);
  }
  template <typename T>
  T Get(const char* field) {
    T value;
    Read(&value, sizeof(value), field);
    return value;
  }

 private:
  Source& source_;
  std::string name_;
  int64_t array_ = -1;
};

// Reads `ndim` dims stored as Dim (int64, or uint32 in pre-V1 files).
template <typename Dim>
Shape ReadDims(Reader& in, int64_t ndim) {
  COHORT_CHECK(ndim >= 0 && ndim <= Shape::kMaxNdim)
      << in.Where() << "ndim " << ndim << " is out of range [0, " << Shape::kMaxNdim << "]";
  Dim dims[Shape::kMaxNdim];
  in.Read(dims, sizeof(Dim) * ndim, "shape");
  int64_t wide[Shape::kMaxNdim];
  for (int64_t i = 0; i < ndim; ++i) wide[i] = static_cast<int64_t>(dims[i]);
  return Shape(std::span<const int64_t>(wide, ndim));
}

// Context, type flag and elements of an array of known shape.
NDArray ReadBody(Reader& in, const Shape& shape) {
  const auto dev_type = in.Get<int32_t>("context");
  const auto dev_id = in.Get<int32_t>("context");
  COHORT_CHECK(dev_type == 1 || dev_type == 2 || dev_type == 3 || dev_type == 5)
      << in.Where() << "unknown device type " << dev_type << " (id " << dev_id
      << "): expected 1 (cpu), 2 (gpu), 3 (cpu_pinned) or 5 (cpu_shared)";
  const auto flag = in.Get<int32_t>("type flag");
  const std::optional<DType> dtype = DTypeFromFlag(flag);
  COHORT_CHECK(dtype.has_value()) << in.Where() << "unknown type flag " << flag;
  for (int64_t d : shape.dims()) {
    COHORT_CHECK(d >= 0) << in.Where() << "negative dimension in shape " << shape;
  }
  // Check the element count against the bytes left before allocating anything.
  uint64_t bytes = DTypeSize(*dtype);
  for (int64_t d : shape.dims()) {
    COHORT_CHECK(!__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
        << in.Where() << "shape " << shape << " is too large";
  }
  COHORT_CHECK(bytes <= in.remaining())
      << in.Where() << "file ends inside the data of a " << DTypeName(*dtype) << " array of shape "
      << shape << " (needs " << bytes << " bytes, " << in.remaining() << " left)";
  NDArray array = NDArray::Empty(shape, *dtype, Context::CPU());
  in.Read(array.raw_data(), bytes, "data");
  return array;
}

NDArray ReadArray(Reader& in, bool* numpy_shape) {
  const auto magic = in.Get<uint32_t>("array magic");
  *numpy_shape = magic == kV3Magic;
  if (magic != kV2Magic && magic != kV3Magic) {
    Shape shape;
    if (magic == kV1Magic) {
      shape = ReadDims<int64_t>(in, in.Get<int32_t>("ndim"));
    } else {
      COHORT_CHECK(magic <= static_cast<uint32_t>(Shape::kMaxNdim))
          << in.Where() << "unknown array magic 0x" << std::hex << magic
          << " (expected 0xf993fac9 (V2), 0xf993faca (V3), 0xf993fac8 (V1) or a legacy ndim)";
      shape = ReadDims<uint32_t>(in, magic);  // pre-V1: the magic is the ndim
    }
    if (shape.ndim() == 0) return NDArray();
    return ReadBody(in, shape);
  }
  const auto stype = in.Get<int32_t>("storage type");
  COHORT_CHECK(stype == kDenseStorage || stype == kUndefinedStorage)
      << in.Where() << "storage type " << stype
      << (stype == 1   ? " (row_sparse)"
          : stype == 2 ? " (csr)"
                       : "")
      << " is not supported: only dense arrays";
  const auto ndim = in.Get<int32_t>("ndim");
  const bool v3 = magic == kV3Magic;
  if (ndim == -1 || (!v3 && ndim == 0)) return NDArray();  // none
  Shape shape = ReadDims<int64_t>(in, ndim);
  if (v3 && !shape.is_known()) return NDArray();  // numpy semantics: unknown shape is none
  return ReadBody(in, shape);
}

ParamsFile ReadFile(Reader& in) {
  const auto magic = in.Get<uint64_t>("list header");
  COHORT_CHECK(magic == kListMagic) << in.Where() << "not an MXNet NDArray file (list magic 0x"
                                    << std::hex << magic << ", expected 0x112)";
  in.Get<uint64_t>("reserved field");
  const auto count = in.Get<uint64_t>("array count");
  COHORT_CHECK(count <= in.remaining() / 4)  // every array takes at least 4 bytes
      << in.Where() << "file ends inside the arrays: " << count << " arrays need at least "
      << "4 bytes each, " << in.remaining() << " bytes left";
  ParamsFile file;
  file.arrays.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    in.set_array(static_cast<int64_t>(i));
    bool numpy_shape = false;
    file.arrays.push_back(ReadArray(in, &numpy_shape));
    file.numpy_shape.push_back(numpy_shape);
  }
  in.set_array(-1);
  const auto name_count = in.Get<uint64_t>("name count");
  COHORT_CHECK(name_count == 0 || name_count == count)
      << in.Where() << name_count << " names for " << count << " arrays";
  file.names.reserve(name_count);
  for (uint64_t i = 0; i < name_count; ++i) {
    in.set_array(static_cast<int64_t>(i));
    const auto length = in.Get<uint64_t>("name length");
    COHORT_CHECK(length <= in.remaining())  // checked before the string is allocated
        << in.Where() << "file ends inside the name (needs " << length << " bytes, "
        << in.remaining() << " left)";
    std::string name(length, '\0');
    in.Read(name.data(), length, "name");
    file.names.push_back(std::move(name));
  }
  in.set_array(-1);
  COHORT_CHECK_EQ(in.remaining(), size_t{0}) << in.Where() << "unexpected bytes after the names";
  return file;
}

}  // namespace

std::string SerializeParams(const ParamsFile& file, ParamsFormat format) {
  StringSink sink;
  WriteFile(sink, file, format);
  return std::move(sink.bytes);
}

std::string SerializeArray(const NDArray& array, ParamsFormat format) {
  StringSink sink;
  const bool v3 = format == ParamsFormat::kV3 ||
                  (format == ParamsFormat::kAuto && !array.is_none() && array.shape().ndim() == 0);
  WriteArray(sink, array, v3, 0);
  return std::move(sink.bytes);
}

NDArray ParseArray(std::string_view bytes, const std::string& source, bool* numpy_shape) {
  MemorySource memory(bytes);
  Reader in(memory, source);
  bool v3 = false;
  NDArray array = ReadArray(in, &v3);
  COHORT_CHECK_EQ(in.remaining(), size_t{0}) << in.Where() << "unexpected bytes after the array";
  if (numpy_shape) *numpy_shape = v3;
  return array;
}

void SaveParamsFile(const std::string& path, const ParamsFile& file, ParamsFormat format) {
  AtomicFileWriter writer(path);
  WriteFile(writer, file, format);
  writer.Commit();
}

void SaveParams(const std::string& path, const std::map<std::string, NDArray>& arrays,
                ParamsFormat format) {
  ParamsFile file;
  for (const auto& [name, array] : arrays) {
    file.names.push_back(name);
    file.arrays.push_back(array);
  }
  SaveParamsFile(path, file, format);
}

ParamsFile ParseParams(std::string_view bytes, const std::string& source) {
  MemorySource memory(bytes);
  Reader in(memory, source);
  return ReadFile(in);
}

ParamsFile LoadParamsFile(const std::string& path) {
  FileSource file(path);
  Reader in(file, path);
  return ReadFile(in);
}

std::map<std::string, NDArray> LoadParams(const std::string& path) {
  ParamsFile file = LoadParamsFile(path);
  COHORT_CHECK(!file.names.empty() || file.arrays.empty())
      << "'" << path << "' holds an unnamed list of " << file.arrays.size()
      << " arrays; expected named arrays (arg:..., aux:...)";
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < file.names.size(); ++i) {
    COHORT_CHECK(out.emplace(file.names[i], file.arrays[i]).second)
        << "'" << path << "': array " << i << ": name '" << file.names[i] << "' appears twice";
  }
  return out;
}

}  // namespace cohort
