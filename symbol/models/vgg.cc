// The zoo's VGG: MXNet's example/image-classification/symbols/vgg.py (without batch norm).
#include <map>

#include "symbol/models/models.h"
#include "symbol/ops.h"

namespace cohort::models {

Symbol Vgg(int depth, int64_t num_classes) {
  // Convolutions per block for each depth; the blocks have 64, 128, 256, 512 and 512 filters.
  static const std::map<int, std::vector<int>> kLayers = {
      {11, {1, 1, 2, 2, 2}}, {13, {2, 2, 2, 2, 2}}, {16, {2, 2, 3, 3, 3}}, {19, {2, 2, 4, 4, 4}}};
  const auto it = kLayers.find(depth);
  COHORT_CHECK(it != kLayers.end()) << "VGG: depth " << depth << " must be 11, 13, 16 or 19";
  const int64_t filters[] = {64, 128, 256, 512, 512};
  Symbol x = sym::Variable("data");
  for (int block = 1; block <= 5; ++block) {
    for (int layer = 1; layer <= it->second[block - 1]; ++layer) {
      const std::string suffix = std::to_string(block) + "_" + std::to_string(layer);
      x = sym::Convolution(x, {.kernel = {3, 3}, .num_filter = filters[block - 1], .pad = {1, 1}},
                           "conv" + suffix);
      x = sym::Activation(x, "relu", "relu" + suffix);
    }
    x = sym::Pooling(x, {.kernel = {2, 2}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}},
                     "pool" + std::to_string(block));
  }
  x = sym::Flatten(x, "flatten");
  for (const char* n : {"6", "7"}) {
    x = sym::FullyConnected(x, {.num_hidden = 4096}, std::string("fc") + n);
    x = sym::Activation(x, "relu", std::string("relu") + n);
    x = sym::Dropout(x, {.p = 0.5f}, std::string("drop") + n);
  }
  x = sym::FullyConnected(x, {.num_hidden = num_classes}, "fc8");
  return sym::SoftmaxOutput(x, "softmax");
}

}  // namespace cohort::models
