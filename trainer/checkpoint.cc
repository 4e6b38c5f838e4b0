// Checkpoint files.
#include "trainer/checkpoint.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

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
  if (optimizer) optimizer->SaveStates(CheckpointStatesPath(prefix, epoch));
  SaveParams(CheckpointParamsPath(prefix, epoch), all);
}

int RemoveStaleCheckpointTemporaries(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path base(prefix);
  const fs::path dir = base.has_parent_path() ? base.parent_path() : fs::path(".");
  const std::string stem = base.filename().string() + "-";
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const size_t tmp = name.rfind(".tmp.");
    if (name.rfind(stem, 0) != 0 || tmp == std::string::npos) continue;
    const std::string pid_text = name.substr(tmp + 5);
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
    if (pid != static_cast<long>(::getpid()) && ::kill(static_cast<pid_t>(pid), 0) != 0 &&
        errno == ESRCH && fs::remove(entry.path(), ec)) {
      ++removed;
    }
  }
  return removed;
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
