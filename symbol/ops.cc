// The typed builder helpers of symbol/ops.h.
#include "symbol/ops.h"

#include <sstream>

namespace cohort::sym {
namespace {

std::string Text(const Shape& s) {
  std::string out = "(";
  for (int i = 0; i < s.ndim(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}
std::string Text(bool b) { return b ? "True" : "False"; }
std::string Text(double d) {
  std::ostringstream out;
  out << d;
  return out.str();
}

}  // namespace

Symbol FullyConnected(const Symbol& data, const FullyConnectedParam& p, const std::string& name) {
  return Symbol::Create("FullyConnected", std::vector<Symbol>{data},
                        {{"num_hidden", std::to_string(p.num_hidden)},
                         {"no_bias", Text(p.no_bias)},
                         {"flatten", Text(p.flatten)}},
                        name);
}

Symbol Convolution(const Symbol& data, const ConvolutionParam& p, const std::string& name) {
  return Symbol::Create("Convolution", std::vector<Symbol>{data},
                        {{"kernel", Text(p.kernel)},
                         {"num_filter", std::to_string(p.num_filter)},
                         {"stride", Text(p.stride)},
                         {"pad", Text(p.pad)},
                         {"dilate", Text(p.dilate)},
                         {"num_group", std::to_string(p.num_group)},
                         {"no_bias", Text(p.no_bias)}},
                        name);
}

Symbol Pooling(const Symbol& data, const PoolingParam& p, const std::string& name) {
  return Symbol::Create("Pooling", std::vector<Symbol>{data},
                        {{"kernel", Text(p.kernel)},
                         {"pool_type", p.pool_type},
                         {"stride", Text(p.stride)},
                         {"pad", Text(p.pad)},
                         {"global_pool", Text(p.global_pool)},
                         {"pooling_convention", p.pooling_convention}},
                        name);
}

Symbol Activation(const Symbol& data, const std::string& act_type, const std::string& name) {
  return Symbol::Create("Activation", std::vector<Symbol>{data}, {{"act_type", act_type}}, name);
}

Symbol BatchNorm(const Symbol& data, const BatchNormParam& p, const std::string& name) {
  return Symbol::Create("BatchNorm", std::vector<Symbol>{data},
                        {{"eps", Text(p.eps)},
                         {"momentum", Text(p.momentum)},
                         {"fix_gamma", Text(p.fix_gamma)},
                         {"use_global_stats", Text(p.use_global_stats)}},
                        name);
}

Symbol Dropout(const Symbol& data, double p, const std::string& name) {
  return Symbol::Create("Dropout", std::vector<Symbol>{data}, {{"p", Text(p)}}, name);
}

Symbol Flatten(const Symbol& data, const std::string& name) {
  return Symbol::Create("Flatten", std::vector<Symbol>{data}, {}, name);
}

Symbol SoftmaxOutput(const Symbol& data, const std::string& name) {
  return Symbol::Create("SoftmaxOutput", std::vector<Symbol>{data}, {}, name);
}

}  // namespace cohort::sym
