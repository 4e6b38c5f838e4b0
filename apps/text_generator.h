// Text generation from a byte-level causal language model (cohort-generate): next-byte
// probabilities from the model's last position, and the sampling rules (temperature, top-k,
// top-p) that pick the byte (Note [Text generation]).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "executor/executor.h"

namespace cohort {

// Note [Text generation]
// A causal model's output at position t depends on positions 0..t alone, so a prompt shorter
// than the trained window needs no padding: the executor bound for the window (1 x context) is
// reshaped to the tokens there are (sharing its parameters and memory), and the next byte is
// drawn from the last position's distribution. Once the text is longer than the window, the
// window slides: the model sees its last `context` bytes. Each byte is drawn from a
// std::mt19937_64 seeded once, so the same seed gives the same text. For Cohort's GPT a token
// costs one position's work while the text fits the window (Note [KV cache]); other models, and
// a sliding window, cost a forward of the window.
struct SamplingOptions {
  double temperature = 1.0;  // 0: the most likely byte (greedy)
  int64_t top_k = 0;         // keep the k most likely (0: all)
  double top_p = 1.0;        // keep the fewest most likely whose probability reaches p
};

// Throws a ConfigError naming the option for a negative temperature, top_k or a top_p outside
// (0, 1].
void CheckSamplingOptions(const SamplingOptions& o);

// The index drawn from `probabilities` (a distribution over the vocabulary) under `o`; ties
// go to the lower index.
int64_t SampleIndex(std::span<const float> probabilities, const SamplingOptions& o,
                    std::mt19937_64& rng);

// Note [KV cache]
// A causal model's keys and values of a position do not change once it is made, so while the
// text fits the window each new token needs only its own position's work: GptDecodeStep
// (symbol/models/models.h), bound once with the model's parameters, takes the token, its
// position and the keys and values of the positions before it (caches of (heads, window,
// d / heads) a layer) and gives the next token's logits and the position's own key and value,
// which are copied into the caches. Attention over the cached positions and the new one is the
// window's attention at that position (masked entries weigh exactly 0), summed in another order:
// the distributions agree within float rounding, not bit for bit. The decoder is used for a
// symbol with the GPT's nodes and parameters (Gpt in symbol/models), on the host; a text longer
// than the window slides it, which moves every position, so from then on each token costs a
// forward of the window again. A prompt that does not extend the cached tokens starts over.
class GptDecoder {
 public:
  // The decoder for `symbol` when it is Cohort's GPT (its shapes read from the parameters and
  // the heads' reshape), else null.
  static std::unique_ptr<GptDecoder> For(const Symbol& symbol,
                                         const std::map<std::string, NDArray>& args, Context ctx);
  int64_t window() const { return window_; }
  // The logits of the token after `tokens` (at most window() of them).
  std::vector<float> NextLogits(const std::vector<int64_t>& tokens);

 private:
  GptDecoder() = default;
  void Step(int64_t token, int64_t position);

  std::unique_ptr<Executor> step_;
  int64_t window_ = 0, layers_ = 0, heads_ = 0, head_dim_ = 0;
  std::vector<NDArray> k_caches_, v_caches_;  // per layer, (heads, window, head_dim)
  std::vector<int64_t> cached_;               // the tokens whose keys and values are cached
};

class TextGenerator {
 public:
  // `symbol` takes "data" (1 x time, token ids) and gives (1, time, vocab) probabilities
  // (SoftmaxOutput or softmax) or logits; `context`: the window it was trained on (0: the rows
  // of pos_embed_weight).
  // `kv_cache`: decode Cohort's GPT a position at a time (Note [KV cache]).
  TextGenerator(const Symbol& symbol, const std::map<std::string, NDArray>& arg_params,
                const std::map<std::string, NDArray>& aux_params, Context ctx, int64_t context,
                bool kv_cache = true);

  int64_t context() const { return context_; }
  int64_t vocab() const { return vocab_; }
  bool uses_kv_cache() const { return decoder_ != nullptr; }
  // The distribution of the byte after `tokens` (their last `context` are seen).
  std::vector<float> NextProbabilities(const std::vector<int64_t>& tokens);
  // `length` bytes continuing `prompt`, drawn under `sampling` from a std::mt19937_64 seeded
  // with `seed`; `on_byte` (if set) gets each as it is drawn. cohort-generate and Python's
  // cohort.generation both run this. Throws a ConfigError for an empty prompt or a byte
  // outside the vocabulary.
  std::string Generate(const std::string& prompt, int64_t length, const SamplingOptions& sampling,
                       uint64_t seed, const std::function<void(char)>& on_byte = {});

 private:
  Symbol symbol_;
  int64_t context_ = 0, vocab_ = 0;
  bool gives_logits_ = false;
  std::unique_ptr<Executor> window_;                      // bound for 1 x context
  std::map<int64_t, std::unique_ptr<Executor>> shorter_;  // reshaped for prompts shorter
  std::unique_ptr<GptDecoder> decoder_;                   // Note [KV cache]; null: none
};

}  // namespace cohort
