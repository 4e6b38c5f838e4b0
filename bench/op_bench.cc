// Forward and backward time of one operator on one CPU device (medians of --iters), to measure
// a kernel before and after a change. One JSON object per line:
//   {"bench":"op","op":"softmax","forward_ms":...,"backward_ms":...}
// Usage: op_bench --op NAME [--attr KEY=VALUE]... --shape INPUT=D0,D1,... [--iters N]
//                 [--dtype float32|float16|bfloat16] [--type INPUT=DTYPE]... [--no-grad INPUT]...
//   --type gives one input another dtype than --dtype's; --no-grad takes no gradient of an input
//   (as a fused graph binds _masked_softmax's mask).
//   e.g. op_bench --op softmax --attr axis=-1 --shape data=64,128,128
// Inputs are uniform in [-1, 1); COHORT_NUM_THREADS sets the threads.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "executor/executor.h"

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cohort;
  std::string op;
  op::Attrs attrs;
  std::vector<std::pair<std::string, Shape>> shapes;
  int iters = 20;
  DType dtype = DType::kFloat32;  // of the inputs (and by inference, of what they feed)
  std::map<std::string, DType> types;
  std::map<std::string, GradReq> reqs;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    const size_t eq = value.find('=');
    if (key == "--op") {
      op = value;
    } else if (key == "--dtype") {
      dtype = ParseDType(value);
    } else if (key == "--type" && eq != std::string::npos) {
      types[value.substr(0, eq)] = ParseDType(value.substr(eq + 1));
    } else if (key == "--no-grad") {
      reqs[value] = GradReq::kNull;
    } else if (key == "--iters") {
      iters = std::atoi(value.c_str());
    } else if (key == "--attr" && eq != std::string::npos) {
      attrs[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (key == "--shape" && eq != std::string::npos) {
      std::vector<int64_t> dims;
      std::stringstream parts(value.substr(eq + 1));
      for (std::string d; std::getline(parts, d, ',');) dims.push_back(std::stoll(d));
      shapes.emplace_back(value.substr(0, eq), Shape(std::span<const int64_t>(dims)));
    } else {
      std::fprintf(stderr, "op_bench: unknown option %s\n", key.c_str());
      return 2;
    }
  }
  if (op.empty() || shapes.empty() || iters < 1) {
    std::fprintf(stderr,
                 "usage: op_bench --op NAME [--attr K=V]... --shape IN=D0,D1... [--iters N]\n");
    return 2;
  }
  std::map<std::string, Symbol> inputs;
  for (const auto& [name, shape] : shapes) inputs.emplace(name, Symbol::Variable(name));
  const Symbol net = Symbol::Create(op, inputs, attrs, "op");
  std::map<std::string, Shape> bind_shapes(shapes.begin(), shapes.end());
  for (const auto& [name, shape] : shapes) types.emplace(name, dtype);  // --type's kept
  auto exec =
      Executor::SimpleBind(net, Context::CPU(), bind_shapes, GradReq::kWrite, reqs, nullptr, types);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const auto& [name, a] : exec->arg_dict()) {
    std::vector<float> v(a.size());
    for (float& e : v) e = u(rng);
    NDArray::FromVector<float>(a.shape(), v).AsType(a.dtype()).CopyTo(a);
  }
  std::vector<NDArray> heads;
  for (const NDArray& out : exec->outputs()) {
    heads.push_back(NDArray::Full(out.shape(), 0.5).AsType(out.dtype()));
  }
  std::vector<double> forward, backward;
  for (int i = 0; i < iters + 2; ++i) {
    auto start = Clock::now();
    exec->Forward(true);
    const double f = Ms(start);
    start = Clock::now();
    exec->Backward(heads);
    const double b = Ms(start);
    if (i >= 2) forward.push_back(f), backward.push_back(b);
  }
  std::printf(
      "{\"bench\":\"op\",\"op\":\"%s\",\"dtype\":\"%s\",\"forward_ms\":%.4f,"
      "\"backward_ms\":%.4f}\n",
      op.c_str(), std::string(DTypeName(dtype)).c_str(), Median(forward), Median(backward));
}
