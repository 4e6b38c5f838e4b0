// The run configuration of cohort-train and cohort-predict: a YAML file plus --set overrides,
// checked against the known keys before any work starts.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "base/options.h"
#include "io/data_config.h"
#include "optimizer/lr_scheduler.h"
#include "symbol/models/models.h"
#include "symbol/symbol.h"
#include "trainer/trainer.h"

namespace cohort {

// The model section's own keys (the fine-tuning ones are FitConfig's): a symbol file, or a
// built-in network by name with its sizes.
struct ModelConfig {
  std::string name = "mlp";
  std::string symbol;  // a symbol JSON file (instead of name)
  int64_t num_classes = 10;
  models::GptOptions gpt;
  double multiplier = 1.0;   // mobilenet
  int64_t resolution = 224;  // mobilenet
  std::string params;        // fine-tuning: parameters to start from

  static const OptionTable<ModelConfig>& Table();
};

struct RunConfig {
  YAML::Node root;  // the merged configuration

  // Model
  ModelConfig model;
  Symbol symbol;
  // Devices and data parallelism
  std::string devices_spec = "cpu:0";  // as written: "cpu:0,cpu:1", "gpu:0-3", "gpu:local"
  std::vector<Context> devices;
  std::vector<double> work_load;
  std::string kvstore = "local";
  int64_t batch_size = 128;  // global: over all devices of all workers
  // Training
  FitConfig fit;
  LRScheduleConfig schedule;  // in epochs: fit.schedule once an epoch's batches are known
  int threads = 0;
  std::string log_level = "info";  // unset: COHORT_LOG_LEVEL's
  std::string precision = "float32";  // bfloat16, float16: mixed precision (Note [AMP pass])
  // none, bfloat16, float16: the type gradients cross between workers in (Note [Gradient
  // compression]).
  std::string gradient_compression = "none";

  // The top level's own keys (the training ones are FitConfig's).
  static const OptionTable<RunConfig>& Table();
};

// Every key of a configuration, by section ("" the top level), as --help-config lists them and
// the checker takes them (Note [Declared options]).
struct ConfigSection {
  std::string name;
  std::vector<OptionInfo> keys;
};
std::vector<ConfigSection> ConfigKeys();
// --help-config: "key<TAB>type<TAB>default<TAB>doc" a line, sections dotted ("optimizer.lr").
std::string ConfigHelp();

// Loads FILE, applies "key.sub=value" overrides, and checks every key and type; throws
// ConfigError naming the key (or file) on any problem.
YAML::Node LoadConfig(const std::string& path, const std::vector<std::string>& overrides);
// Interprets a checked configuration (the model is built or loaded here).
RunConfig ParseRunConfig(const YAML::Node& root);

// A zoo model (model.name) built with model keys given as "key=value" (YAML values: the
// model section's keys, num_classes, d_model, ...), checked as the config's model section is;
// for cohort-model. Throws ConfigError naming the key.
Symbol ZooModel(const std::string& name, const std::vector<std::string>& keys);
// The zoo: each model's name (a pattern for families: resnetN) and the model keys it reads.
struct ZooEntry {
  std::string name, about;
  std::vector<std::string> keys;
};
const std::vector<ZooEntry>& ZooModels();

// The config's data section as io reads it (Note [Options]).
Options DataSection(const YAML::Node& root);
// The training and validation iterators for this worker (part `rank` of `num_workers`), with
// the per-worker batch size: io's MakeDataIters over DataSection(config.root).
DataIters MakeDataIters(const RunConfig& config, int64_t batch_per_worker, int rank,
                        int num_workers);

// fit.schedule from the schedule in epochs, once an epoch's batches are known.
void ResolveScheduleInEpochs(int64_t batches_per_epoch, RunConfig* config);

}  // namespace cohort
