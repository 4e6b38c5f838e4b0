// What the fuzz targets share: the input as a string, written to a scratch file for the readers
// that take a path.
//
// Note [Fuzzing]
// Every reader of bytes a user hands Cohort has a libFuzzer target here (fuzz_<target>.cc): the
// .params reader, symbol JSON, IDX, CSV, RecordIO and image record headers, JPEG/PNG decoding,
// the YAML config, optimizer .states files and name patterns. A target accepts any input: it
// parses and throws cohort::Error at most; a crash, a sanitizer report, a leak, a timeout (10 s)
// or an allocation over 2 GB is a finding.
// scripts/fuzz.sh TARGET SECONDS builds them with clang (COHORT_FUZZ=ON: -fsanitize=fuzzer,
// address, undefined), runs one from tests/fuzz/corpus/TARGET and merges the inputs that reached
// new code back into that corpus; the normal build (gcc) links each target with replay_main.cc
// and CTest replays its corpus (fuzz_corpus_TARGET), so every interesting input found stays a
// regression test.
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
