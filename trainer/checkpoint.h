// Checkpoints in MXNet's layout: PREFIX-symbol.json, PREFIX-NNNN.params ("arg:" and "aux:"
// names) and PREFIX-NNNN.states (optimizer), each written atomically.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "optimizer/optimizer.h"
#include "symbol/symbol.h"

namespace cohort {

// Note [Checkpoint positions]
// A checkpoint holds the training state after `epoch` complete epochs and `batch` batches of the
// next. Epoch checkpoints (batch 0) keep MXNet's names, PREFIX-NNNN.params/.states;
// mid-epoch ones (checkpoint.every_steps, a stop on a signal) are PREFIX-NNNN-BBBBBBBB.params/
// .states. Resuming replays the data order up to the position (each epoch's Reset, then the
// batches skipped) and keys every random stream by (seed, epoch, batch), so a resumed run
// continues exactly as an uninterrupted one. Only the latest mid-epoch checkpoint is kept: a
// newer checkpoint of either kind removes the older mid-epoch ones once it is complete.
// A position counts batches of one size: the .states file records the global batch (samples a
// step over every worker) as "checkpoint:global_batch", and a mid-epoch resume with another one
// is refused, as is one whose epoch has fewer batches than the position (the data changed).
// An epoch checkpoint may resume with another batch size, as in MXNet.
struct CheckpointPosition {
  int epoch = 0;
  int64_t batch = 0;
  auto operator<=>(const CheckpointPosition&) const = default;
};

std::string CheckpointParamsPath(const std::string& prefix, int epoch);
std::string CheckpointStatesPath(const std::string& prefix, int epoch);
std::string CheckpointParamsPath(const std::string& prefix, CheckpointPosition at);
std::string CheckpointStatesPath(const std::string& prefix, CheckpointPosition at);

// The latest complete checkpoint beside PREFIX (its .params file exists), or none.
std::optional<CheckpointPosition> LatestCheckpoint(const std::string& prefix);
// Removes PREFIX's mid-epoch checkpoints older than `at`; returns how many pairs went.
int RemoveOlderStepCheckpoints(const std::string& prefix, CheckpointPosition at);

// Writes the symbol, (when given) the optimizer's states, then the parameters: each file appears
// whole or not at all, and PREFIX-NNNN.params last, so its presence marks a complete checkpoint
// (a run killed between the two writes leaves states without params, never params without
// states).
// `entries` ("checkpoint:NAME" whole numbers: the global batch, the loss scale) go into the
// states beside the optimizer's.
void SaveCheckpoint(const std::string& prefix, CheckpointPosition at, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params,
                    const std::map<std::string, NDArray>& aux_params,
                    const Optimizer* optimizer = nullptr,
                    const std::map<std::string, int64_t>& entries = {});

// The checkpoint:... entries of PREFIX's .states file at `at` (none without the file):
// checkpoint:global_batch (the samples a step over every worker; files of Cohort before it did
// record none) and the loss scale's (Note [Loss scaling]). Throws DataError naming the file for
// another name, a value that is not one int64, or a global batch below 1.
std::map<std::string, int64_t> CheckpointEntries(const std::string& prefix, CheckpointPosition at);
// Its checkpoint:global_batch, when recorded.
std::optional<int64_t> CheckpointGlobalBatch(const std::string& prefix, CheckpointPosition at);

// Removes the temporary files (NAME.tmp.PID) that a writer of PREFIX's checkpoint files left when
// it was killed; files of a process that still runs are left alone. Returns how many went.
int RemoveStaleCheckpointTemporaries(const std::string& prefix);

// Reads PREFIX-NNNN.params into argument and auxiliary parameters; errors name the file.
void LoadCheckpointParams(const std::string& prefix, CheckpointPosition at,
                          std::map<std::string, NDArray>* arg_params,
                          std::map<std::string, NDArray>* aux_params);

// Reads any .params file MXNet or Cohort wrote into argument and auxiliary parameters: names
// prefixed "arg:"/"aux:" (checkpoints, Module.save_params), unprefixed names (Gluon's
// save_parameters) as arguments. Errors name the file.
// Writes arg_params and aux_params as one .params file under MXNet's arg:/aux: names, atomically.
void SaveArgAuxParams(const std::string& path, const std::map<std::string, NDArray>& arg_params,
                      const std::map<std::string, NDArray>& aux_params);
void LoadArgAuxParams(const std::string& path, std::map<std::string, NDArray>* arg_params,
                      std::map<std::string, NDArray>* aux_params);

}  // namespace cohort
