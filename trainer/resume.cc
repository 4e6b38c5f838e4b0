// Resume planning (trainer/resume.h).
#include "trainer/resume.h"

#include <filesystem>
#include <string>

#include "base/error.h"
#include "base/logging.h"
#include "trainer/checkpoint.h"

namespace cohort {
namespace {

// What a refused mid-epoch resume may do instead: resume from the latest epoch checkpoint at
// or before `epoch` that exists (checkpoint.period may have skipped some), or start afresh.
std::string EarlierEpochCheckpoint(const std::string& prefix, int epoch) {
  for (int e = epoch; e > 0; --e) {
    if (std::filesystem::exists(CheckpointParamsPath(prefix, e))) {
      return "resume from '" + CheckpointParamsPath(prefix, e) +
             "' (resume_epoch: " + std::to_string(e) + ")";
    }
  }
  return "start afresh (no epoch checkpoint precedes it)";
}

}  // namespace

void ResolveResume(FitConfig* config) {
  if (!config->resume_latest) return;
  COHORT_CHECK(!config->checkpoint_prefix.empty())
      << "resuming the latest checkpoint needs a prefix";
  const std::optional<CheckpointPosition> latest = LatestCheckpoint(config->checkpoint_prefix);
  if (!latest) {
    Log().info("No checkpoint beside \"{}\": starting fresh", config->checkpoint_prefix);
    return;
  }
  config->begin_epoch = latest->epoch;
  config->begin_batch = latest->batch;
  Log().info("Resuming from \"{}\"", CheckpointParamsPath(config->checkpoint_prefix, *latest));
}

void CheckEpochsLeft(const FitConfig& config) {
  if (config.begin_epoch < config.epochs) return;
  throw ConfigError("resume_epoch: training would begin at epoch " +
                        std::to_string(config.begin_epoch) + " of " +
                        std::to_string(config.epochs) + ": nothing to train (raise 'epochs')",
                    __FILE__, __LINE__);
}

void CheckResumedBatching(const FitConfig& config, int64_t global_batch, int num_workers) {
  const CheckpointPosition at{config.begin_epoch, config.begin_batch};
  if (at == CheckpointPosition{}) return;  // a fresh start
  const std::optional<int64_t> saved = CheckpointGlobalBatch(config.checkpoint_prefix, at);
  if (config.begin_batch == 0) return;  // an epoch checkpoint: any batch size goes on from it
  if (!saved || *saved == global_batch) return;
  throw ConfigError("'" + CheckpointStatesPath(config.checkpoint_prefix, at) +
                        "' is a mid-epoch checkpoint after " + std::to_string(config.begin_batch) +
                        " batches of " + std::to_string(*saved) +
                        " samples (over every worker); this run's batches hold " +
                        std::to_string(global_batch) + " (batch_size " +
                        std::to_string(global_batch / num_workers) + " x " +
                        std::to_string(num_workers) + " worker(s)): set them back, or " +
                        EarlierEpochCheckpoint(config.checkpoint_prefix, config.begin_epoch),
                    __FILE__, __LINE__);
}

int64_t SkipDoneBatches(DataIter& train, const FitConfig& config, int epoch) {
  if (epoch != config.begin_epoch) return 0;
  int64_t batches = 0;
  while (batches < config.begin_batch && train.Next()) ++batches;
  if (batches < config.begin_batch) {
    throw ConfigError(
        "'" + CheckpointParamsPath(config.checkpoint_prefix, {epoch, config.begin_batch}) +
            "' is a checkpoint after " + std::to_string(config.begin_batch) + " batches of epoch " +
            std::to_string(epoch) + ", which now has only " + std::to_string(batches) +
            ": the data or its batching changed since; " +
            EarlierEpochCheckpoint(config.checkpoint_prefix, epoch),
        __FILE__, __LINE__);
  }
  return batches;
}

}  // namespace cohort
