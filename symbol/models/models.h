// The model zoo: networks by name, built as MXNet's examples build them.
#pragma once

#include <string>

#include "symbol/symbol.h"

namespace cohort::models {

// Multilayer perceptron: fc(128)-relu-fc(64)-relu-fc(classes)-softmax.
Symbol Mlp(int64_t num_classes = 10);
// LeNet as in MXNet's example: conv5x5x20-tanh-maxpool2-conv5x5x50-tanh-maxpool2-fc500-tanh-fc.
Symbol LeNet(int64_t num_classes = 10);
// ResNet for CIFAR-sized images (3x32x32) as MXNet's example builds it (pre-activation units,
// three stages of 16, 32 and 64 filters, a BatchNorm on the data): depth 6n + 2, e.g. 20.
Symbol ResNet(int depth = 20, int64_t num_classes = 10);
// "mlp", "lenet" or "resnet<depth>" (resnet20, resnet56, ...); throws naming the model otherwise.
Symbol ByName(const std::string& name, int64_t num_classes = 10);

}  // namespace cohort::models
