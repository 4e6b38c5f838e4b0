// Checkpoint files.
#include "trainer/checkpoint.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "ndarray/params_io.h"
#include "trainer/loss_scaler.h"

namespace cohort {
namespace {

// PREFIX-NNNN.EXT, or PREFIX-NNNN-BBBBBBBB.EXT mid-epoch (Note [Checkpoint positions]).
std::string CheckpointFile(const std::string& prefix, CheckpointPosition at, const char* ext) {
  char suffix[64];
  if (at.batch == 0) {
    std::snprintf(suffix, sizeof(suffix), "-%04d.%s", at.epoch, ext);
  } else {
    std::snprintf(suffix, sizeof(suffix), "-%04d-%08lld.%s", at.epoch,
                  static_cast<long long>(at.batch), ext);
  }
  return prefix + suffix;
}

// The position named by a file of PREFIX's checkpoints ("-NNNN.params" or "-NNNN-BBBBBBBB.params"
// after the prefix's file name), or none.
std::optional<CheckpointPosition> ParsePosition(const std::string& name, const std::string& stem,
                                                const std::string& extension) {
  if (!name.starts_with(stem) || !name.ends_with(extension)) return std::nullopt;
  const std::string middle = name.substr(stem.size(), name.size() - stem.size() - extension.size());
  auto digits = [](const std::string& s, size_t n) {
    return s.size() >= n && s.find_first_not_of("0123456789") == std::string::npos;
  };
  const size_t dash = middle.find('-');
  const std::string epoch = middle.substr(0, dash);
  if (!digits(epoch, 4) || epoch.size() > 9) return std::nullopt;
  CheckpointPosition at{.epoch = std::stoi(epoch)};
  if (dash != std::string::npos) {
    const std::string batch = middle.substr(dash + 1);
    if (!digits(batch, 8) || batch.size() > 18) return std::nullopt;
    at.batch = std::stoll(batch);
    if (at.batch == 0) return std::nullopt;
  }
  return at;
}

std::filesystem::path DirectoryOf(const std::string& prefix) {
  const std::filesystem::path base(prefix);
  return base.has_parent_path() ? base.parent_path() : std::filesystem::path(".");
}

std::string StemOf(const std::string& prefix) {
  return std::filesystem::path(prefix).filename().string() + "-";
}

}  // namespace

std::string CheckpointParamsPath(const std::string& prefix, int epoch) {
  return CheckpointFile(prefix, {epoch, 0}, "params");
}

std::string CheckpointStatesPath(const std::string& prefix, int epoch) {
  return CheckpointFile(prefix, {epoch, 0}, "states");
}

std::string CheckpointParamsPath(const std::string& prefix, CheckpointPosition at) {
  return CheckpointFile(prefix, at, "params");
}

std::string CheckpointStatesPath(const std::string& prefix, CheckpointPosition at) {
  return CheckpointFile(prefix, at, "states");
}

std::optional<CheckpointPosition> LatestCheckpoint(const std::string& prefix) {
  std::optional<CheckpointPosition> latest;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(DirectoryOf(prefix), ec)) {
    const auto at = ParsePosition(entry.path().filename().string(), StemOf(prefix), ".params");
    if (at && (!latest || *at > *latest)) latest = at;
  }
  return latest;
}

int RemoveOlderStepCheckpoints(const std::string& prefix, CheckpointPosition at) {
  std::error_code ec;
  std::vector<CheckpointPosition> older;
  for (const auto& entry : std::filesystem::directory_iterator(DirectoryOf(prefix), ec)) {
    const auto p = ParsePosition(entry.path().filename().string(), StemOf(prefix), ".params");
    if (p && p->batch > 0 && *p < at) older.push_back(*p);
  }
  for (const CheckpointPosition& p : older) {  // params first: a pair never looks complete half-gone
    std::filesystem::remove(CheckpointParamsPath(prefix, p), ec);
    std::filesystem::remove(CheckpointStatesPath(prefix, p), ec);
  }
  return static_cast<int>(older.size());
}

void SaveArgAuxParams(const std::string& path, const std::map<std::string, NDArray>& arg_params,
                      const std::map<std::string, NDArray>& aux_params) {
  std::map<std::string, NDArray> all;
  for (const auto& [name, array] : arg_params) all["arg:" + name] = array;
  for (const auto& [name, array] : aux_params) all["aux:" + name] = array;
  SaveParams(path, all);
}

void SaveCheckpoint(const std::string& prefix, CheckpointPosition at, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params,
                    const std::map<std::string, NDArray>& aux_params, const Optimizer* optimizer,
                    const std::map<std::string, int64_t>& entries) {
  symbol.Save(prefix + "-symbol.json");
  if (optimizer) optimizer->SaveStates(CheckpointStatesPath(prefix, at), entries);
  SaveArgAuxParams(CheckpointParamsPath(prefix, at), arg_params, aux_params);
  RemoveOlderStepCheckpoints(prefix, at);
}

std::map<std::string, int64_t> CheckpointEntries(const std::string& prefix, CheckpointPosition at) {
  const std::string path = CheckpointStatesPath(prefix, at);
  if (!std::filesystem::exists(path)) return {};
  const ParamsFile states = LoadParamsFile(path);
  static const std::set<std::string> known = {"checkpoint:global_batch", LossScaler::kLog2Entry,
                                              LossScaler::kCleanEntry};
  std::map<std::string, int64_t> entries;
  for (size_t i = 0; i < states.names.size() && i < states.arrays.size(); ++i) {
    const std::string& name = states.names[i];
    if (name.rfind("checkpoint:", 0) != 0) continue;  // the optimizer's (Optimizer::LoadStates)
    if (!known.count(name)) {
      throw DataError("'" + path + "': '" + name +
                          "' is no entry of a checkpoint (checkpoint:global_batch, "
                          "checkpoint:loss_scale_log2 and checkpoint:loss_scale_clean are)",
                      __FILE__, __LINE__);
    }
    const NDArray& value = states.arrays[i];
    if (value.is_none() || value.shape() != Shape{1} || value.dtype() != DType::kInt64 ||
        entries.count(name)) {
      throw DataError("'" + path + "': " + name + " is not one int64 given once", __FILE__,
                      __LINE__);
    }
    entries[name] = value.ToVector<int64_t>()[0];
  }
  if (const auto batch = entries.find("checkpoint:global_batch");
      batch != entries.end() && batch->second <= 0) {
    throw DataError("'" + path + "': checkpoint:global_batch is not one int64 of at least 1",
                    __FILE__, __LINE__);
  }
  return entries;
}

std::optional<int64_t> CheckpointGlobalBatch(const std::string& prefix, CheckpointPosition at) {
  const std::map<std::string, int64_t> entries = CheckpointEntries(prefix, at);
  const auto batch = entries.find("checkpoint:global_batch");
  if (batch == entries.end()) return std::nullopt;
  return batch->second;
}

int RemoveStaleCheckpointTemporaries(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path dir = DirectoryOf(prefix);
  const std::string stem = StemOf(prefix);
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

void LoadCheckpointParams(const std::string& prefix, CheckpointPosition at,
                          std::map<std::string, NDArray>* arg_params,
                          std::map<std::string, NDArray>* aux_params) {
  const std::string path = CheckpointParamsPath(prefix, at);
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
