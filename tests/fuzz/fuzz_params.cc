// libFuzzer target: .params bytes (MXNet's NDArray list format). Any input gives arrays or a
// cohort::Error; a crash, a leak or an allocation beyond the input's size is a finding.
#include "ndarray/params_io.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    cohort::ParseParams(cohort::fuzz::AsString(data, size), "fuzz");
  } catch (const cohort::Error&) {
  }
  return 0;
}
