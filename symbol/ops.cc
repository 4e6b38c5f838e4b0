// The typed builder helpers of symbol/ops.h: each op's attributes from its parameter struct.
#include "symbol/ops.h"

namespace cohort::sym {

Symbol FullyConnected(const Symbol& data, const FullyConnectedParam& p, const std::string& name) {
  return Symbol::Create("FullyConnected", std::vector<Symbol>{data}, p.ToAttrs(), name);
}

Symbol Convolution(const Symbol& data, const ConvolutionParam& p, const std::string& name) {
  return Symbol::Create("Convolution", std::vector<Symbol>{data}, p.ToAttrs(), name);
}

Symbol Pooling(const Symbol& data, const PoolingParam& p, const std::string& name) {
  return Symbol::Create("Pooling", std::vector<Symbol>{data}, p.ToAttrs(), name);
}

Symbol Activation(const Symbol& data, const std::string& act_type, const std::string& name) {
  return Symbol::Create("Activation", std::vector<Symbol>{data}, {{"act_type", act_type}}, name);
}

Symbol BatchNorm(const Symbol& data, const BatchNormParam& p, const std::string& name) {
  return Symbol::Create("BatchNorm", std::vector<Symbol>{data}, p.ToAttrs(), name);
}

Symbol Dropout(const Symbol& data, const DropoutParam& p, const std::string& name) {
  return Symbol::Create("Dropout", std::vector<Symbol>{data}, p.ToAttrs(), name);
}

Symbol Flatten(const Symbol& data, const std::string& name) {
  return Symbol::Create("Flatten", std::vector<Symbol>{data}, {}, name);
}

Symbol SoftmaxOutput(const Symbol& data, const std::string& name) {
  return Symbol::Create("SoftmaxOutput", std::vector<Symbol>{data}, {}, name);
}

}  // namespace cohort::sym
