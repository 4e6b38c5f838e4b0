// The model zoo.
#include "symbol/models/models.h"

#include <charconv>
#include <cmath>

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
  x = sym::Pooling(x, {.kernel = {2, 2}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}},
                   "pool1");
  x = sym::Convolution(x, {.kernel = {5, 5}, .num_filter = 50}, "conv2");
  x = sym::Activation(x, "tanh", "tanh2");
  x = sym::Pooling(x, {.kernel = {2, 2}, .pool_type = sym::PoolType::kMax, .stride = {2, 2}},
                   "pool2");
  x = sym::Flatten(x, "flatten");
  x = sym::Activation(sym::FullyConnected(x, {.num_hidden = 500}, "fc1"), "tanh", "tanh3");
  x = sym::FullyConnected(x, {.num_hidden = num_classes}, "fc2");
  return sym::SoftmaxOutput(x, "softmax");
}

namespace {

// MobileNet's unit: a convolution without bias, BatchNorm and relu, named as MXNet's example.
Symbol ConvBnRelu(const Symbol& data, const sym::ConvolutionParam& conv, const std::string& name) {
  Symbol x = sym::Convolution(data, conv, name + "_conv2d");
  x = sym::BatchNorm(x, {}, name + "_batchnorm");
  return sym::Activation(x, "relu", name + "_relu");
}

}  // namespace

Symbol MobileNet(const MobileNetOptions& o) {
  const auto base = static_cast<int64_t>(32 * o.multiplier);
  COHORT_CHECK(o.multiplier > 0 && base >= 1)
      << "mobilenet: multiplier " << o.multiplier << " must leave 32 x multiplier >= 1";
  COHORT_CHECK(o.resolution >= 32 && o.resolution % 32 == 0)
      << "mobilenet: resolution " << o.resolution << " must be a positive multiple of 32";
  COHORT_CHECK(o.num_classes >= 1) << "mobilenet: num_classes must be positive";
  struct Pair {
    int64_t depthwise, stride, pointwise;  // in units of base
  };
  static constexpr Pair kPairs[] = {{1, 1, 2},   {2, 2, 4},   {4, 1, 4},   {4, 2, 8},   {8, 1, 8},
                                    {8, 2, 16},  {16, 1, 16}, {16, 1, 16}, {16, 1, 16}, {16, 1, 16},
                                    {16, 1, 16}, {16, 2, 32}, {32, 1, 32}};
  Symbol x = ConvBnRelu(
      sym::Variable("data"),
      {.kernel = {3, 3}, .num_filter = base, .stride = {2, 2}, .pad = {1, 1}, .no_bias = true},
      "conv_1");
  int index = 2;
  for (const Pair& p : kPairs) {
    const std::string name = "conv_" + std::to_string(index++);
    const int64_t channels = base * p.depthwise;
    x = ConvBnRelu(x,
                   {.kernel = {3, 3},
                    .num_filter = channels,
                    .stride = {p.stride, p.stride},
                    .pad = {1, 1},
                    .num_group = channels,
                    .no_bias = true},
                   name + "_dw");
    x = ConvBnRelu(x, {.kernel = {1, 1}, .num_filter = base * p.pointwise, .no_bias = true}, name);
  }
  const int64_t pool = o.resolution / 32;
  x = sym::Pooling(x, {.kernel = {pool, pool}, .pool_type = sym::PoolType::kAvg}, "global_pool");
  x = sym::FullyConnected(sym::Flatten(x, "flatten"), {.num_hidden = o.num_classes}, "fc");
  return sym::SoftmaxOutput(x, "softmax");
}

namespace {

// A double as the shortest text that reads back to it (Python's repr), so attribute values
// equal those MXNet's Python front end writes.
std::string Repr(double v) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
  std::string text(buf, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

Symbol Op(const std::string& op, const std::vector<Symbol>& inputs, const op::Attrs& attrs,
          const std::string& name) {
  return Symbol::Create(op, inputs, attrs, name);
}

Symbol Reshape(const Symbol& x, const std::string& shape, const std::string& name) {
  return Op("Reshape", {x}, {{"shape", shape}}, name);
}

Symbol DenseNd(const Symbol& x, int64_t units, const std::string& name) {
  return sym::FullyConnected(x, {.num_hidden = units, .flatten = false}, name);
}

Symbol MaybeDropout(const Symbol& x, double p, const std::string& name) {
  return p > 0 ? sym::Dropout(x, {.p = static_cast<float>(p)}, name) : x;
}

// The keys and values of earlier positions for one position's attention (Note [KV cache]):
// the step's own key and value are appended to `made`.
struct KvCache {
  Symbol keys, values;  // (heads, seq_len, d / heads)
  std::vector<Symbol>* made;
};

// Causal self-attention of x (batch, time, d) over h heads; `mask` (time, time) is 0 where a
// position may attend and a large negative number where it may not. With a cache, the keys and
// values are the cached ones followed by the position's own.
Symbol Attention(const Symbol& x, const Symbol& mask, const GptOptions& o, const std::string& p,
                 const KvCache* cache) {
  const std::string h = std::to_string(o.n_head);
  const Symbol qkv = DenseNd(x, 3 * o.d_model, p + "_qkv");
  const Symbol parts =
      Op("SliceChannel", {qkv}, {{"num_outputs", "3"}, {"axis", "2"}}, p + "_split");
  // (batch, time, d) -> (batch·heads, time, d / heads)
  auto heads = [&](const Symbol& t, const std::string& n) {
    Symbol y = Reshape(t, "(0, 0, " + h + ", -1)", p + "_" + n + "_split_heads");
    y = Op("transpose", {y}, {{"axes", "(0, 2, 1, 3)"}}, p + "_" + n + "_heads_first");
    return Reshape(y, "(-3, -2)", p + "_" + n + "_merge_batch");
  };
  const Symbol q = heads(parts[0], "q");
  Symbol k = heads(parts[1], "k"), v = heads(parts[2], "v");
  if (cache) {
    cache->made->push_back(k);
    cache->made->push_back(v);
    k = Op("Concat", {cache->keys, k}, {{"num_args", "2"}, {"dim", "1"}}, p + "_keys");
    v = Op("Concat", {cache->values, v}, {{"num_args", "2"}, {"dim", "1"}}, p + "_values");
  }
  Symbol scores = Op("batch_dot", {q, k}, {{"transpose_b", "True"}}, p + "_scores");
  const double scale = 1.0 / std::sqrt(static_cast<double>(o.d_model / o.n_head));
  scores = Op("_mul_scalar", {scores}, {{"scalar", Repr(scale)}}, p + "_scale");
  scores = Op("broadcast_add", {scores, mask}, {}, p + "_masked");
  Symbol weights = Op("softmax", {scores}, {{"axis", "-1"}}, p + "_softmax");
  weights = MaybeDropout(weights, o.dropout, p + "_attn_drop");
  Symbol y = Op("batch_dot", {weights, v}, {}, p + "_context");
  y = Reshape(y, "(-4, -1, " + h + ", -2)", p + "_split_batch");
  y = Op("transpose", {y}, {{"axes", "(0, 2, 1, 3)"}}, p + "_time_first");
  y = Reshape(y, "(0, 0, -1)", p + "_merge_heads");
  return DenseNd(y, o.d_model, p + "_proj");
}

void CheckGptOptions(const GptOptions& o) {
  COHORT_CHECK(o.n_layer >= 1 && o.n_head >= 1 && o.d_model >= 1 && o.seq_len >= 1 && o.vocab >= 1)
      << "gpt: n_layer, n_head, d_model, seq_len and vocab must be positive";
  COHORT_CHECK(o.d_model % o.n_head == 0)
      << "gpt: d_model " << o.d_model << " is not a multiple of n_head " << o.n_head;
  COHORT_CHECK(o.dropout >= 0 && o.dropout < 1)
      << "gpt: dropout " << o.dropout << " is outside [0, 1)";
}

// The token's embedding plus its position's.
Symbol Embed(const Symbol& data, const Symbol& positions, const Symbol& token_weight,
             const GptOptions& o) {
  const std::string d = std::to_string(o.d_model);
  const Symbol tok = Symbol::Create(
      "Embedding", std::map<std::string, Symbol>{{"data", data}, {"weight", token_weight}},
      {{"input_dim", std::to_string(o.vocab)}, {"output_dim", d}}, "tok_embed");
  const Symbol pos = Op("Embedding", {positions},
                        {{"input_dim", std::to_string(o.seq_len)}, {"output_dim", d}}, "pos_embed");
  return Op("broadcast_add", {tok, pos}, {}, "embed");
}

// Block l: pre-LayerNorm attention and GELU MLP, each a residual branch.
Symbol Block(Symbol x, const Symbol& mask, const GptOptions& o, int64_t l, const KvCache* cache) {
  const std::string p = "h" + std::to_string(l);
  Symbol a = Op("LayerNorm", {x}, {}, p + "_ln1");
  a = MaybeDropout(Attention(a, mask, o, p + "_attn", cache), o.dropout, p + "_attn_out_drop");
  x = Op("elemwise_add", {x, a}, {}, p + "_attn_residual");
  Symbol m = Op("LayerNorm", {x}, {}, p + "_ln2");
  m = DenseNd(m, 4 * o.d_model, p + "_mlp_fc");
  m = Op("LeakyReLU", {m}, {{"act_type", "gelu"}}, p + "_mlp_gelu");
  m = MaybeDropout(DenseNd(m, o.d_model, p + "_mlp_proj"), o.dropout, p + "_mlp_drop");
  return Op("elemwise_add", {x, m}, {}, p + "_mlp_residual");
}

// The final LayerNorm and the output layer over the vocabulary (the token embedding's weight
// when tie_weights).
Symbol LmHead(const Symbol& x, const Symbol& token_weight, const GptOptions& o) {
  const Symbol y = Op("LayerNorm", {x}, {}, "ln_f");
  if (!o.tie_weights) return DenseNd(y, o.vocab, "lm_head");
  return Symbol::Create(
      "FullyConnected", std::map<std::string, Symbol>{{"data", y}, {"weight", token_weight}},
      {{"num_hidden", std::to_string(o.vocab)}, {"no_bias", "True"}, {"flatten", "False"}},
      "lm_head");
}

}  // namespace

Symbol Gpt(const GptOptions& o) {
  CheckGptOptions(o);
  const Symbol data = sym::Variable("data");
  const Symbol token_weight = sym::Variable("tok_embed_weight");
  const Symbol positions = Op("_contrib_arange_like", {data}, {{"axis", "1"}}, "positions");
  Symbol x = MaybeDropout(Embed(data, positions, token_weight, o), o.dropout, "embed_drop");
  // mask[i, j] = -1e9 where j > i (a later position), 0 elsewhere.
  const Symbol later =
      Op("broadcast_greater",
         {Reshape(positions, "(1, -1)", "mask_cols"), Reshape(positions, "(-1, 1)", "mask_rows")},
         {}, "mask_later");
  const Symbol mask = Op("_mul_scalar", {later}, {{"scalar", "-1000000000.0"}}, "mask");
  for (int64_t l = 0; l < o.n_layer; ++l) x = Block(x, mask, o, l, nullptr);
  op::Attrs loss = {{"preserve_shape", "True"},
                    {"grad_scale", Repr(1.0 / static_cast<double>(o.seq_len))}};
  if (o.ignore_label) {
    loss["use_ignore"] = "True";
    loss["ignore_label"] = Repr(*o.ignore_label);
  }
  return Op("SoftmaxOutput", {LmHead(x, token_weight, o), sym::Variable("softmax_label")}, loss,
            "softmax");
}

Symbol GptDecodeStep(const GptOptions& options) {
  CheckGptOptions(options);
  GptOptions o = options;
  o.dropout = 0;  // inference
  const Symbol token_weight = sym::Variable("tok_embed_weight");
  Symbol x = Embed(sym::Variable("data"), sym::Variable("position"), token_weight, o);
  const Symbol mask = sym::Variable("cache_mask");  // (1, 1, seq_len + 1)
  std::vector<Symbol> outputs(1);                   // the logits, then each layer's key and value
  for (int64_t l = 0; l < o.n_layer; ++l) {
    const std::string p = "h" + std::to_string(l);
    const KvCache cache{sym::Variable(p + "_k_cache"), sym::Variable(p + "_v_cache"), &outputs};
    x = Block(x, mask, o, l, &cache);
  }
  outputs[0] = LmHead(x, token_weight, o);
  return Symbol::Group(outputs);
}

Symbol ByName(const std::string& name, std::optional<int64_t> num_classes) {
  // The depth in "<prefix><digits>", or 0.
  const auto depth = [&](const std::string& prefix) -> int {
    if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() ||
        name.size() > prefix.size() + 3 ||
        name.find_first_not_of("0123456789", prefix.size()) != std::string::npos) {
      return 0;
    }
    return std::stoi(name.substr(prefix.size()));
  };
  const int64_t small = num_classes.value_or(10), imagenet = num_classes.value_or(1000);
  if (name == "mlp") return Mlp(small);
  if (name == "lenet") return LeNet(small);
  if (const int d = depth("resnet")) {
    return IsImageNetResNetDepth(d) ? ImageNetResNet(d, imagenet) : ResNet(d, small);
  }
  if (const int d = depth("vgg")) return Vgg(d, imagenet);
  if (name == "inceptionv3") return InceptionV3(imagenet);
  if (name == "mobilenet") return MobileNet({.num_classes = imagenet});
  if (name == "gpt") return Gpt({});
  COHORT_THROW() << "unknown model '" << name
                 << "': expected mlp, lenet, resnetN (ImageNet ResNet for N = 18, 34, 50, 101, "
                    "152, 200, 269; CIFAR ResNet for other N = 6n + 2: resnet20, ...), vggN (11, "
                    "13, 16, 19), inceptionv3, mobilenet or gpt";
  return Symbol();
}

}  // namespace cohort::models
