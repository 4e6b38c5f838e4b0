// AtomicFileWriter: writes a file so that readers see either the old file or the whole new one.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace cohort {

// Writes to "<path>.tmp.<pid>" beside the target; Commit() flushes it to disk and renames it over
// `path` in one step, so a crash never leaves a torn file. Destroying the writer without Commit()
// removes the temporary file and leaves `path` as it was.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void Write(const void* data, size_t bytes);
  void Commit();

 private:
  std::string path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
};

}  // namespace cohort
