// Checkpoint files.
#include "trainer/checkpoint.h"

#include <cstdio>

#include "ndarray/params_io.h"

namespace cohort {

std::string CheckpointParamsPath(const std::string& prefix, int epoch) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.params", epoch);
  return prefix + suffix;
}

std::string CheckpointStatesPath(const std::string& prefix, int epoch) {
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "-%04d.states", epoch);
  return prefix + suffix;
}

void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params,
                    const std::map<std::string, NDArray>& aux_params, const Optimizer* optimizer) {
  symbol.Save(prefix + "-symbol.json");
  std::map<std::string, NDArray> all;
  for (const auto& [name, array] : arg_params) all["arg:" + name] = array;
  for (const auto& [name, array] : aux_params) all["aux:" + name] = array;
  SaveParams(CheckpointParamsPath(prefix, epoch), all);
  if (optimizer) optimizer->SaveStates(CheckpointStatesPath(prefix, epoch));
}

void LoadCheckpointParams(const std::string& prefix, int epoch,
                          std::map<std::string, NDArray>* arg_params,
                          std::map<std::string, NDArray>* aux_params) {
  const std::string path = CheckpointParamsPath(prefix, epoch);
  for (const auto& [name, array] : LoadParams(path)) {
    if (name.rfind("arg:", 0) == 0) {
      (*arg_params)[name.substr(4)] = array;
    } else if (name.rfind("aux:", 0) == 0) {
      (*aux_params)[name.substr(4)] = array;
    } else {
      COHORT_THROW() << "'" << path << "': array '" << name
                     << "' is neither arg: nor aux: (not a checkpoint?)";
    }
  }
}

void LoadArgAuxParams(const std::string& path, std::map<std::string, NDArray>* arg_params,
                      std::map<std::string, NDArray>* aux_params) {
  for (const auto& [name, array] : LoadParams(path)) {
    if (name.rfind("aux:", 0) == 0) {
      (*aux_params)[name.substr(4)] = array;
    } else {
      (*arg_params)[name.rfind("arg:", 0) == 0 ? name.substr(4) : name] = array;
    }
  }
}

}  // namespace cohort
