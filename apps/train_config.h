// The run configuration of cohort-train and cohort-predict: a YAML file plus --set overrides,
// checked against the known keys before any work starts.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "io/data_config.h"
#include "symbol/symbol.h"
#include "trainer/trainer.h"

namespace cohort {

struct RunConfig {
  YAML::Node root;  // the merged configuration

  // Model
  Symbol symbol;
  // Devices and data parallelism
  std::vector<Context> devices;
  std::vector<double> work_load;
  std::string kvstore = "local";
  int64_t batch_size = 128;  // global: over all devices of all workers
  // Training
  FitConfig fit;
  int threads = 0;
  std::string log_level = "info";
};

// Loads FILE, applies "key.sub=value" overrides, and checks every key and type; throws
// ConfigError naming the key (or file) on any problem.
YAML::Node LoadConfig(const std::string& path, const std::vector<std::string>& overrides);
// Interprets a checked configuration (the model is built or loaded here).
RunConfig ParseRunConfig(const YAML::Node& root);

// The config's data section as io reads it (Note [Options]).
Options DataSection(const YAML::Node& root);
// The training and validation iterators for this worker (part `rank` of `num_workers`), with
// the per-worker batch size: io's MakeDataIters over DataSection(root).
DataIters MakeDataIters(const YAML::Node& root, int64_t batch_per_worker, int rank, int num_workers,
                        uint64_t seed);

// Turns the schedule's epoch counts into update counts once batches per epoch are known.
void ResolveScheduleInEpochs(const YAML::Node& root, int64_t batches_per_epoch, FitConfig* fit);

}  // namespace cohort
