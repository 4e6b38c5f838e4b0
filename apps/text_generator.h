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
// std::mt19937_64 seeded once, so the same seed gives the same text. A token costs a forward of
// the whole window (no cache of earlier positions' keys and values yet).
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

class TextGenerator {
 public:
  // `symbol` takes "data" (1 x time, token ids) and gives (1, time, vocab) probabilities
  // (SoftmaxOutput or softmax) or logits; `context`: the window it was trained on (0: the rows
  // of pos_embed_weight).
  TextGenerator(const Symbol& symbol, const std::map<std::string, NDArray>& arg_params,
                const std::map<std::string, NDArray>& aux_params, Context ctx, int64_t context);

  int64_t context() const { return context_; }
  int64_t vocab() const { return vocab_; }
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
};

}  // namespace cohort
