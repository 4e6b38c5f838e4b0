// What the fuzz targets share: the input as a string, written to a scratch file for the readers
// that take a path.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "base/error.h"

namespace cohort::fuzz {

inline std::string AsString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A file of this process holding the input (rewritten for every input).
inline std::string AsFile(const uint8_t* data, size_t size, const char* suffix) {
  const std::string path = "/tmp/cohort_fuzz_" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) __builtin_trap();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);
  return path;
}

}  // namespace cohort::fuzz
