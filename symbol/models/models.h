// The model zoo: networks by name, built as MXNet's examples build them.
#pragma once

#include <optional>
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
// ResNet for ImageNet-sized images (3x224x224) as MXNet's example builds it: a 7x7 stride-2
// convolution and max pooling, then four stages of pre-activation units (bottleneck units of
// 256 to 2048 filters from depth 50; basic units of 64 to 512 below); depth 18, 34, 50, 101,
// 152, 200 or 269.
Symbol ImageNetResNet(int depth = 50, int64_t num_classes = 1000);
bool IsImageNetResNetDepth(int depth);
// VGG as MXNet's example builds it (without batch norm), for 3x224x224 images: depth 11, 13, 16
// or 19; two 4096-unit dense layers with dropout 0.5 before the classifier.
Symbol Vgg(int depth = 16, int64_t num_classes = 1000);
// Inception v3 as MXNet's example builds it, for 3x299x299 images.
Symbol InceptionV3(int64_t num_classes = 1000);
// A GPT-style language model (as nanoGPT and GluonNLP's GPT-2): token and position embeddings,
// n_layer pre-LayerNorm blocks of causal multi-head self-attention and a GELU MLP (4·d_model),
// a final LayerNorm, and an output layer over the vocabulary, its weight the token embedding's
// when tie_weights. Inputs "data" and "softmax_label" are (batch, seq_len) token ids, the label
// the next token of each position; the SoftmaxOutput keeps (batch, seq_len, vocab) and scales
// its gradient by 1/seq_len, so that with the trainer's 1/batch the gradient is that of the mean
// cross-entropy over every position. The causal mask is built in the graph from
// _contrib_arange_like, as GluonNLP does. Dropout of `dropout` after the embeddings, on the
// attention weights and after each residual branch (none when 0).
struct GptOptions {
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t d_model = 128;
  int64_t seq_len = 128;
  int64_t vocab = 256;
  double dropout = 0.0;
  bool tie_weights = true;
  // Labels the loss leaves out (SoftmaxOutput's use_ignore): the padding of bucketed lines.
  // seq_len then bounds the bucket lengths (it sizes the position embedding).
  std::optional<float> ignore_label;
};
Symbol Gpt(const GptOptions& options);
// Note [KV cache]: one position of Gpt(options) for incremental decoding, with its parameters'
// names. Inputs: "data" and "position" (1, 1), the token and its position; per layer l,
// "h<l>_k_cache" and "h<l>_v_cache" (n_head, seq_len, d_model / n_head), the keys and values of
// earlier positions; "cache_mask" (1, 1, seq_len + 1), 0 where the position may attend (the
// cached positions before it, and the last entry, itself) and -1e9 elsewhere. Outputs: the
// logits (1, 1, vocab), then per layer the position's key and value (n_head, 1, d / n_head).
Symbol GptDecodeStep(const GptOptions& options);

// MobileNet v1 as MXNet's example builds it (example/image-classification/symbols/mobilenet.py):
// a 3x3 stride-2 convolution of 32·multiplier filters, then 13 pairs of a depthwise 3x3 and a
// pointwise 1x1 convolution, each convolution followed by BatchNorm (fix_gamma) and relu;
// average pooling over the last (resolution / 32)^2 map, a dense layer to num_classes. MXNet
// offers multipliers 0.25, 0.5, 0.75 and 1; any that leaves 32·multiplier >= 1 works here.
struct MobileNetOptions {
  double multiplier = 1.0;
  int64_t resolution = 224;  // the side of the square input images, a multiple of 32
  int64_t num_classes = 1000;
};
Symbol MobileNet(const MobileNetOptions& options);

// "mlp", "lenet", "resnet<depth>" (the ImageNet network for the depths it has, 18 to 269; the
// CIFAR one for other depths 6n + 2: resnet20, resnet56, ...), "vgg<depth>", "inceptionv3",
// "mobilenet" (multiplier 1 at 224x224) or "gpt" (the default GptOptions; num_classes unused);
// throws naming the model otherwise. Without num_classes: 1000 for the ImageNet networks, 10 for
// the others.
Symbol ByName(const std::string& name, std::optional<int64_t> num_classes = std::nullopt);

}  // namespace cohort::models
