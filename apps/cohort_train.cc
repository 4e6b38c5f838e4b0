// cohort-train: trains a network data-parallel from one YAML configuration.
//   cohort-train --config FILE.yaml [--set key.sub=value]... [--metrics-out FILE.jsonl]
// Under mpirun with kvstore=mpi every process is one worker: it reads its part of the data and
// the global batch is split over all devices of all workers; rank 0 logs, writes checkpoints and
// the metrics file. Exit code 2 with one line for a bad configuration, 1 for a failure later.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "apps/train_config.h"
#include "base/logging.h"

namespace cohort {
namespace {

nlohmann::json ToJson(const std::vector<EvalMetric::NameValue>& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : values) out[name] = value;
  return out;
}

int Train(const std::string& config_path, const std::vector<std::string>& sets,
          const std::string& metrics_out) {
  const YAML::Node root = LoadConfig(config_path, sets);
  RunConfig config = ParseRunConfig(root);
  if (config.threads > 0) setenv("COHORT_NUM_THREADS", std::to_string(config.threads).c_str(), 1);
  std::shared_ptr<KVStore> kv = KVStore::Create(config.kvstore);
  const int rank = kv->rank(), workers = kv->num_workers();
  SetLogLevel(rank == 0 ? config.log_level : "warn");
  if (config.batch_size % workers != 0) {
    throw ConfigError("config: batch_size " + std::to_string(config.batch_size) +
                          " does not divide over " + std::to_string(workers) + " workers",
                      __FILE__, __LINE__);
  }
  const int64_t batch = config.batch_size / workers;
  if (batch < static_cast<int64_t>(config.devices.size())) {
    throw ConfigError("config: a batch of " + std::to_string(batch) +
                          " per worker is smaller than its " +
                          std::to_string(config.devices.size()) + " devices",
                      __FILE__, __LINE__);
  }
  DataIters data = MakeDataIters(root, batch, rank, workers, config.fit.seed);
  ResolveScheduleInEpochs(root, (data.train_samples + batch - 1) / batch, &config.fit);
  Log().info("cohort-train: {} worker(s), devices {} each, global batch {}, kvstore {}", workers,
             root["devices"] ? root["devices"].as<std::string>() : "cpu:0", config.batch_size,
             config.kvstore);
  std::ofstream metrics_file;
  if (!metrics_out.empty() && rank == 0) {
    metrics_file.open(metrics_out, std::ios::app);
    if (!metrics_file) {
      throw ConfigError("cannot write --metrics-out '" + metrics_out + "'", __FILE__, __LINE__);
    }
  }
  Trainer trainer(config.symbol, config.devices, config.work_load, kv);
  trainer.Fit(*data.train, data.val.get(), config.fit, [&](const EpochResult& r) {
    if (!metrics_file.is_open()) return;
    nlohmann::json line = {{"epoch", r.epoch},
                           {"train", ToJson(r.train)},
                           {"val", ToJson(r.val)},
                           {"samples_per_sec", r.samples_per_sec},
                           {"seconds", r.seconds}};
    metrics_file << line.dump() << "\n" << std::flush;
  });
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Train a network data-parallel from a YAML configuration"};
  std::string config, metrics_out;
  std::vector<std::string> sets;
  app.add_option("--config", config, "YAML configuration file")->required();
  app.add_option("--set", sets, "override a key: key.sub=value (repeatable)");
  app.add_option("--metrics-out", metrics_out, "append one JSON line per epoch to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return cohort::Train(config, sets, metrics_out);
  } catch (const cohort::ConfigError& e) {
    std::fprintf(stderr, "cohort-train: %s\n", e.message().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cohort-train: %s\n", e.what());
    return 1;
  }
}
