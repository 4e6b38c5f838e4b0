// libFuzzer target: optimizer .states bytes, loaded against a three-parameter network (one float16
// weight) by each kind of optimizer and, when accepted, used for an update of every key. Any input
// gives an update or a cohort::Error; a crash (a state smaller than its weight crashed Update) is a
// finding.
#include "ndarray/params_io.h"
#include "optimizer/optimizer.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  // Key 2 is a float16 weight, whose states end with its float32 master copy (multi_precision).
  const std::map<int, StateTarget> shapes = {
      {0, Shape{2, 3}}, {1, Shape{3}}, {2, StateTarget(Shape{4}, DType::kFloat16)}};
  ParamsFile file;
  try {
    file = ParseParams(fuzz::AsString(data, size), "fuzz.states");
  } catch (const Error&) {
    return 0;
  }
  for (const char* kind : {"sgd", "adam", "rmsprop"}) {
    auto optimizer = Optimizer::Create(kind, {.momentum = 0.9, .multi_precision = true});
    try {
      optimizer->LoadStates(file, "fuzz.states", shapes);
    } catch (const Error&) {
      continue;
    }
    for (const auto& [key, target] : shapes) {
      const NDArray weight = NDArray::Zeros(target.shape, target.dtype),
                    grad = NDArray::Full(target.shape, 1.0);
      optimizer->Update(key, weight, grad);
    }
  }
  return 0;
}
