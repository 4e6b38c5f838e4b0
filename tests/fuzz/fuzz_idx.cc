// libFuzzer target: IDX files (plain or gzip) of 1 and 3 dimensions, as MNISTIter reads them.
#include "io/idx_reader.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = cohort::fuzz::AsFile(data, size, ".idx");
  for (int ndim : {1, 3}) {
    try {
      cohort::ReadIdxFile(path, ndim);
    } catch (const cohort::Error&) {
    }
  }
  return 0;
}
