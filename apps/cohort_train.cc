// cohort-train: trains a network data-parallel from one YAML configuration.
//   cohort-train --config FILE.yaml [--set key.sub=value]... [--metrics-out FILE.jsonl] [--profile]
//                [--metrics-every K] [--timeline FILE.json] [--eval-only]
// Under mpirun with kvstore=mpi every process is one worker: it reads its part of the data and
// the global batch is split over all devices of all workers; rank 0 logs, writes checkpoints and
// the metrics file. Exit code 2 with one line for a bad configuration or bad data, 1 for a
// failure later; in an MPI job a failing rank ends every rank (Note [No hang]). SIGINT/SIGTERM
// stop every worker after the same step, with a checkpoint, exit 130/143 (Note [Stop on a
// signal]).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "apps/tool_main.h"
#include "apps/train_config.h"
#include "base/env.h"
#include "base/logging.h"
#include "base/stop_signal.h"
#include "base/timeline.h"
#include "kvstore/kvstore.h"
#include "trainer/resume.h"

namespace cohort {
namespace {

nlohmann::json ToJson(const std::vector<EvalMetric::NameValue>& values) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : values) out[name] = value;
  return out;
}

// Where one training step's time goes, tab-separated on stdout: the phases of a step, then
// device 0's ops in forward order (milliseconds per step, share of the step).
void PrintProfile(const StepProfile& p) {
  if (p.steps == 0) return;
  const double per_step = 1e3 / static_cast<double>(p.steps);
  const double step_ms = (p.data + p.forward + p.backward + p.update + p.metric) * per_step;
  std::printf("# profile: %lld steps, %.3f ms per step\n", static_cast<long long>(p.steps),
              step_ms);
  std::printf("phase\tms_per_step\tshare\n");
  for (auto [name, seconds] : {std::pair{"data", p.data},
                               {"forward", p.forward},
                               {"backward", p.backward},
                               {"update", p.update},
                               {"metric", p.metric}}) {
    std::printf("%s\t%.3f\t%.3f\n", name, seconds * per_step, seconds * per_step / step_ms);
  }
  std::printf("op\ttype\tforward_ms\tbackward_ms\tshare\n");
  for (const Executor::OpTiming& op : p.ops) {
    const double fwd = op.forward_seconds * per_step, bwd = op.backward_seconds * per_step;
    std::printf("%s\t%s\t%.3f\t%.3f\t%.3f\n", op.name.c_str(), op.type.c_str(), fwd, bwd,
                (fwd + bwd) / step_ms);
  }
}

// Rank 0 writes FILE.json, rank r FILE.rankR.json (Note [Timeline]).
std::string TimelinePath(const std::string& path, int rank) {
  if (rank == 0) return path;
  const size_t dot = path.rfind('.');
  const bool has_extension = dot != std::string::npos && path.find('/', dot) == std::string::npos;
  const std::string stem = has_extension ? path.substr(0, dot) : path;
  return stem + ".rank" + std::to_string(rank) + (has_extension ? path.substr(dot) : "");
}

// A file the job writes late must be writable from the start: failing after the training would
// lose the run. Throws a ConfigError naming `what` when its folder is missing or read-only.
// The folder `path` is written in: made when missing (as most config-driven tools make their
// output folders), and checked writable before any work.
void PrepareWritableFolder(const std::string& path, const std::string& what) {
  std::filesystem::path folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) {
    throw ConfigError(
        what + " '" + path + "': cannot make folder '" + folder.string() + "': " + ec.message(),
        __FILE__, __LINE__);
  }
  if (access(folder.c_str(), W_OK) != 0) {
    throw ConfigError(what + " '" + path + "': folder '" + folder.string() + "' is not writable",
                      __FILE__, __LINE__);
  }
}

// The rank and size a launcher gave this process in its environment (Open MPI's mpirun, or a
// PMI launcher such as MPICH's), known before MPI starts; {-1, 1} outside such a job.
struct Launched {
  int rank = -1, size = 1;
};
Launched LaunchedAs() {
  for (auto [rank_var, size_var] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                    std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const char* rank = std::getenv(rank_var);
    const char* size = std::getenv(size_var);
    if (rank && size) return {std::atoi(rank), std::max(1, std::atoi(size))};
  }
  return {};
}

// --eval-only: the configured metrics on the validation data with the parameters of the
// checkpoint resume_epoch names (auto: the latest), summed over the workers; logged, and one
// JSON line ("epoch", "val", "checkpoint") in the metrics file.
int Evaluate(const RunConfig& config, DataIters& data, KVStore& kv, std::ofstream& metrics_file) {
  const FitConfig& f = config.fit;
  if (f.checkpoint_prefix.empty() || (f.begin_epoch == 0 && !f.resume_latest)) {
    throw ConfigError(
        "--eval-only: set resume_epoch (a number or auto) and checkpoint.prefix to "
        "the checkpoint to evaluate",
        __FILE__, __LINE__);
  }
  if (!data.val) {
    throw ConfigError("--eval-only: the data section gives no validation data", __FILE__, __LINE__);
  }
  CheckpointPosition at{f.begin_epoch, 0};
  if (f.resume_latest) {
    const std::optional<CheckpointPosition> latest = LatestCheckpoint(f.checkpoint_prefix);
    if (!latest) {
      throw ConfigError("--eval-only: no checkpoint beside '" + f.checkpoint_prefix + "'", __FILE__,
                        __LINE__);
    }
    at = *latest;
  }
  const std::string path = CheckpointParamsPath(f.checkpoint_prefix, at);
  std::map<std::string, NDArray> args, aux;
  LoadCheckpointParams(f.checkpoint_prefix, at, &args, &aux);
  Trainer trainer(config.symbol, config.devices, config.work_load,
                  std::shared_ptr<KVStore>(&kv, [](KVStore*) {}));
  trainer.SetParams(args, aux, path);
  std::unique_ptr<EvalMetric> metric = CreateMetric(f.metrics, f.ignore_label);
  const std::vector<EvalMetric::NameValue> values = trainer.Score(*data.val, *metric);
  for (const auto& [name, value] : values) {
    Log().info("Evaluation of \"{}\": Validation-{}={:.6f}", path, name, value);
  }
  if (metrics_file.is_open()) {
    metrics_file
        << nlohmann::json{{"epoch", at.epoch}, {"val", ToJson(values)}, {"checkpoint", path}}.dump()
        << "\n"
        << std::flush;
  }
  return 0;
}

// The global batch_size's share of each worker, which each of its devices must get a sample of.
int64_t BatchPerWorker(const RunConfig& config, int workers) {
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
  return batch;
}

struct TrainArgs {
  std::string config, metrics_out, timeline;
  std::vector<std::string> sets;
  bool profile = false, eval_only = false;
  int metrics_every = 0;  // steps between --metrics-out's step lines (0: none)
};

// --metrics-out's JSONL, which rank 0 writes: a line an epoch (the metrics of every worker)
// and, with --metrics-every K, a line every K steps with the epoch's running training
// metrics so far, rank 0's own ("scope": "rank 0"; the epoch's line is the global one).
class MetricsLog {
 public:
  MetricsLog(const TrainArgs& a, int rank) {
    if (a.metrics_every > 0 && a.metrics_out.empty()) {
      throw ConfigError("--metrics-every needs --metrics-out", __FILE__, __LINE__);
    }
    enabled_ = !a.metrics_out.empty();
    if (!enabled_ || rank != 0) return;
    file_.open(a.metrics_out, std::ios::app);
    if (!file_) {
      throw ConfigError("cannot write --metrics-out '" + a.metrics_out + "'", __FILE__, __LINE__);
    }
  }
  std::ofstream& file() { return file_; }

  void Epoch(const EpochResult& r, bool count_tokens) {
    if (!file_.is_open()) return;
    nlohmann::json line = {{"epoch", r.epoch},     {"train", ToJson(r.train)},
                           {"val", ToJson(r.val)}, {"samples_per_sec", r.samples_per_sec},
                           {"seconds", r.seconds}, {"lr", r.lr}};
    if (count_tokens) {
      line["tokens_per_sec"] = r.tokens_per_sec;
      line["tokens"] = r.tokens;
    }
    if (r.loss_scale > 0) {  // Note [Loss scaling]
      line["loss_scale"] = r.loss_scale;
      line["overflow_skips"] = r.overflow_skips;
    }
    file_ << line.dump() << "\n" << std::flush;
  }

  // The hooks that write the step lines: the training metric the steps update is this one. Every
  // worker sums its metric's sums with the others' at each line's step (a collective at the
  // same steps on every rank: they share the command line), so a line is over the global
  // batches so far, as the epoch's line is; rank 0 writes it.
  FitHooks StepHooks(const FitConfig& fit, int every, KVStore& kv) {
    if (every <= 0 || !enabled_) return {};
    FitHooks hooks;
    hooks.train_metric = std::shared_ptr<EvalMetric>(CreateMetric(fit.metrics, fit.ignore_label));
    std::shared_ptr<EvalMetric> summed(CreateMetric(fit.metrics, fit.ignore_label));
    hooks.on_batch_end = [this, every, &kv, metric = hooks.train_metric, summed](int epoch,
                                                                                 int64_t nbatch) {
      if ((nbatch + 1) % every != 0) return;
      std::vector<double> state = metric->State();
      kv.SumAcrossWorkers(state);
      if (!file_.is_open()) return;
      summed->SetState(state);
      file_ << nlohmann::json{{"epoch", epoch},
                              {"batch", nbatch + 1},
                              {"train", ToJson(summed->Get())},
                              {"scope", "all workers"}}
                   .dump()
            << "\n"
            << std::flush;
    };
    return hooks;
  }

 private:
  bool enabled_ = false;  // --metrics-out was given (rank 0 writes it)
  std::ofstream file_;
};

int Train(const TrainArgs& a) {
  const YAML::Node root = LoadConfig(a.config, a.sets);
  RunConfig config = ParseRunConfig(root);
  if (!a.eval_only) CheckEpochsLeft(config.fit);  // before any data is read
  if (config.threads > 0) SetNumThreads(config.threads);
  std::shared_ptr<KVStore> kv = KVStore::Create(config.kvstore);
  const int rank = kv->rank(), workers = kv->num_workers();
  SetLogLevel(rank == 0 ? config.log_level : "warn");
  if (config.gradient_compression != "none" &&  // Note [Gradient compression]
      !kv->SetGradientCompression(*GradientCompressionWire(config.gradient_compression))) {
    Log().warn(
        "gradient_compression {}: one worker, no gradient crosses a wire: nothing to "
        "compress",
        config.gradient_compression);
  }
  if (const Launched launched = LaunchedAs(); workers == 1 && launched.size > 1) {
    Log().warn("cohort-train: launched as rank {} of {}, but kvstore '{}' does not join the "
               "other processes: each trains alone (set kvstore: mpi to train together)",
               launched.rank, launched.size, config.kvstore);
  }
  const int64_t batch = BatchPerWorker(config, workers);
  DataIters data = MakeDataIters(config, batch, rank, workers);
  // The schedule counts updates: one per `accumulate` batches (Note [Gradient accumulation]).
  const int64_t batches_per_epoch = (data.train_samples + batch - 1) / batch;
  ResolveScheduleInEpochs((batches_per_epoch + config.fit.accumulate - 1) / config.fit.accumulate,
                          &config);
  // Workers may drive different devices (mpirun's contexts may set them apart): this one's.
  Log().info(
      "cohort-train: {} worker(s), devices {} on rank {}, global batch {}, kvstore {}, {} "
      "kernel thread(s) a worker",
      workers, config.devices_spec, rank, config.batch_size, config.kvstore, Env().num_threads);
  MetricsLog metrics(a, rank);
  if (a.eval_only) return Evaluate(config, data, *kv, metrics.file());
  if (rank == 0 && !config.fit.checkpoint_prefix.empty()) {  // rank 0 writes checkpoints
    PrepareWritableFolder(config.fit.checkpoint_prefix, "key 'checkpoint.prefix'");
  }
  if (!a.timeline.empty()) PrepareWritableFolder(TimelinePath(a.timeline, rank), "--timeline");
  config.fit.profile = a.profile;
  // A worker with fewer batches would leave the others waiting (Note [Agreement]).
  config.fit.must_agree.push_back({"training samples per worker", std::to_string(data.train_samples)});
  // Until its first step, a job fails on its input: the network, the settings, the data and the
  // checkpoint to resume do not fit together (shapes, labels, parameter names): exit 2, as a
  // bad setting. A failure once training runs is 1.
  std::unique_ptr<Trainer> trainer_ptr;
  try {
    trainer_ptr = std::make_unique<Trainer>(config.symbol, config.devices, config.work_load, kv);
    if (!a.timeline.empty()) timeline::Start(rank);
    trainer_ptr->Fit(
        *data.train, data.val.get(), config.fit,
        [&](const EpochResult& r) { metrics.Epoch(r, config.fit.count_tokens); },
        metrics.StepHooks(config.fit, a.metrics_every, *kv));
  } catch (const Error& e) {
    const bool typed = dynamic_cast<const ConfigError*>(&e) || dynamic_cast<const DataError*>(&e) ||
                       dynamic_cast<const OutOfMemoryError*>(&e) ||
                       dynamic_cast<const AgreedError*>(&e) ||
                       dynamic_cast<const DeviceError*>(&e);  // a GPU fault: no setting of theirs
    if (typed || (trainer_ptr && trainer_ptr->training_started())) throw;
    throw ConfigError(e.message(), e.file(), e.line());
  }
  Trainer& trainer = *trainer_ptr;
  if (a.profile && rank == 0) PrintProfile(trainer.profile());
  if (!a.timeline.empty()) timeline::Write(TimelinePath(a.timeline, rank));
  if (trainer.skipped_steps() > 0) {
    Log().warn("{} step(s) skipped for non-finite gradients", trainer.skipped_steps());
  }
  // Note [Stop on a signal]: every worker stopped at the same step; the shell's convention.
  if (trainer.stopped_by_signal() != 0) return 128 + trainer.stopped_by_signal();
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Train a network data-parallel from a YAML configuration"};
  cohort::TrainArgs a;
  app.add_option("--config", a.config, "YAML configuration file");
  bool help_config = false;
  app.add_flag("--help-config", help_config,
               "list every configuration key: key, type, default and doc, tab-separated");
  app.add_option("--set", a.sets, "override a key: key.sub=value (repeatable)");
  app.add_option("--metrics-out", a.metrics_out, "append one JSON line per epoch to this file");
  app.add_option("--metrics-every", a.metrics_every,
                 "also a JSON line every this many steps: rank 0's running training metrics")
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--profile", a.profile, "print where a training step's time goes (phases, ops)");
  app.add_option("--timeline", a.timeline,
                 "write a Chrome trace of every step (rank r > 0: FILE.rankR.json)");
  app.add_flag("--eval-only", a.eval_only,
               "evaluate the checkpoint resume_epoch names (auto: the latest) on the validation "
               "data, without training");
  if (const std::optional<int> stop = cohort::ParseCommandLine(app, argc, argv)) return *stop;
  if (help_config) {
    std::fputs(cohort::ConfigHelp().c_str(), stdout);
    return 0;
  }
  if (a.config.empty()) {
    std::fputs("--config is required\nRun with --help for more information.\n", stderr);
    return 2;
  }
  // Bad input (config or data) is 2, anything else 1; in an MPI job the failing rank names
  // itself and ends the whole job (Note [No hang]).
  auto fail = [](int code, const std::string& message) {
    int rank = cohort::DistributedRank();
    // Before MPI is up (a config error), the launcher's environment says which rank this is.
    if (const cohort::Launched launched = cohort::LaunchedAs(); rank < 0 && launched.size > 1) {
      rank = launched.rank;
    }
    const std::string where = rank >= 0 ? "rank " + std::to_string(rank) + ": " : "";
    std::fprintf(stderr, "cohort-train: %s%s\n", where.c_str(), message.c_str());
    cohort::AbortDistributedJob(code);
    return code;
  };
  cohort::InstallStopSignalHandlers();
  try {
    return cohort::Train(a);
  } catch (const cohort::AgreedError& e) {
    // Every worker met it at the same step: one message, and the workers exit together.
    if (cohort::DistributedRank() <= 0) std::fprintf(stderr, "cohort-train: %s\n", e.message().c_str());
    return 1;
  } catch (const cohort::ConfigError& e) {
    return fail(2, e.message());
  } catch (const cohort::DataError& e) {
    return fail(2, e.message());
  } catch (const cohort::OutOfMemoryError& e) {  // a batch or input too large: a setting
    return fail(2, e.message());
  } catch (const std::bad_alloc&) {
    return fail(1, "out of memory (an allocation failed)");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
}
