// libFuzzer target: cohort-train's YAML configuration, loaded, checked against the schema, and
// its data section checked (models are not built: a config may name a network of any size).
#include "apps/train_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = cohort::fuzz::AsFile(data, size, ".yaml");
  try {
    const YAML::Node root = cohort::LoadConfig(path, {});
    cohort::CheckDataOptions(cohort::DataSection(root), {});
  } catch (const cohort::Error&) {
  }
  return 0;
}
