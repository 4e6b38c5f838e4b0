// libFuzzer target: MXNet symbol JSON, loaded and its arguments and outputs listed.
#include "symbol/symbol.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const cohort::Symbol s = cohort::Symbol::FromJSON(cohort::fuzz::AsString(data, size));
    s.ListArguments();
    s.ListOutputs();
    s.ListAuxiliaryStates();
  } catch (const cohort::Error&) {
  }
  return 0;
}
