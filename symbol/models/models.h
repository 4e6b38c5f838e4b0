// The model zoo: networks by name, built as MXNet's examples build them.
#pragma once

#include <string>

#include "symbol/symbol.h"

namespace cohort::models {

// Multilayer perceptron: fc(128)-relu-fc(64)-relu-fc(classes)-softmax.
Symbol Mlp(int64_t num_classes = 10);
// LeNet as in MXNet's example: conv5x5x20-tanh-maxpool2-conv5x5x50-tanh-maxpool2-fc500-tanh-fc.
Symbol LeNet(int64_t num_classes = 10);
// "mlp" or "lenet"; throws naming the model otherwise.
Symbol ByName(const std::string& name, int64_t num_classes = 10);

}  // namespace cohort::models
