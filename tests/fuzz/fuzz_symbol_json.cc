// libFuzzer target: MXNet symbol JSON, loaded and its arguments and outputs listed, and each
// variable's __init__ attribute (MXNet's Initializer.dumps() text) read as the trainer reads it.
#include "optimizer/initializer.h"
#include "symbol/symbol.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const cohort::Symbol s = cohort::Symbol::FromJSON(cohort::fuzz::AsString(data, size));
    s.ListArguments();
    s.ListOutputs();
    s.ListAuxiliaryStates();
    for (const auto& [name, attrs] : s.VariableAttrs()) {
      const auto init = attrs.find("__init__");
      if (init == attrs.end()) continue;
      try {
        cohort::Initializer::FromInitAttr(name, init->second);
      } catch (const cohort::Error&) {
      }
    }
  } catch (const cohort::Error&) {
  }
  return 0;
}
