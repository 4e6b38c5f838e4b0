// IDX files through zlib's gz* functions, which read plain files unchanged.
#include "io/idx_reader.h"

#include <zlib.h>

#include <algorithm>
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
  // Streamed: the header is checked before any data is inflated, the data is read up to the size
  // the header declares (memory grows with what is read, never with what a corrupt header claims),
  // and anything after it is refused: a gzip file with 2 GiB of zeros after valid data was
  // inflated whole (4.4 GB resident) and trained on, /dev/zero as a label file read until memory
  // ran out.
  auto fail = [&](const std::string& what) -> DataError {
    return DataError("'" + path + "': " + what, __FILE__, __LINE__);
  };
  gzFile file = gzopen(path.c_str(), "rb");
  COHORT_CHECK(file != nullptr) << "cannot open '" << path << "': " << std::strerror(errno);
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(file, gzclose);
  gzbuffer(file, 1 << 17);
  auto read = [&](uint8_t* dst, size_t n) {  // bytes read, fewer only at the end of the stream
    size_t done = 0;
    while (done < n) {
      const int got = gzread(file, dst + done, static_cast<unsigned>(std::min<size_t>(n - done, 1 << 30)));
      if (got < 0) {
        int code = 0;
        throw fail(std::string("cannot read: ") + gzerror(file, &code));
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
    }
    return done;
  };
  const uint32_t expected_magic = 0x0800u | static_cast<uint32_t>(expected_ndim);
  std::vector<uint8_t> header(4 + 4 * static_cast<size_t>(expected_ndim));
  if (read(header.data(), 4) < 4) throw fail("too short for an IDX header");
  const uint32_t magic = BigEndian32(header.data());
  if (magic != expected_magic) {
    char text[96];
    std::snprintf(text, sizeof(text), "wrong IDX magic 0x%08x: expected 0x%08x (unsigned bytes, %d dimensions)",
                  magic, expected_magic, expected_ndim);
    throw fail(text);
  }
  if (read(header.data() + 4, header.size() - 4) < header.size() - 4) {
    throw fail("the file ends inside its header");
  }
  std::vector<int64_t> dims(expected_ndim);
  int64_t expected = 1;  // data bytes the header declares; overflow-checked (dims are < 2^32)
  bool overflow = false;
  for (int i = 0; i < expected_ndim; ++i) {
    dims[i] = BigEndian32(header.data() + 4 + 4 * i);
    overflow = overflow || __builtin_mul_overflow(expected, dims[i], &expected);
  }
  if (overflow || expected > (int64_t{1} << 46)) {
    std::string shape;
    for (int64_t d : dims) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    throw fail("the header declares " + shape + " bytes: more than 64 TiB");
  }
  const int64_t record_bytes = dims[0] > 0 ? expected / dims[0] : 1;
  std::vector<uint8_t> data;
  constexpr int64_t kChunk = int64_t{1} << 20;
  while (static_cast<int64_t>(data.size()) < expected) {
    const size_t old_size = data.size();
    const size_t want = static_cast<size_t>(std::min(kChunk, expected - static_cast<int64_t>(old_size)));
    data.resize(old_size + want);
    const size_t got = read(data.data() + old_size, want);
    data.resize(old_size + got);
    if (got < want) break;
  }
  int code = 0;
  const char* message = gzerror(file, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    throw fail(std::string("cannot read: ") + message + " (truncated gzip file?)");
  }
  const int64_t available = static_cast<int64_t>(data.size());
  if (available < expected) {
    throw fail("truncated: the header says " + std::to_string(dims[0]) +
               " records but the file ends inside record " + std::to_string(available / record_bytes) +
               " (" + std::to_string(available) + " of " + std::to_string(expected) + " data bytes)");
  }
  uint8_t extra = 0;
  if (read(&extra, 1) == 1) {
    throw fail("data after the " + std::to_string(dims[0]) +
               " records its header declares (is it the right file?)");
  }
  NDArray out = NDArray::Empty(Shape(std::span<const int64_t>(dims)), DType::kUint8);
  if (expected > 0) std::memcpy(out.raw_data(), data.data(), static_cast<size_t>(expected));
  return out;
}

}  // namespace cohort
