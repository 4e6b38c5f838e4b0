// libFuzzer target: optimizer .states bytes, loaded against a two-parameter network by each kind
// of optimizer and, when accepted, used for an update of every key. Any input gives an update or
// a cohort::Error; a crash (a state smaller than its weight crashed Update) is a finding.
#include "ndarray/params_io.h"
#include "optimizer/optimizer.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const std::map<int, Shape> shapes = {{0, Shape{2, 3}}, {1, Shape{3}}};
  ParamsFile file;
  try {
    file = ParseParams(fuzz::AsString(data, size), "fuzz.states");
  } catch (const Error&) {
    return 0;
  }
  for (const char* kind : {"sgd", "adam", "rmsprop"}) {
    auto optimizer = Optimizer::Create(kind, {.momentum = 0.9});
    try {
      optimizer->LoadStates(file, "fuzz.states", shapes);
    } catch (const Error&) {
      continue;
    }
    for (const auto& [key, shape] : shapes) {
      const NDArray weight = NDArray::Zeros(shape), grad = NDArray::Full(shape, 1.0);
      optimizer->Update(key, weight, grad);
    }
  }
  return 0;
}
