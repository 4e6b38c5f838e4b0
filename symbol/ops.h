// Typed helpers for building networks in C++:
//   Symbol fc = sym::FullyConnected(x, {.num_hidden = 128}, "fc1");
// Each takes the parameter struct its operator parses (operator/<op>.h), so a default lives in
// one place, and writes the attributes MXNet's op of the same name takes.
#pragma once

#include <string>

#include "operator/batch_norm.h"
#include "operator/convolution.h"
#include "operator/dropout.h"
#include "operator/fully_connected.h"
#include "operator/pooling.h"
#include "symbol/symbol.h"

namespace cohort::sym {

using op::BatchNormParam;
using op::ConvolutionParam;
using op::DropoutParam;
using op::FullyConnectedParam;
using op::PoolingParam;
using op::PoolType;

inline Symbol Variable(const std::string& name) { return Symbol::Variable(name); }

Symbol FullyConnected(const Symbol& data, const FullyConnectedParam& p,
                      const std::string& name = "");
Symbol Convolution(const Symbol& data, const ConvolutionParam& p, const std::string& name = "");
Symbol Pooling(const Symbol& data, const PoolingParam& p, const std::string& name = "");
// act_type as MXNet names it: relu, sigmoid, tanh, softrelu, softsign.
Symbol Activation(const Symbol& data, const std::string& act_type, const std::string& name = "");
Symbol BatchNorm(const Symbol& data, const BatchNormParam& p, const std::string& name = "");
Symbol Dropout(const Symbol& data, const DropoutParam& p, const std::string& name = "");
Symbol Flatten(const Symbol& data, const std::string& name = "");
Symbol SoftmaxOutput(const Symbol& data, const std::string& name = "softmax");

}  // namespace cohort::sym
