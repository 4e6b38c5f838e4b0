// MXNet's RecordIO files (.rec, with an .idx index) and the image record header that
// im2rec and ImageRecordIter put in each record (Note [RecordIO]).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "base/atomic_file.h"

namespace cohort {

// Note [RecordIO]
// dmlc-core's format, as MXNet 1.x writes it: each record is one or more parts, a part being
//   uint32 magic 0xced7230a | uint32 lrecord = cflag << 29 | length | length bytes | zeros to
//   the next multiple of 4
// (little-endian). cflag 0 is a whole record; a record whose bytes hold the magic word at an
// offset that is a multiple of 4 is cut there, the word left out: parts with cflag 1 (first),
// 2 (middle) and 3 (last), and a reader puts the word back between them. So the magic word
// starts a part header wherever it appears at a 4-byte boundary of the file. An .idx file has
// one line per record, "key\tbyte offset of its first part\n".
constexpr uint32_t kRecordIOMagic = 0xced7230a;

// Reads records one after another, or from an offset taken from the index.
class RecordIOReader {
 public:
  // Throws naming the file when it cannot be opened.
  explicit RecordIOReader(const std::string& path);
  ~RecordIOReader();
  RecordIOReader(const RecordIOReader&) = delete;
  RecordIOReader& operator=(const RecordIOReader&) = delete;

  // The next record in *out (its parts joined); false at the end of the file. A torn record
  // (the file ends inside it), a wrong magic word, a length over 2^29 or a cflag out of order
  // throws naming the file, the record's number and its byte offset. *out's memory is reused.
  bool Next(std::string* out);
  // Continues at `offset` (a record's first part, from the index); `record` is its number,
  // for messages.
  void Seek(uint64_t offset, int64_t record);
  // Whether a record's first part begins at `offset` (its magic word and a flag that can begin a
  // record): checks an index against its file. Leaves the reader to be Seek'ed before Next.
  bool StartsRecordAt(uint64_t offset);
  // The byte offset of the next record.
  uint64_t Tell() const { return offset_; }
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // of a regular file; UINT64_MAX for a pipe

 private:
  [[noreturn]] void Fail(uint64_t record_offset, const std::string& what) const;
  // Reads n bytes; false if the file ends first.
  bool Read(void* dst, size_t n);

  std::string path_;
  std::FILE* file_ = nullptr;
  uint64_t offset_ = 0;
  uint64_t size_ = UINT64_MAX;  // of a regular file; unknown (max) for a pipe
  int64_t record_ = 0;
};

// Writes records as MXNet's writer does (the same bytes), through an AtomicFileWriter: the file
// appears under its name, whole, only when Close succeeds.
class RecordIOWriter {
 public:
  explicit RecordIOWriter(const std::string& path) : file_(path) {}

  // Appends one record; returns the byte offset of its first part (for the index). Throws for a
  // record of 2^29 bytes or more, or when the file cannot be written.
  uint64_t Write(std::string_view record);
  // Flushes and renames the file into place; throws naming it on an I/O error.
  void Close() { file_.Commit(); }

 private:
  void Put(const void* data, size_t n);

  AtomicFileWriter file_;
  uint64_t offset_ = 0;
};

// The header im2rec writes at the start of each record (MXNet's IRHeader, struct "IfQQ": 24
// bytes). flag > 0 means `flag` float32 labels follow the header (label then unused); 0 means
// the one label in `label`.
struct ImageRecordHeader {
  uint32_t flag = 0;
  float label = 0;
  uint64_t id = 0;
  uint64_t id2 = 0;
  std::vector<float> labels;  // the flag labels after the header, when flag > 0

  static constexpr size_t kBytes = 24;
};

// Splits a record into its header and the bytes after it (the encoded image), which point into
// `record`. Throws when the record is shorter than its header and labels say.
std::string_view UnpackImageRecord(std::string_view record, ImageRecordHeader* header);
// A record as MXNet's recordio.pack makes it: the header (flag = labels.size() when labels are
// given, label then 0), the labels, the payload.
std::string PackImageRecord(const ImageRecordHeader& header, std::string_view payload);

// One line of an .idx file.
struct RecordIndexEntry {
  int64_t key = 0;
  uint64_t offset = 0;
};
// The entries of an .idx file in file order. Throws naming the file and the line when a line is
// not "key<tab or space>offset" with non-negative integers.
std::vector<RecordIndexEntry> ReadRecordIndex(const std::string& path);
// The .idx text for these entries ("key\toffset\n" each, as MXNet writes).
std::string FormatRecordIndex(const std::vector<RecordIndexEntry>& entries);

}  // namespace cohort
