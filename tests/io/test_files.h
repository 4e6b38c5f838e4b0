// Helpers for io tests: IDX/CSV files written on the spot (and test_util.h's scratch directory).
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace cohort::testing {

inline void PutBigEndian(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

// IDX bytes of unsigned-byte records: magic 0x0000080N, big-endian dims, then the data.
inline std::string IdxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string out;
  PutBigEndian(out, 0x0800u | static_cast<uint32_t>(dims.size()));
  for (uint32_t d : dims) PutBigEndian(out, d);
  out.append(data.begin(), data.end());
  return out;
}

inline void WriteFile(const std::string& path, const std::string& bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary) << bytes;
  }
}

}  // namespace cohort::testing
