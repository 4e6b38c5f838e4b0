// The zoo's ResNets: MXNet's example/image-classification/symbols/resnet.py, the pre-activation
// ("identity mappings") network, for CIFAR-sized and for ImageNet-sized images.
#include <algorithm>

#include "symbol/models/models.h"
#include "symbol/ops.h"

namespace cohort::models {

namespace {

constexpr sym::BatchNormParam kResNetBatchNorm = {.eps = 2e-5, .momentum = 0.9, .fix_gamma = false};

Symbol BnRelu(const Symbol& data, const std::string& name, const std::string& suffix) {
  return sym::Activation(sym::BatchNorm(data, kResNetBatchNorm, name + "_bn" + suffix), "relu",
                         name + "_relu" + suffix);
}

Symbol Conv(const Symbol& data, int64_t filters, int64_t kernel, int64_t stride, int64_t pad,
            const std::string& name) {
  return sym::Convolution(data,
                          {.kernel = {kernel, kernel},
                           .num_filter = filters,
                           .stride = {stride, stride},
                           .pad = {pad, pad},
                           .no_bias = true},
                          name);
}

// The shortcut: the input, or where the shape changes a 1x1 convolution of the first activation.
Symbol Shortcut(const Symbol& data, const Symbol& act1, int64_t filters, int64_t stride,
                bool dim_match, const std::string& name) {
  return dim_match ? data : Conv(act1, filters, 1, stride, 0, name + "_sc");
}

// The basic unit: BN-relu-conv3x3-BN-relu-conv3x3, plus the shortcut.
Symbol ResidualUnit(const Symbol& data, int64_t filters, int64_t stride, bool dim_match,
                    const std::string& name) {
  const Symbol act1 = BnRelu(data, name, "1");
  Symbol x = Conv(act1, filters, 3, stride, 1, name + "_conv1");
  x = Conv(BnRelu(x, name, "2"), filters, 3, 1, 1, name + "_conv2");
  return x + Shortcut(data, act1, filters, stride, dim_match, name);
}

// The bottleneck unit (depth 50 and more): 1x1 to a quarter of the filters, 3x3 with the stride,
// 1x1 back to all of them, each after BN-relu; plus the shortcut.
Symbol BottleneckUnit(const Symbol& data, int64_t filters, int64_t stride, bool dim_match,
                      const std::string& name) {
  const Symbol act1 = BnRelu(data, name, "1");
  Symbol x = Conv(act1, filters / 4, 1, 1, 0, name + "_conv1");
  x = Conv(BnRelu(x, name, "2"), filters / 4, 3, stride, 1, name + "_conv2");
  x = Conv(BnRelu(x, name, "3"), filters, 1, 1, 0, name + "_conv3");
  return x + Shortcut(data, act1, filters, stride, dim_match, name);
}

// The stages (the first keeps the resolution, each later one halves it), then BN-relu, global
// average pooling and the classifier.
Symbol StagesAndHead(Symbol x, const std::vector<int>& units, const std::vector<int64_t>& filters,
                     bool bottleneck, int64_t num_classes) {
  const auto unit = bottleneck ? BottleneckUnit : ResidualUnit;
  for (size_t stage = 1; stage <= units.size(); ++stage) {
    const std::string prefix = "stage" + std::to_string(stage) + "_unit";
    x = unit(x, filters[stage], stage == 1 ? 1 : 2, false, prefix + "1");
    for (int u = 2; u <= units[stage - 1]; ++u) {
      x = unit(x, filters[stage], 1, true, prefix + std::to_string(u));
    }
  }
  x = sym::Activation(sym::BatchNorm(x, kResNetBatchNorm, "bn1"), "relu", "relu1");
  x = sym::Pooling(x, {.kernel = {7, 7}, .pool_type = sym::PoolType::kAvg, .global_pool = true},
                   "pool1");
  x = sym::FullyConnected(sym::Flatten(x), {.num_hidden = num_classes}, "fc1");
  return sym::SoftmaxOutput(x, "softmax");
}

Symbol DataBatchNorm() {
  return sym::BatchNorm(sym::Variable("data"), {.eps = 2e-5, .momentum = 0.9, .fix_gamma = true},
                        "bn_data");
}

}  // namespace

Symbol ResNet(int depth, int64_t num_classes) {
  COHORT_CHECK(depth >= 8 && (depth - 2) % 6 == 0)
      << "ResNet for CIFAR: depth " << depth << " must be 6n + 2 (20, 32, 44, 56, 110, ...)";
  const int units = (depth - 2) / 6;
  const Symbol x = Conv(DataBatchNorm(), 16, 3, 1, 1, "conv0");
  return StagesAndHead(x, {units, units, units}, {16, 16, 32, 64}, false, num_classes);
}

namespace {

struct ImageNetDepth {
  int depth;
  std::vector<int> units;
};
const std::vector<ImageNetDepth>& ImageNetDepths() {
  static const std::vector<ImageNetDepth> depths = {
      {18, {2, 2, 2, 2}},   {34, {3, 4, 6, 3}},    {50, {3, 4, 6, 3}},   {101, {3, 4, 23, 3}},
      {152, {3, 8, 36, 3}}, {200, {3, 24, 36, 3}}, {269, {3, 30, 48, 8}}};
  return depths;
}

}  // namespace

bool IsImageNetResNetDepth(int depth) {
  const auto& d = ImageNetDepths();
  return std::any_of(d.begin(), d.end(), [&](const ImageNetDepth& e) { return e.depth == depth; });
}

Symbol ImageNetResNet(int depth, int64_t num_classes) {
  const auto& depths = ImageNetDepths();
  const auto it = std::find_if(depths.begin(), depths.end(),
                               [&](const ImageNetDepth& e) { return e.depth == depth; });
  COHORT_CHECK(it != depths.end())
      << "ResNet for ImageNet: depth " << depth << " must be 18, 34, 50, 101, 152, 200 or 269";
  const bool bottleneck = depth >= 50;
  const std::vector<int64_t> filters = bottleneck ? std::vector<int64_t>{64, 256, 512, 1024, 2048}
                                                  : std::vector<int64_t>{64, 64, 128, 256, 512};
  Symbol x = Conv(DataBatchNorm(), 64, 7, 2, 3, "conv0");
  x = sym::Activation(sym::BatchNorm(x, kResNetBatchNorm, "bn0"), "relu", "relu0");
  x = sym::Pooling(
      x, {.kernel = {3, 3}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}, .pad = {1, 1}});
  return StagesAndHead(x, it->units, filters, bottleneck, num_classes);
}

}  // namespace cohort::models
