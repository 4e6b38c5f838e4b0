// Resume planning: where a run begins (Note [Checkpoint positions]) and whether the checkpoint
// it begins from fits this run's batching.
#pragma once

#include <cstdint>

#include "io/data_iter.h"
#include "trainer/fit_config.h"

namespace cohort {

// resume_latest: begin at the latest complete checkpoint beside the prefix (none: from scratch).
void ResolveResume(FitConfig* config);

// Throws a ConfigError unless the run has epochs left to train.
void CheckEpochsLeft(const FitConfig& config);

// A mid-epoch resume must count batches as the checkpoint did: the same global batch
// (samples over every worker). An epoch checkpoint goes on with any.
void CheckResumedBatching(const FitConfig& config, int64_t global_batch, int num_workers);

// At the first epoch of a mid-epoch resume, skips the batches the checkpoint had done; returns
// how many were skipped (0 elsewhere). Data that gives fewer is an error naming the checkpoint.
int64_t SkipDoneBatches(DataIter& train, const FitConfig& config, int epoch);

}  // namespace cohort
