// RecordIO reading and writing (Note [RecordIO]).
#include "io/recordio.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace cohort {
namespace {

constexpr uint32_t kMaxLength = (1u << 29) - 1;

uint32_t Padded(uint32_t n) { return (n + 3u) & ~3u; }
uint32_t EncodeLRecord(uint32_t cflag, uint32_t length) { return cflag << 29 | length; }

// A whole record (0) or its first part (1) may begin a record; a middle (2) or last (3) may not.
bool BeginsRecord(uint32_t cflag) { return cflag == 0 || cflag == 1; }

// Little-endian loads and stores (the format's byte order, whatever the host's).
uint32_t Load32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}
uint64_t Load64(const char* p) { return Load32(p) | static_cast<uint64_t>(Load32(p + 4)) << 32; }
void Store32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
void Store64(uint64_t v, char* p) {
  Store32(static_cast<uint32_t>(v), p);
  Store32(static_cast<uint32_t>(v >> 32), p + 4);
}
float LoadFloat(const char* p) {
  const uint32_t bits = Load32(p);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
void StoreFloat(float f, char* p) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  Store32(bits, p);
}

}  // namespace

RecordIOReader::RecordIOReader(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) COHORT_THROW() << "'" << path << "': cannot open: " << std::strerror(errno);
  struct stat st;
  if (::fstat(::fileno(file_), &st) == 0 && S_ISREG(st.st_mode)) {
    size_ = static_cast<uint64_t>(st.st_size);
  }
}

RecordIOReader::~RecordIOReader() {
  if (file_) std::fclose(file_);
}

void RecordIOReader::Fail(uint64_t record_offset, const std::string& what) const {
  throw DataError("'" + path_ + "': record " + std::to_string(record_) + " at byte " +
                  std::to_string(record_offset) + ": " + what,
              __FILE__, __LINE__);
}

bool RecordIOReader::Read(void* dst, size_t n) {
  const size_t got = std::fread(dst, 1, n, file_);
  offset_ += got;
  return got == n;
}

bool RecordIOReader::Next(std::string* out) {
  const uint64_t start = offset_;
  out->clear();
  uint32_t expected = 0;  // 0: a whole record or a first part; 2: a middle or last part
  for (;;) {
    char header[8];
    const uint64_t part = offset_;
    const size_t got = std::fread(header, 1, 8, file_);
    offset_ += got;
    if (got == 0 && part == start) {
      if (std::ferror(file_)) Fail(start, std::string("read error: ") + std::strerror(errno));
      return false;  // the end of the file, between records
    }
    if (got != 8) {
      Fail(start, got == 0 ? "the file ends inside the record (a part is missing)"
                           : "the file ends inside a part header at byte " + std::to_string(part));
    }
    if (Load32(header) != kRecordIOMagic) {
      std::ostringstream s;
      s << "expected the RecordIO magic word 0xced7230a at byte " << part << ", found 0x"
        << std::hex << Load32(header) << " (not a RecordIO file, or a torn one)";
      Fail(start, s.str());
    }
    const uint32_t lrecord = Load32(header + 4);
    const uint32_t cflag = lrecord >> 29, length = lrecord & kMaxLength;
    const bool first = expected == 0;
    if (first != BeginsRecord(cflag)) {
      Fail(start, "part at byte " + std::to_string(part) + " has continuation flag " +
                      std::to_string(cflag) +
                      (first ? ", which cannot begin a record"
                             : ", but the record's last part is missing"));
    }
    // (checked before the allocation: a part header can claim 512 MB in a file of 20 bytes)
    if (offset_ + Padded(length) > size_) {
      Fail(start, "the file ends inside the record's data (a part of " + std::to_string(length) +
                      " bytes at byte " + std::to_string(part) + ")");
    }
    const size_t size = out->size();
    out->resize(size + Padded(length));
    if (!Read(out->data() + size, Padded(length))) {
      Fail(start, "the file ends inside the record's data (a part of " + std::to_string(length) +
                      " bytes at byte " + std::to_string(part) + ")");
    }
    out->resize(size + length);
    if (cflag == 0 || cflag == 3) break;
    char magic[4];
    Store32(kRecordIOMagic, magic);
    out->append(magic, 4);  // the word the writer cut the record at
    expected = 2;
  }
  ++record_;
  return true;
}

void RecordIOReader::Seek(uint64_t offset, int64_t record) {
  if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0) {
    COHORT_THROW() << "'" << path_ << "': cannot seek to byte " << offset << " (record " << record
                   << ")";
  }
  offset_ = offset;
  record_ = record;
}

bool RecordIOReader::StartsRecordAt(uint64_t offset) {
  char header[8];
  if (offset + 8 > size_ || std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0 ||
      std::fread(header, 1, 8, file_) != 8) {
    return false;
  }
  offset_ = offset + 8;
  return Load32(header) == kRecordIOMagic && BeginsRecord(Load32(header + 4) >> 29);
}

void RecordIOWriter::Put(const void* data, size_t n) {
  file_.Write(data, n);
  offset_ += n;
}

uint64_t RecordIOWriter::Write(std::string_view record) {
  COHORT_CHECK(record.size() <= kMaxLength)
      << "RecordIO: a record of " << record.size() << " bytes is over the format's limit of "
      << kMaxLength << " bytes";
  const uint64_t start = offset_;
  char magic[4];
  Store32(kRecordIOMagic, magic);
  const uint32_t length = static_cast<uint32_t>(record.size());
  auto put_part = [&](uint32_t cflag, uint32_t begin, uint32_t end) {
    char header[8];
    Store32(kRecordIOMagic, header);
    Store32(EncodeLRecord(cflag, end - begin), header + 4);
    Put(header, 8);
    Put(record.data() + begin, end - begin);
  };
  // Cut at each magic word on a 4-byte boundary, leaving it out (Note [RecordIO]).
  uint32_t begin = 0;
  for (uint32_t i = 0; i + 4 <= length; i += 4) {
    if (std::memcmp(record.data() + i, magic, 4) != 0) continue;
    put_part(begin == 0 ? 1 : 2, begin, i);
    begin = i + 4;
  }
  put_part(begin == 0 ? 0 : 3, begin, length);
  const char zeros[4] = {};
  Put(zeros, Padded(length) - length);  // the padding follows the whole record's length
  return start;
}

std::string_view UnpackImageRecord(std::string_view record, ImageRecordHeader* header) {
  COHORT_CHECK(record.size() >= ImageRecordHeader::kBytes)
      << "image record of " << record.size() << " bytes is shorter than its "
      << ImageRecordHeader::kBytes << "-byte header";
  const char* p = record.data();
  header->flag = Load32(p);
  header->label = LoadFloat(p + 4);
  header->id = Load64(p + 8);
  header->id2 = Load64(p + 16);
  header->labels.clear();
  size_t used = ImageRecordHeader::kBytes;
  if (header->flag > 0) {
    const uint64_t label_bytes = uint64_t{header->flag} * 4;
    COHORT_CHECK(record.size() - used >= label_bytes)
        << "image record header says " << header->flag << " labels (" << label_bytes
        << " bytes) but only " << record.size() - used << " bytes follow it";
    header->labels.resize(header->flag);
    for (uint32_t i = 0; i < header->flag; ++i) header->labels[i] = LoadFloat(p + used + 4 * i);
    used += label_bytes;
  }
  return record.substr(used);
}

std::string PackImageRecord(const ImageRecordHeader& header, std::string_view payload) {
  const bool many = !header.labels.empty();
  std::string out(ImageRecordHeader::kBytes + 4 * header.labels.size(), '\0');
  char* p = out.data();
  Store32(many ? static_cast<uint32_t>(header.labels.size()) : 0, p);
  StoreFloat(many ? 0.0f : header.label, p + 4);
  Store64(header.id, p + 8);
  Store64(header.id2, p + 16);
  for (size_t i = 0; i < header.labels.size(); ++i) {
    StoreFloat(header.labels[i], p + ImageRecordHeader::kBytes + 4 * i);
  }
  out.append(payload);
  return out;
}

std::vector<RecordIndexEntry> ReadRecordIndex(const std::string& path) {
  std::ifstream in(path);
  if (!in) COHORT_THROW() << "'" << path << "': cannot open the record index";
  std::vector<RecordIndexEntry> entries;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    std::istringstream fields(line);
    int64_t key = -1;
    long long offset = -1;
    std::string rest;
    if (!(fields >> key >> offset) || key < 0 || offset < 0 || (fields >> rest)) {
      throw DataError("'" + path + "' line " + std::to_string(number) +
                          ": expected 'key<TAB>offset' with non-negative integers, found '" +
                          line + "'",
                      __FILE__, __LINE__);
    }
    entries.push_back({key, static_cast<uint64_t>(offset)});
  }
  return entries;
}

std::string FormatRecordIndex(const std::vector<RecordIndexEntry>& entries) {
  std::string out;
  for (const RecordIndexEntry& e : entries) {
    out += std::to_string(e.key) + "\t" + std::to_string(e.offset) + "\n";
  }
  return out;
}

}  // namespace cohort
