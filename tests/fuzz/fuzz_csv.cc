// libFuzzer target: CSV files as CSVIter reads them, samples of 4 values.
#include "io/csv_iter.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = cohort::fuzz::AsFile(data, size, ".csv");
  try {
    cohort::ReadCsvFile(path, cohort::Shape({4}));
  } catch (const cohort::Error&) {
  }
  return 0;
}
