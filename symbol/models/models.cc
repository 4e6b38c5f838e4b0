// The model zoo.
#include "symbol/models/models.h"

#include "symbol/ops.h"

namespace cohort::models {

Symbol Mlp(int64_t num_classes) {
  Symbol x = sym::Variable("data");
  x = sym::Flatten(x, "flatten");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 128}, "fc1"), "relu", "relu1");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 64}, "fc2"), "relu", "relu2");
  x = sym::FullyConnected(x, {.num_hidden = num_classes}, "fc3");
  return sym::SoftmaxOutput(x, "softmax");
}

Symbol LeNet(int64_t num_classes) {
  Symbol x = sym::Variable("data");
  x = sym::Convolution(x, {.kernel = {5, 5}, .num_filter = 20}, "conv1");
  x = sym::Activation(x, "tanh", "tanh1");
  x = sym::Pooling(x, {.kernel = {2, 2}, .pool_type = "max", .stride = {2, 2}}, "pool1");
  x = sym::Convolution(x, {.kernel = {5, 5}, .num_filter = 50}, "conv2");
  x = sym::Activation(x, "tanh", "tanh2");
  x = sym::Pooling(x, {.kernel = {2, 2}, .pool_type = "max", .stride = {2, 2}}, "pool2");
  x = sym::Flatten(x, "flatten");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 500}, "fc1"), "tanh", "tanh3");
  x = sym::FullyConnected(x, {.num_hidden = num_classes}, "fc2");
  return sym::SoftmaxOutput(x, "softmax");
}

namespace {

constexpr sym::BatchNormParam kResNetBatchNorm = {.eps = 2e-5, .momentum = 0.9, .fix_gamma = false};

// A pre-activation unit: BN-relu-conv3x3-BN-relu-conv3x3, plus the input or, where the shape
// changes, a 1x1 convolution of the first activation.
Symbol ResidualUnit(const Symbol& data, int64_t filters, int64_t stride, bool dim_match,
                    const std::string& name) {
  const Symbol act1 = sym::Activation(sym::BatchNorm(data, kResNetBatchNorm, name + "_bn1"), "relu",
                                      name + "_relu1");
  Symbol x = sym::Convolution(act1,
                              {.kernel = {3, 3},
                               .num_filter = filters,
                               .stride = {stride, stride},
                               .pad = {1, 1},
                               .no_bias = true},
                              name + "_conv1");
  x = sym::Activation(sym::BatchNorm(x, kResNetBatchNorm, name + "_bn2"), "relu", name + "_relu2");
  x = sym::Convolution(x, {.kernel = {3, 3}, .num_filter = filters, .pad = {1, 1}, .no_bias = true},
                       name + "_conv2");
  const Symbol shortcut = dim_match ? data
                                    : sym::Convolution(act1,
                                                       {.kernel = {1, 1},
                                                        .num_filter = filters,
                                                        .stride = {stride, stride},
                                                        .no_bias = true},
                                                       name + "_sc");
  return x + shortcut;
}

}  // namespace

Symbol ResNet(int depth, int64_t num_classes) {
  COHORT_CHECK(depth >= 8 && (depth - 2) % 6 == 0)
      << "ResNet for CIFAR: depth " << depth << " must be 6n + 2 (20, 32, 44, 56, 110, ...)";
  const int units = (depth - 2) / 6;
  const int64_t filters[] = {16, 16, 32, 64};
  Symbol x = sym::BatchNorm(sym::Variable("data"),
                            {.eps = 2e-5, .momentum = 0.9, .fix_gamma = true}, "bn_data");
  x = sym::Convolution(
      x, {.kernel = {3, 3}, .num_filter = filters[0], .pad = {1, 1}, .no_bias = true}, "conv0");
  for (int stage = 1; stage <= 3; ++stage) {
    const std::string prefix = "stage" + std::to_string(stage) + "_unit";
    x = ResidualUnit(x, filters[stage], stage == 1 ? 1 : 2, false, prefix + "1");
    for (int u = 2; u <= units; ++u) {
      x = ResidualUnit(x, filters[stage], 1, true, prefix + std::to_string(u));
    }
  }
  x = sym::Activation(sym::BatchNorm(x, kResNetBatchNorm, "bn1"), "relu", "relu1");
  x = sym::Pooling(x, {.kernel = {7, 7}, .pool_type = "avg", .global_pool = true}, "pool1");
  x = sym::FullyConnected(sym::Flatten(x), {.num_hidden = num_classes}, "fc1");
  return sym::SoftmaxOutput(x, "softmax");
}

Symbol ByName(const std::string& name, int64_t num_classes) {
  if (name == "mlp") return Mlp(num_classes);
  if (name == "lenet") return LeNet(num_classes);
  if (name.rfind("resnet", 0) == 0 && name.size() > 6 &&
      name.find_first_not_of("0123456789", 6) == std::string::npos && name.size() < 10) {
    return ResNet(std::stoi(name.substr(6)), num_classes);
  }
  COHORT_THROW() << "unknown model '" << name
                 << "': expected mlp, lenet or resnetN (CIFAR ResNet, N = 6n + 2: resnet20, ...)";
  return Symbol();
}

}  // namespace cohort::models
