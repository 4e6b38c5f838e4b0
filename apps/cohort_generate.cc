// cohort-generate: text from a byte-level causal language model (the GPT of
// configs/text_gpt.yaml, or any symbol from token ids to next-byte distributions), streamed to
// stdout as it is drawn (Note [Text generation]).
//   cohort-generate --symbol P-symbol.json --params P-0003.params --prompt "The " --length 200
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "apps/text_generator.h"
#include "apps/tool_main.h"
#include "base/context.h"
#include "trainer/checkpoint.h"

namespace cohort {
namespace {

struct GenerateOptions {
  std::string symbol, params, prompt, prompt_file, device = "cpu:0";
  int64_t length = 200, context = 0;
  uint64_t seed = 0;
  bool no_kv_cache = false;
  SamplingOptions sampling;
};

std::string PromptOf(const GenerateOptions& o) {
  if (o.prompt_file.empty()) return o.prompt;
  std::ifstream in(o.prompt_file, std::ios::binary);
  if (!in)
    throw ConfigError("--prompt-file '" + o.prompt_file + "': cannot read it", __FILE__, __LINE__);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int Generate(const GenerateOptions& o) {
  CheckSamplingOptions(o.sampling);
  const std::string prompt = PromptOf(o);
  const Symbol symbol = Symbol::Load(o.symbol);
  std::map<std::string, NDArray> args, aux;
  LoadArgAuxParams(o.params, &args, &aux);
  TextGenerator generator(symbol, args, aux, Context::Parse(o.device), o.context,
                          /*kv_cache=*/!o.no_kv_cache);
  generator.Generate(prompt, o.length, o.sampling, o.seed, [](char byte) {
    std::fputc(static_cast<unsigned char>(byte), stdout);
    std::fflush(stdout);  // streamed as it is made
  });
  std::fputc('\n', stdout);
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Generate text with a trained byte-level language model"};
  cohort::GenerateOptions o;
  app.add_option("--symbol", o.symbol, "symbol JSON (PREFIX-symbol.json)")->required();
  app.add_option("--params", o.params, ".params file (PREFIX-NNNN.params)")->required();
  auto* text = app.add_option("--prompt", o.prompt, "the text to continue");
  auto* file = app.add_option("--prompt-file", o.prompt_file, "a file whose bytes are the prompt");
  text->excludes(file);
  app.add_option("--length", o.length, "bytes to generate")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  app.add_option("--temperature", o.sampling.temperature,
                 "divides the logits (0: always the most likely byte)");
  app.add_option("--top-k", o.sampling.top_k, "draw from the k most likely bytes (0: all)");
  app.add_option("--top-p", o.sampling.top_p,
                 "draw from the fewest most likely bytes whose probability reaches p (1: all)");
  app.add_option("--seed", o.seed, "the same seed gives the same text");
  app.add_option("--context", o.context,
                 "the window the model was trained on (0: the rows of pos_embed_weight)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 20));
  app.add_option("--device", o.device, "cpu:0 or gpu:N");
  app.add_flag("--no-kv-cache", o.no_kv_cache,
               "run the whole window for every byte (the GPT otherwise decodes a position at a "
               "time while the text fits its window)");
  return cohort::ParseAndRun(app, argc, argv, "cohort-generate",
                             [&] { return cohort::Generate(o); });
}
