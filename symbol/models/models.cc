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

Symbol ByName(const std::string& name, int64_t num_classes) {
  if (name == "mlp") return Mlp(num_classes);
  if (name == "lenet") return LeNet(num_classes);
  COHORT_THROW() << "unknown model '" << name << "': expected mlp or lenet";
  return Symbol();
}

}  // namespace cohort::models
