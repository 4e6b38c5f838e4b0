#include "apps/text_generator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "base/error.h"
#include "symbol/models/models.h"

namespace cohort {

void CheckSamplingOptions(const SamplingOptions& o) {
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature)) {
    throw ConfigError(fmt::format("--temperature {}", o.temperature) +
                          ": expected a finite number >= 0 (0: the most likely byte)",
                      __FILE__, __LINE__);
  }
  if (o.top_k < 0) {
    throw ConfigError("--top-k " + std::to_string(o.top_k) + ": expected >= 0 (0: all)", __FILE__,
                      __LINE__);
  }
  if (!(o.top_p > 0 && o.top_p <= 1)) {
    throw ConfigError(fmt::format("--top-p {}: expected a number in (0, 1]", o.top_p), __FILE__,
                      __LINE__);
  }
}

int64_t SampleIndex(std::span<const float> probabilities, const SamplingOptions& o,
                    std::mt19937_64& rng) {
  const int64_t n = static_cast<int64_t>(probabilities.size());
  COHORT_CHECK(n > 0) << "sampling from an empty distribution";
  // Most likely first; ties by index.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return probabilities[a] > probabilities[b]; });
  if (o.temperature == 0) return order[0];
  // p^(1/T), renormalised: softmax(logits / T). In double: small probabilities raised to a
  // large power stay representable.
  std::vector<double> weight(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double p = std::max(0.0, static_cast<double>(probabilities[order[i]]));
    weight[i] = p > 0 ? std::exp(std::log(p) / o.temperature) : 0.0;
  }
  int64_t keep = o.top_k > 0 ? std::min(o.top_k, n) : n;
  const double total = std::accumulate(weight.begin(), weight.begin() + keep, 0.0);
  if (!(total > 0)) return order[0];  // every weight underflowed: the most likely
  if (o.top_p < 1) {
    double cumulative = 0;
    for (int64_t i = 0; i < keep; ++i) {
      cumulative += weight[i];
      if (cumulative >= o.top_p * total) {
        keep = i + 1;
        break;
      }
    }
  }
  const double kept = std::accumulate(weight.begin(), weight.begin() + keep, 0.0);
  // 53 random bits as a double in [0, 1): the same on every platform, unlike the distributions.
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53 * kept;
  double cumulative = 0;
  for (int64_t i = 0; i < keep; ++i) {
    cumulative += weight[i];
    if (u < cumulative) return order[i];
  }
  return order[keep - 1];
}

namespace {

// Logits into probabilities, the sum in double.
void SoftmaxInPlace(std::vector<float>& v) {
  const float top = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (float& x : v) sum += (x = std::exp(x - top));
  for (float& x : v) x = static_cast<float>(x / sum);
}

// The window a GPT was trained on: its position embedding's rows.
int64_t ContextOf(const std::map<std::string, NDArray>& args, int64_t given) {
  if (given > 0) return given;
  const auto pos = args.find("pos_embed_weight");
  if (pos == args.end()) {
    throw ConfigError(
        "the parameters hold no pos_embed_weight to tell the model's window: give --context",
        __FILE__, __LINE__);
  }
  return pos->second.shape()[0];
}

}  // namespace

std::unique_ptr<GptDecoder> GptDecoder::For(const Symbol& symbol,
                                            const std::map<std::string, NDArray>& args,
                                            Context ctx) {
  if (!ctx.is_host()) return nullptr;  // the caches are written on the host
  const auto tok = args.find("tok_embed_weight"), pos = args.find("pos_embed_weight");
  if (tok == args.end() || pos == args.end() || !args.count("h0_ln1_gamma")) return nullptr;
  // The heads: the window graph's reshape of the queries, "(0, 0, heads, -1)".
  int64_t heads = 0;
  for (const auto& node : symbol.TopoOrder()) {
    if (node->name != "h0_attn_q_split_heads") continue;
    const auto shape = node->attrs.find("shape");
    if (shape == node->attrs.end()) return nullptr;
    const Shape s = Shape::Parse(shape->second);
    if (s.ndim() == 4) heads = s[2];
  }
  models::GptOptions o;
  o.vocab = tok->second.shape()[0];
  o.d_model = tok->second.shape()[1];
  o.seq_len = pos->second.shape()[0];
  o.n_head = heads;
  o.tie_weights = !args.count("lm_head_weight");
  o.n_layer = 0;
  while (args.count("h" + std::to_string(o.n_layer) + "_ln1_gamma")) ++o.n_layer;
  if (heads <= 0 || o.d_model % heads != 0) return nullptr;
  std::unique_ptr<GptDecoder> d(new GptDecoder());
  d->window_ = o.seq_len;
  d->layers_ = o.n_layer;
  d->heads_ = heads;
  d->head_dim_ = o.d_model / heads;
  const Shape cache{heads, o.seq_len, d->head_dim_};
  std::map<std::string, Shape> shapes = {
      {"data", {1, 1}}, {"position", {1, 1}}, {"cache_mask", {1, 1, o.seq_len + 1}}};
  for (int64_t l = 0; l < o.n_layer; ++l) {
    shapes["h" + std::to_string(l) + "_k_cache"] = cache;
    shapes["h" + std::to_string(l) + "_v_cache"] = cache;
  }
  d->step_ = Executor::SimpleBind(models::GptDecodeStep(o), ctx, shapes, GradReq::kNull);
  d->step_->CopyParamsFrom(args, {}, /*allow_extra=*/true);
  for (int64_t l = 0; l < o.n_layer; ++l) {
    d->k_caches_.push_back(d->step_->arg_dict().at("h" + std::to_string(l) + "_k_cache"));
    d->v_caches_.push_back(d->step_->arg_dict().at("h" + std::to_string(l) + "_v_cache"));
  }
  return d;
}

void GptDecoder::Step(int64_t token, int64_t position) {
  const auto& in = step_->arg_dict();
  in.at("data").data<float>()[0] = static_cast<float>(token);
  in.at("position").data<float>()[0] = static_cast<float>(position);
  float* mask = in.at("cache_mask").data<float>();
  for (int64_t j = 0; j < window_; ++j) mask[j] = j < position ? 0.0f : -1e9f;
  mask[window_] = 0.0f;  // the position itself, the last of the keys
  step_->Forward(false);
  // The position's key and value, (heads, 1, head_dim), into row `position` of each cache.
  for (int64_t l = 0; l < layers_; ++l) {
    for (int kv = 0; kv < 2; ++kv) {
      const float* row = step_->outputs()[1 + 2 * l + kv].data<float>();
      float* cache = (kv == 0 ? k_caches_ : v_caches_)[l].data<float>();
      for (int64_t h = 0; h < heads_; ++h) {
        std::copy_n(row + h * head_dim_, head_dim_, cache + (h * window_ + position) * head_dim_);
      }
    }
  }
}

std::vector<float> GptDecoder::NextLogits(const std::vector<int64_t>& tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  COHORT_CHECK(n >= 1 && n <= window_)
      << "GptDecoder: " << n << " tokens for a window of " << window_;
  // The cache holds the longest prefix of `tokens` it was built from; the rest is stepped.
  size_t kept = 0;
  while (kept < cached_.size() && kept + 1 < tokens.size() && cached_[kept] == tokens[kept]) {
    ++kept;
  }
  cached_.resize(kept);
  for (auto i = static_cast<int64_t>(kept); i < n; ++i) {
    Step(tokens[i], i);
    cached_.push_back(tokens[i]);
  }
  const NDArray& logits = step_->outputs()[0];
  const float* l = logits.data<float>();
  return std::vector<float>(l, l + logits.size());
}

TextGenerator::TextGenerator(const Symbol& symbol, const std::map<std::string, NDArray>& args,
                             const std::map<std::string, NDArray>& aux, Context ctx,
                             int64_t context, bool kv_cache)
    : symbol_(symbol), context_(ContextOf(args, context)) {
  const std::vector<std::string> inputs = symbol.ListArguments();
  if (std::find(inputs.begin(), inputs.end(), "data") == inputs.end()) {
    throw ConfigError("the symbol has no input 'data' (the token ids) to generate from", __FILE__,
                      __LINE__);
  }
  if (symbol.num_outputs() == 0) {
    throw ConfigError("the symbol has no output", __FILE__, __LINE__);
  }
  const std::string& head = symbol.outputs()[0].node->op;
  gives_logits_ = head != "SoftmaxOutput" && head != "softmax";
  window_ = Executor::SimpleBind(symbol, ctx, {{"data", {1, context_}}}, GradReq::kNull);
  window_->CopyParamsFrom(args, aux, /*allow_extra=*/false);
  const Shape& out = window_->outputs()[0].shape();
  if (out.ndim() != 3 || out[0] != 1 || out[1] != context_) {
    throw ConfigError("the symbol's first output has shape " + out.ToString() + " for data (1, " +
                          std::to_string(context_) + "): expected (1, " + std::to_string(context_) +
                          ", vocab), a distribution a position",
                      __FILE__, __LINE__);
  }
  vocab_ = out[2];
  if (kv_cache) {
    decoder_ = GptDecoder::For(symbol, args, ctx);
    if (decoder_ && decoder_->window() != context_) decoder_.reset();  // another --context
  }
}

std::vector<float> TextGenerator::NextProbabilities(const std::vector<int64_t>& tokens) {
  COHORT_CHECK(!tokens.empty()) << "generation needs at least one token of prompt";
  if (decoder_ && static_cast<int64_t>(tokens.size()) <= context_) {  // Note [KV cache]
    std::vector<float> p = decoder_->NextLogits(tokens);
    SoftmaxInPlace(p);
    return p;
  }
  const int64_t length = std::min<int64_t>(static_cast<int64_t>(tokens.size()), context_);
  Executor* exec = window_.get();
  if (length < context_) {
    std::unique_ptr<Executor>& shorter = shorter_[length];
    if (!shorter) shorter = window_->Reshape({{"data", {1, length}}}, /*partial_shaping=*/true);
    exec = shorter.get();
  }
  std::vector<float> ids(tokens.end() - length, tokens.end());
  NDArray data = NDArray::FromVector<float>({1, length}, ids);
  exec->Forward(false, {{"data", data}});
  const std::vector<float> all = exec->outputs()[0].CopyTo(Context::CPU()).ToVector<float>();
  std::vector<float> last(all.end() - vocab_, all.end());
  if (gives_logits_) SoftmaxInPlace(last);
  return last;
}

std::string TextGenerator::Generate(const std::string& prompt, int64_t length,
                                    const SamplingOptions& sampling, uint64_t seed,
                                    const std::function<void(char)>& on_byte) {
  CheckSamplingOptions(sampling);
  if (prompt.empty()) {
    throw ConfigError("the prompt is empty: give --prompt TEXT or --prompt-file F", __FILE__,
                      __LINE__);
  }
  std::vector<int64_t> tokens;
  for (const char c : prompt) {
    const auto byte = static_cast<int64_t>(static_cast<unsigned char>(c));
    if (byte >= vocab_) {
      throw ConfigError("the prompt holds byte " + std::to_string(byte) +
                            ", outside the model's vocabulary of " + std::to_string(vocab_),
                        __FILE__, __LINE__);
    }
    tokens.push_back(byte);
  }
  std::mt19937_64 rng(seed);
  std::string text;
  for (int64_t i = 0; i < length; ++i) {
    const std::vector<float> p = NextProbabilities(tokens);
    const int64_t next = SampleIndex(p, sampling, rng);
    tokens.push_back(next);
    text.push_back(static_cast<char>(next));
    if (on_byte) on_byte(text.back());
  }
  return text;
}

}  // namespace cohort
