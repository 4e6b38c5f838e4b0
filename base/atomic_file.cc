// AtomicFileWriter on POSIX rename.
#include "base/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace cohort {

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), temp_path_(path_ + ".tmp." + std::to_string(::getpid())) {
  file_ = std::fopen(temp_path_.c_str(), "wb");
  COHORT_CHECK(file_ != nullptr) << "cannot write '" << path_ << "': cannot create '" << temp_path_
                                 << "': " << std::strerror(errno);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(temp_path_.c_str());
  }
}

void AtomicFileWriter::Write(const void* data, size_t bytes) {
  COHORT_CHECK(file_ != nullptr) << "write to '" << path_ << "' after Commit";
  if (bytes == 0) return;
  COHORT_CHECK_EQ(std::fwrite(data, 1, bytes, file_), bytes)
      << "cannot write '" << temp_path_ << "': " << std::strerror(errno);
}

void AtomicFileWriter::Commit() {
  COHORT_CHECK(file_ != nullptr) << "'" << path_ << "' committed twice";
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const int saved_errno = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    std::remove(temp_path_.c_str());
    COHORT_THROW() << "cannot write '" << path_ << "': " << std::strerror(saved_errno);
  }
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(temp_path_.c_str());
    COHORT_THROW() << "cannot replace '" << path_ << "': " << std::strerror(rename_errno);
  }
}

}  // namespace cohort
