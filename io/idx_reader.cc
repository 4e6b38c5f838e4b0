// IDX files through zlib's gz* functions, which read plain files unchanged.
#include "io/idx_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace cohort {
namespace {

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

std::vector<uint8_t> ReadDecompressed(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  COHORT_CHECK(file != nullptr) << "cannot open '" << path << "': " << std::strerror(errno);
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(file, gzclose);
  gzbuffer(file, 1 << 17);
  std::vector<uint8_t> bytes;
  constexpr size_t kChunk = size_t{1} << 20;
  while (true) {
    const size_t old_size = bytes.size();
    bytes.resize(old_size + kChunk);
    const int got = gzread(file, bytes.data() + old_size, kChunk);
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file, &code);
      COHORT_THROW() << "cannot read '" << path << "': " << message;
    }
    bytes.resize(old_size + got);
    if (got < static_cast<int>(kChunk)) break;
  }
  int code = 0;
  const char* message = gzerror(file, &code);
  COHORT_CHECK(code == Z_OK || code == Z_STREAM_END)
      << "cannot read '" << path << "': " << message << " (truncated gzip file?)";
  return bytes;
}

NDArray ReadIdxFile(const std::string& path, int expected_ndim) {
  std::vector<uint8_t> bytes = ReadDecompressed(path);
  const uint32_t expected_magic = 0x0800u | static_cast<uint32_t>(expected_ndim);
  COHORT_CHECK_GE(bytes.size(), size_t{4}) << "'" << path << "': too short for an IDX header";
  const uint32_t magic = BigEndian32(bytes.data());
  if (magic != expected_magic) {
    char text[64];
    std::snprintf(text, sizeof(text), "wrong IDX magic 0x%08x: expected 0x%08x", magic,
                  expected_magic);
    COHORT_THROW() << "'" << path << "': " << text << " (unsigned bytes, " << expected_ndim
                   << " dimensions)";
  }
  const size_t header = 4 + 4 * static_cast<size_t>(expected_ndim);
  COHORT_CHECK_GE(bytes.size(), header) << "'" << path << "': the file ends inside its header";
  std::vector<int64_t> dims(expected_ndim);
  int64_t record_bytes = 1;
  for (int i = 0; i < expected_ndim; ++i) {
    dims[i] = BigEndian32(bytes.data() + 4 + 4 * i);
    if (i > 0) record_bytes *= dims[i];
  }
  const int64_t available = static_cast<int64_t>(bytes.size() - header);
  const int64_t expected = dims[0] * record_bytes;
  if (available < expected) {
    COHORT_THROW() << "'" << path << "': truncated: the header says " << dims[0]
                   << " records but the file ends inside record " << available / record_bytes
                   << " (" << available << " of " << expected << " data bytes)";
  }
  NDArray out = NDArray::Empty(Shape(std::span<const int64_t>(dims)), DType::kUint8);
  std::memcpy(out.raw_data(), bytes.data() + header, static_cast<size_t>(expected));
  return out;
}

}  // namespace cohort
