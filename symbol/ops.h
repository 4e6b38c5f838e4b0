// Typed helpers for building networks in C++:
//   Symbol fc = sym::FullyConnected(x, {.num_hidden = 128}, "fc1");
// Each sets the attributes MXNet's op of the same name takes.
#pragma once

#include <string>

#include "symbol/symbol.h"

namespace cohort::sym {

inline Symbol Variable(const std::string& name) { return Symbol::Variable(name); }

struct FullyConnectedParam {
  int64_t num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
};
Symbol FullyConnected(const Symbol& data, const FullyConnectedParam& p,
                      const std::string& name = "");

struct ConvolutionParam {
  Shape kernel;
  int64_t num_filter = 0;
  Shape stride = {1, 1};
  Shape pad = {0, 0};
  Shape dilate = {1, 1};
  int64_t num_group = 1;
  bool no_bias = false;
};
Symbol Convolution(const Symbol& data, const ConvolutionParam& p, const std::string& name = "");

struct PoolingParam {
  Shape kernel = {1, 1};
  std::string pool_type = "max";
  Shape stride = {1, 1};
  Shape pad = {0, 0};
  bool global_pool = false;
  std::string pooling_convention = "valid";
};
Symbol Pooling(const Symbol& data, const PoolingParam& p, const std::string& name = "");

Symbol Activation(const Symbol& data, const std::string& act_type, const std::string& name = "");

struct BatchNormParam {
  double eps = 1e-3;
  double momentum = 0.9;
  bool fix_gamma = true;
  bool use_global_stats = false;
};
Symbol BatchNorm(const Symbol& data, const BatchNormParam& p, const std::string& name = "");

Symbol Dropout(const Symbol& data, double p, const std::string& name = "");
Symbol Flatten(const Symbol& data, const std::string& name = "");
Symbol SoftmaxOutput(const Symbol& data, const std::string& name = "softmax");

}  // namespace cohort::sym
