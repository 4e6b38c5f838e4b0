// Reading IDX files (the MNIST format), plain or gzip-compressed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace cohort {

// An IDX file of unsigned bytes (type 0x08) with `expected_ndim` dimensions, as a uint8 array of
// the shape its header gives. Plain and gzip files are both read (gzip is detected). Throws naming
// the file on a missing or unreadable file, a wrong magic number, or data shorter than the header
// says (naming the first incomplete record), or data after what the header declares (a DataError
// for what the file holds). Memory grows with the data actually read, never with what a corrupt
// header claims; the header is checked before anything else is inflated.
NDArray ReadIdxFile(const std::string& path, int expected_ndim);

// The whole content of a file, decompressed when it is gzip (also dictzip's .dz, which is
// gzip); plain files are read unchanged. Throws naming the file when it cannot be read.
std::vector<uint8_t> ReadDecompressed(const std::string& path);

}  // namespace cohort
