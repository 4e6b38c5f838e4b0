// Checkpoints in MXNet's layout: PREFIX-symbol.json, PREFIX-NNNN.params ("arg:" and "aux:"
// names) and PREFIX-NNNN.states (optimizer), each written atomically.
#pragma once

#include <map>
#include <string>

#include "optimizer/optimizer.h"
#include "symbol/symbol.h"

namespace cohort {

std::string CheckpointParamsPath(const std::string& prefix, int epoch);
std::string CheckpointStatesPath(const std::string& prefix, int epoch);

// Writes the symbol, (when given) the optimizer's states, then the parameters: each file appears
// whole or not at all, and PREFIX-NNNN.params last, so its presence marks a complete checkpoint
// (a run killed between the two writes leaves states without params, never params without
// states).
void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params,
                    const std::map<std::string, NDArray>& aux_params,
                    const Optimizer* optimizer = nullptr);

// Removes the temporary files (NAME.tmp.PID) that a writer of PREFIX's checkpoint files left when
// it was killed; files of a process that still runs are left alone. Returns how many went.
int RemoveStaleCheckpointTemporaries(const std::string& prefix);

// Reads PREFIX-NNNN.params into argument and auxiliary parameters; errors name the file.
void LoadCheckpointParams(const std::string& prefix, int epoch,
                          std::map<std::string, NDArray>* arg_params,
                          std::map<std::string, NDArray>* aux_params);

// Reads any .params file MXNet or Cohort wrote into argument and auxiliary parameters: names
// prefixed "arg:"/"aux:" (checkpoints, Module.save_params), unprefixed names (Gluon's
// save_parameters) as arguments. Errors name the file.
void LoadArgAuxParams(const std::string& path, std::map<std::string, NDArray>* arg_params,
                      std::map<std::string, NDArray>* aux_params);

}  // namespace cohort
