// libFuzzer target: a name pattern as model.fixed_params gives it (Note [Name patterns]),
// compiled and matched against names of a network. Any input matches or throws cohort::Error at
// once: a crash, a stack overflow or a match past the 10 s timeout is a finding.
#include "base/name_pattern.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const cohort::NamePattern pattern(cohort::fuzz::AsString(data, size), "fixed_params");
    for (const char* name : {"fc1_weight", "conv12_bias", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
                             "layer0_attention_qkv_weight", ""}) {
      pattern.Matches(name);
    }
  } catch (const cohort::Error&) {
  }
  return 0;
}
