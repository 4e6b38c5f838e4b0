// Run configuration: loading, overrides, checking and interpretation.
#include "apps/train_config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "base/env.h"
#include "base/logging.h"
#include "ndarray/device_api.h"
#include "symbol/models/models.h"
#include "trainer/checkpoint.h"

namespace cohort {
namespace {

// "gpu:local" is the GPU of this rank's index among the ranks on its host (one process per GPU
// under mpirun, as Horovod's local_rank), read from Open MPI's or MPICH's environment.
std::string ResolveLocalGpu(const std::string& devices) {
  if (devices != "gpu:local") return devices;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}) {
    if (const char* v = std::getenv(name); v && *v) return std::string("gpu:") + v;
  }
  return "gpu:0";
}

// Every key a configuration may hold, with its type.
const char* kSchema = R"(
model: {name: string, symbol: path, num_classes: int, n_layer: int, n_head: int,
        d_model: int, seq_len: int, vocab: int, dropout: float, tie_weights: bool,
        multiplier: float, resolution: int, params: path, reinit: strings,
        fixed_params: strings, allow_missing: bool}
batch_size: int
devices: string
work_load: floats
kvstore: string
update_on_kvstore: bool
optimizer: {name: string, lr: float, momentum: float, wd: float, clip_gradient: float,
            rescale_grad: float, beta1: float, beta2: float, epsilon: float, gamma1: float,
            gamma2: float, centered: bool, clip_weights: float, wd_lh: float, lamda1: float,
            beta: float, rho: float, lower_bound: float, upper_bound: float,
            bias_correction: bool}
lr_schedule: {name: string, step_epochs: float, factor: float, steps_epochs: floats,
              warmup_epochs: float, warmup_begin_lr: float, final_lr: float, pwr: float,
              stop_factor_lr: float, max_epochs: float}
initializer: {name: string, magnitude: float, rnd_type: string, factor_type: string,
              scale: float, sigma: float, slope: float, value: float}
metrics: strings
epochs: int
seed: int
checkpoint: {prefix: string, period: int, every_steps: int}
resume_epoch: int_or_auto
on_nonfinite: string
threads: int
log_every: int
log_level: string
)";

[[noreturn]] void Fail(const std::string& message) {
  throw ConfigError("config: " + message, __FILE__, __LINE__);
}

template <typename T>
bool Converts(const YAML::Node& n) {
  try {
    n.as<T>();
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

bool Fits(const YAML::Node& n, const std::string& type) {
  if (type == "int") return n.IsScalar() && Converts<int64_t>(n);
  if (type == "int_or_auto") return n.IsScalar() && (Converts<int64_t>(n) || n.Scalar() == "auto");
  if (type == "float") return n.IsScalar() && Converts<double>(n);
  if (type == "bool") return n.IsScalar() && Converts<bool>(n);
  if (type == "string" || type == "path") return n.IsScalar();
  const std::string element = type == "ints" ? "int" : type == "floats" ? "float" : "string";
  if (!n.IsSequence()) return false;
  for (const auto& e : n) {
    if (!Fits(e, element)) return false;
  }
  return true;
}

const char* Describe(const std::string& type) {
  if (type == "int") return "an integer";
  if (type == "int_or_auto") return "an integer or auto";
  if (type == "float") return "a number";
  if (type == "bool") return "true or false";
  if (type == "string") return "a string";
  if (type == "path") return "a file path";
  if (type == "paths") return "a list of file paths";
  if (type == "ints") return "a list of integers";
  if (type == "floats") return "a list of numbers";
  return "a list of strings";
}

// Edits (insertions, deletions, substitutions, swaps of neighbours) from a to b.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// Every key of the schema as a dotted path.
void SchemaPaths(const YAML::Node& schema, const std::string& path, std::vector<std::string>* out) {
  for (const auto& item : schema) {
    const std::string key = item.first.as<std::string>();
    const std::string where = path.empty() ? key : path + "." + key;
    out->push_back(where);
    if (item.second.IsMap()) SchemaPaths(item.second, where, out);
  }
}

// "unknown key 'optimzer' (did you mean 'optimizer'?)": the closest key at that level (a typo),
// else one of that name elsewhere ('lr' for 'optimizer.lr'), else the keys the level takes.
[[noreturn]] void FailUnknownKey(const std::string& where, const std::string& key,
                                 const YAML::Node& level, const YAML::Node& schema) {
  std::string best, names;
  size_t best_distance = std::max<size_t>(1, key.size() / 3) + 1;
  for (const auto& item : level) {
    const std::string candidate = item.first.as<std::string>();
    names += (names.empty() ? "" : ", ") + candidate;
    const size_t d = EditDistance(key, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  const std::string prefix = where.substr(0, where.size() - key.size());
  if (!best.empty()) Fail("unknown key '" + where + "' (did you mean '" + prefix + best + "'?)");
  std::vector<std::string> paths;
  SchemaPaths(schema, "", &paths);
  for (const std::string& p : paths) {
    if (p.size() > key.size() && p.ends_with("." + key)) {
      Fail("unknown key '" + where + "' (did you mean '" + p + "'?)");
    }
  }
  Fail("unknown key '" + where + "'; " +
       (prefix.empty() ? "the top level" : "'" + prefix.substr(0, prefix.size() - 1) + "'") +
       " takes: " + names);
}

void Check(const YAML::Node& node, const YAML::Node& schema, const std::string& path,
           const YAML::Node& whole) {
  if (node.IsNull()) return;
  if (!node.IsMap()) Fail("'" + path + "' must be a map of keys");
  for (const auto& item : node) {
    const std::string key = item.first.as<std::string>();
    const std::string where = path.empty() ? key : path + "." + key;
    const YAML::Node expected = schema[key];
    if (!expected) FailUnknownKey(where, key, schema, whole);
    if (expected.IsMap()) {
      Check(item.second, expected, where, whole);
    } else if (!Fits(item.second, expected.as<std::string>())) {
      std::ostringstream got;
      got << item.second;
      Fail("key '" + where + "': expected " + Describe(expected.as<std::string>()) + ", got '" +
           got.str() + "'");
    }
  }
}

// The value at a dotted path, or fallback when absent. (Node::reset rebinds; operator= would
// overwrite the tree.)
template <typename T>
T Get(const YAML::Node& root, const std::string& dotted, T fallback) {
  YAML::Node n;
  n.reset(root);
  std::stringstream parts(dotted);
  std::string part;
  while (std::getline(parts, part, '.')) {
    if (!n.IsMap()) return fallback;
    const YAML::Node& map = n;
    const YAML::Node child = map[part];
    if (!child) return fallback;
    n.reset(child);
  }
  return n.IsNull() ? fallback : n.as<T>();
}

// Text served in buckets pads its short lines with label -1, which the loss and the metrics
// ignore; other data kinds do not read data.buckets (the config warns of it), so their labels
// stay all counted.
bool BucketedText(const YAML::Node& root) {
  return Get<std::string>(root, "data.kind", "mnist") == "text" &&
         !Get<std::vector<int64_t>>(root, "data.buckets", {}).empty();
}

// Integer settings are range-checked before they are narrowed: epochs 4294967297 trained one
// epoch, resume_epoch 2147483648 wrapped to a negative epoch and trained forever.
constexpr int64_t kMaxEpochs = 1'000'000'000;
int64_t InRange(const YAML::Node& root, const std::string& key, int64_t fallback, int64_t lo,
                int64_t hi) {
  const int64_t v = Get<int64_t>(root, key, fallback);
  if (v < lo || v > hi) {
    Fail("key '" + key + "': " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "]");
  }
  return v;
}

void RequireFile(const YAML::Node& root, const std::string& key) {
  const std::string path = Get<std::string>(root, key, "");
  if (path.empty()) Fail("key '" + key + "' is required");
  if (!std::filesystem::exists(path)) Fail("key '" + key + "': file '" + path + "' does not exist");
}

// Model sizes far past any real network's (GPT-3: 96 layers, d_model 12288), so that the
// products the builders form (4 x d_model, d_model x vocab) cannot overflow: d_model 2^62 gave
// a negative num_hidden, n_layer 10^8 built a graph for minutes.
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxWidth = int64_t{1} << 20;
constexpr int64_t kMaxClasses = int64_t{1} << 24;

models::GptOptions GptOptionsOf(const YAML::Node& root) {
  models::GptOptions o;
  o.n_layer = InRange(root, "model.n_layer", o.n_layer, 1, kMaxLayers);
  o.n_head = InRange(root, "model.n_head", o.n_head, 1, kMaxWidth);
  o.d_model = InRange(root, "model.d_model", o.d_model, 1, kMaxWidth);
  o.seq_len = InRange(root, "model.seq_len", o.seq_len, 1, kMaxWidth);
  o.vocab = InRange(root, "model.vocab", o.vocab, 1, kMaxClasses);
  o.dropout = Get<double>(root, "model.dropout", o.dropout);
  o.tie_weights = Get<bool>(root, "model.tie_weights", o.tie_weights);
  if (BucketedText(root)) o.ignore_label = -1.0f;
  return o;
}

// yaml-cpp keeps both entries of a key written twice in one map and reads the first; YAML
// requires unique keys, and a user who writes `epochs` twice means one of them: refused, naming
// both lines.
void RefuseDuplicateKeys(const YAML::Node& node, const std::string& path,
                         const std::string& where) {
  if (node.IsSequence()) {
    for (const auto& item : node) RefuseDuplicateKeys(item, path, where);
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> lines;
  for (const auto& item : node) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : "";
    const std::string full = where.empty() ? key : where + "." + key;
    const int line = item.first.Mark().line + 1;
    if (const auto [it, fresh] = lines.emplace(key, line); !fresh) {
      Fail("'" + path + "': key '" + full + "' appears twice (lines " + std::to_string(it->second) +
           " and " + std::to_string(line) + "): give it once");
    }
    RefuseDuplicateKeys(item.second, path, full);
  }
}

}  // namespace

namespace {

// Note [Paths in a configuration]: input files a configuration file names (schema type path or
// paths) are relative to the file's folder, as docker-compose and dvc read theirs, so a config
// runs from any working directory; --set values and output paths (checkpoint.prefix,
// --metrics-out) stay relative to the working directory, as command-line paths are.
void ResolveInputPaths(const YAML::Node& node, const YAML::Node& schema,
                       const std::filesystem::path& folder) {
  if (!node.IsMap() || !schema.IsMap()) return;
  auto resolve = [&](const std::string& value) {
    if (value.empty() || std::filesystem::path(value).is_absolute()) return value;
    return (folder / value).lexically_normal().string();
  };
  for (auto item : node) {
    if (!item.first.IsScalar()) continue;  // Check refuses it
    const YAML::Node expected = schema[item.first.Scalar()];
    if (!expected) continue;  // Check names it
    if (expected.IsMap()) {
      ResolveInputPaths(item.second, expected, folder);
    } else if (expected.as<std::string>() == "path" && item.second.IsScalar()) {
      item.second = resolve(item.second.Scalar());
    } else if (expected.as<std::string>() == "paths" && item.second.IsSequence()) {
      YAML::Node list = item.second;
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i].IsScalar()) list[i] = resolve(list[i].Scalar());
      }
    }
  }
}

}  // namespace

YAML::Node LoadConfig(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node root;
  if (!std::filesystem::exists(path)) Fail("file '" + path + "' does not exist");
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    Fail("'" + path + "': " + e.what());
  }
  if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  RefuseDuplicateKeys(root, path, "");
  YAML::Node schema = YAML::Load(kSchema);
  schema["data"] = YAML::Load(DataOptionSchema());  // each data kind's keys live in io/
  ResolveInputPaths(root, schema, std::filesystem::absolute(path).parent_path());
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0) Fail("--set '" + o + "': expected key=value");
    YAML::Node value;
    try {
      value = YAML::Load(o.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      Fail("--set '" + o + "': " + e.what());
    }
    std::vector<std::string> keys;
    std::stringstream parts(o.substr(0, eq));
    std::string part;
    while (std::getline(parts, part, '.')) keys.push_back(part);
    YAML::Node node = root;
    for (size_t i = 0; i + 1 < keys.size(); ++i) {
      if (!node[keys[i]] || node[keys[i]].IsNull()) node[keys[i]] = YAML::Node(YAML::NodeType::Map);
      if (!node[keys[i]].IsMap()) Fail("--set '" + o + "': '" + keys[i] + "' is not a map");
      node.reset(node[keys[i]]);
    }
    if (o.size() == eq + 1) {  // `--set key=`: the key unset (its default applies)
      node.remove(keys.back());
    } else {
      node[keys.back()] = value;
    }
  }
  try {
    Check(root, schema, "", schema);
  } catch (const YAML::Exception& e) {  // e.g. a key that is itself a map (found by fuzzing)
    Fail("'" + path + "': " + e.what());
  }
  return root;
}

namespace {

// model: a symbol file, or a built-in network by name.
Symbol ModelOf(const YAML::Node& root) {
  Symbol symbol;
  const int64_t classes = InRange(root, "model.num_classes", 10, 1, kMaxClasses);
  const std::string symbol_path = Get<std::string>(root, "model.symbol", "");
  const std::string model_name = Get<std::string>(root, "model.name", "mlp");
  try {
    if (!symbol_path.empty()) {
      symbol = Symbol::Load(symbol_path);
    } else if (model_name == "gpt") {
      symbol = models::Gpt(GptOptionsOf(root));
    } else if (model_name == "mobilenet") {
      symbol = models::MobileNet({.multiplier = Get<double>(root, "model.multiplier", 1.0),
                                  .resolution = InRange(root, "model.resolution", 224, 1, 1 << 16),
                                  .num_classes = classes});
    } else {
      symbol = models::ByName(model_name, classes);
    }
  } catch (const ConfigError&) {  // a model key out of range, already named
    throw;
  } catch (const Error& e) {
    Fail("model: " + e.message());
  }
  return symbol;
}

// devices, work_load and the kvstore that sums over them.
void ParseDevices(const YAML::Node& root, RunConfig* config) {
  RunConfig& c = *config;
  try {
    c.devices = ParseContexts(ResolveLocalGpu(Get<std::string>(root, "devices", "cpu:0")));
  } catch (const Error& e) {
    Fail("key 'devices': " + e.message());
  }
  c.work_load = Get<std::vector<double>>(root, "work_load", {});
  if (!c.work_load.empty() && c.work_load.size() != c.devices.size()) {
    Fail("key 'work_load' has " + std::to_string(c.work_load.size()) + " entries for " +
         std::to_string(c.devices.size()) + " devices");
  }
  for (double w : c.work_load) {
    if (!std::isfinite(w) || w <= 0) {
      Fail("key 'work_load': " + std::to_string(w) +
           " is not a positive share of the batch (every device needs work)");
    }
  }
  c.kvstore = Get<std::string>(root, "kvstore", "local");
  try {  // the kvstore's own rules: which devices its kind takes, whether this build has it
    CheckKVStoreDevices(c.kvstore, c.devices);
  } catch (const Error& e) {
    Fail("key 'kvstore': " + e.message());
  }
  for (const Context& d : c.devices) {
    if (d.is_gpu() && d.id >= device::Count()) {
      Fail("key 'devices': " + d.ToString() + " does not exist: this process sees " +
           std::to_string(device::Count()) + " GPU(s)" +
           (device::BuiltWithCuda() ? "" : " (this build of Cohort has no CUDA)"));
    }
  }
}

// The run's epochs, resume point, checkpoints, metrics and fine-tuning.
void ParseTraining(const YAML::Node& root, FitConfig* fit) {
  FitConfig& f = *fit;
  f.epochs = static_cast<int>(InRange(root, "epochs", 10, 1, kMaxEpochs));
  // resume_epoch: auto resumes from the latest complete checkpoint, mid-epoch ones included.
  f.resume_latest = Get<std::string>(root, "resume_epoch", "") == "auto";
  if (!f.resume_latest) {
    f.begin_epoch = static_cast<int>(InRange(root, "resume_epoch", 0, 0, kMaxEpochs));
  }
  f.update_on_kvstore = Get<bool>(root, "update_on_kvstore", true);
  f.seed = static_cast<uint64_t>(Get<int64_t>(root, "seed", 0));
  f.log_every = static_cast<int>(InRange(root, "log_every", 100, 0, int64_t{1} << 30));
  f.metrics = Get<std::vector<std::string>>(root, "metrics", {"acc"});
  if (BucketedText(root)) f.ignore_label = -1;
  f.count_tokens = Get<std::string>(root, "data.kind", "mnist") == "text";
  f.checkpoint_prefix = Get<std::string>(root, "checkpoint.prefix", "");
  f.checkpoint_period = static_cast<int>(InRange(root, "checkpoint.period", 1, 1, kMaxEpochs));
  f.checkpoint_every_steps = InRange(root, "checkpoint.every_steps", 0, 0, int64_t{1} << 40);
  f.on_nonfinite = ParseOnNonFinite(Get<std::string>(root, "on_nonfinite", "stop"));
  // Fine-tuning: a parameter file to start from, layers to initialize afresh, frozen parameters.
  if (!Get<std::string>(root, "model.params", "").empty()) {
    RequireFile(root, "model.params");
    try {
      LoadArgAuxParams(Get<std::string>(root, "model.params", ""), &f.arg_params, &f.aux_params);
    } catch (const Error& e) {
      Fail("key 'model.params': " + e.message());
    }
  }
  f.reinit = Get<std::vector<std::string>>(root, "model.reinit", {});
  f.allow_missing = Get<bool>(root, "model.allow_missing", false);
  f.fixed_params = Get<std::vector<std::string>>(root, "model.fixed_params", {});
}

// optimizer and lr_schedule.
void ParseOptimizer(const YAML::Node& root, FitConfig* fit) {
  FitConfig& f = *fit;
  f.optimizer = Get<std::string>(root, "optimizer.name", "sgd");
  OptimizerOptions& o = f.optimizer_options;
  try {  // each optimizer's own settings default to MXNet 1.9.1's for it
    o = OptimizerOptions::DefaultsFor(f.optimizer);
  } catch (const Error& e) {
    Fail("key 'optimizer.name': " + e.message());
  }
  o.lr = Get<double>(root, "optimizer.lr", o.lr);
  o.momentum = Get<double>(root, "optimizer.momentum", o.momentum);
  o.wd = Get<double>(root, "optimizer.wd", o.wd);
  o.clip_gradient = Get<double>(root, "optimizer.clip_gradient", o.clip_gradient);
  if (const double r = Get<double>(root, "optimizer.rescale_grad", 0.0); r != 0.0) {
    f.rescale_grad = r;  // as given, as in MXNet (it used to be divided by the batch again)
  }
  o.beta1 = Get<double>(root, "optimizer.beta1", o.beta1);
  o.beta2 = Get<double>(root, "optimizer.beta2", o.beta2);
  o.epsilon = Get<double>(root, "optimizer.epsilon", o.epsilon);
  o.gamma1 = Get<double>(root, "optimizer.gamma1", o.gamma1);
  o.gamma2 = Get<double>(root, "optimizer.gamma2", o.gamma2);
  o.centered = Get<bool>(root, "optimizer.centered", o.centered);
  o.clip_weights = Get<double>(root, "optimizer.clip_weights", o.clip_weights);
  o.wd_lh = Get<double>(root, "optimizer.wd_lh", o.wd_lh);
  o.lamda1 = Get<double>(root, "optimizer.lamda1", o.lamda1);
  o.beta = Get<double>(root, "optimizer.beta", o.beta);
  o.rho = Get<double>(root, "optimizer.rho", o.rho);
  o.lower_bound = Get<double>(root, "optimizer.lower_bound", o.lower_bound);
  o.upper_bound = Get<double>(root, "optimizer.upper_bound", o.upper_bound);
  o.bias_correction = Get<bool>(root, "optimizer.bias_correction", o.bias_correction);
  f.lr_schedule = Get<std::string>(root, "lr_schedule.name", "constant");
}

void ParseInitializer(const YAML::Node& root, InitializerOptions* init) {
  InitializerOptions& i = *init;
  i.kind = Get<std::string>(root, "initializer.name", "xavier");
  i.magnitude = Get<double>(root, "initializer.magnitude", 3.0);
  i.rnd_type = Get<std::string>(root, "initializer.rnd_type", "uniform");
  i.factor_type = Get<std::string>(root, "initializer.factor_type", "avg");
  i.scale = Get<double>(root, "initializer.scale", 0.07);
  i.sigma = Get<double>(root, "initializer.sigma", 0.01);
  i.slope = Get<double>(root, "initializer.slope", 0.25);
  i.value = Get<double>(root, "initializer.value", 0.0);
}

// Everything that can fail later fails now, naming its key.
void CheckTraining(const FitConfig& f) {
  try {
    Optimizer::Create(f.optimizer, f.optimizer_options);
    LRScheduler::Create(f.lr_schedule, {.step = 1, .steps = {1}, .max_update = 1});
    Initializer check(f.initializer);
    CreateMetric(f.metrics);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    Fail(e.message());
  }
  if ((f.begin_epoch > 0 || f.resume_latest) && f.checkpoint_prefix.empty()) {
    Fail("key 'resume_epoch' needs 'checkpoint.prefix'");
  }
  if (f.checkpoint_every_steps > 0 && f.checkpoint_prefix.empty()) {
    Fail("key 'checkpoint.every_steps' needs 'checkpoint.prefix'");
  }
}

}  // namespace

RunConfig ParseRunConfig(const YAML::Node& root) {
  RunConfig c;
  c.root = root;
  c.symbol = ModelOf(root);
  ParseDevices(root, &c);
  c.batch_size = InRange(root, "batch_size", 128, 1, int64_t{1} << 31);
  c.threads = static_cast<int>(InRange(root, "threads", 0, 0, kMaxThreads));
  c.log_level = Get<std::string>(root, "log_level", Env().log_level);  // COHORT_LOG_LEVEL
  SetLogLevel(c.log_level);  // checked now, before any work (a ConfigError naming log_level)

  ParseTraining(root, &c.fit);
  ParseOptimizer(root, &c.fit);
  ParseInitializer(root, &c.fit.initializer);
  CheckTraining(c.fit);
  CheckDataOptions(DataSection(root), {.seq_len = Get<int64_t>(root, "model.seq_len", 128)});
  return c;
}

Options DataSection(const YAML::Node& root) {
  Options data("data");
  const YAML::Node schema = YAML::Load(DataOptionSchema());
  const YAML::Node section = root["data"];
  if (!section || !section.IsMap()) return data;
  for (const auto& item : section) {
    const std::string key = item.first.as<std::string>();
    const std::string type = schema[key].as<std::string>();  // the keys were checked
    const YAML::Node& v = item.second;
    if (v.IsNull()) continue;
    if (type == "int") {
      data.Set(key, v.as<int64_t>());
    } else if (type == "float") {
      data.Set(key, v.as<double>());
    } else if (type == "bool") {
      data.Set(key, v.as<bool>());
    } else if (type == "string" || type == "path") {
      data.Set(key, v.as<std::string>());
    } else if (type == "ints") {
      data.Set(key, v.as<std::vector<int64_t>>());
    } else if (type == "floats") {
      data.Set(key, v.as<std::vector<double>>());
    } else {
      data.Set(key, v.as<std::vector<std::string>>());
    }
  }
  return data;
}

DataIters MakeDataIters(const YAML::Node& root, int64_t batch_per_worker, int rank,
                        int num_workers, uint64_t seed) {
  // A model over text bytes refuses a byte its vocabulary lacks when the text is read.
  const bool gpt = Get<std::string>(root, "model.name", "") == "gpt";
  return MakeDataIters(DataSection(root), {.batch_per_worker = batch_per_worker,
                                           .rank = rank,
                                           .num_workers = num_workers,
                                           .seed = seed,
                                           .seq_len = Get<int64_t>(root, "model.seq_len", 128),
                                           .vocab = gpt ? GptOptionsOf(root).vocab : 0});
}

void ResolveScheduleInEpochs(const YAML::Node& root, int64_t batches_per_epoch, FitConfig* fit) {
  auto updates = [&](double epochs) {
    return static_cast<int64_t>(std::llround(epochs * static_cast<double>(batches_per_epoch)));
  };
  // Spans of epochs: step_epochs 0 or below decayed the rate at every update.
  auto checked = [&](const std::string& key, double e, bool zero_allowed) {
    if (!std::isfinite(e) || e < 0 || (e == 0 && !zero_allowed)) {
      Fail("key '" + key + "': " + std::to_string(e) + " epochs: expected a number " +
           (zero_allowed ? ">= 0" : "> 0"));
    }
    return e;
  };
  auto epochs = [&](const std::string& key, double fallback, bool zero_allowed) {
    return checked(key, Get<double>(root, key, fallback), zero_allowed);
  };
  LRScheduler::Options& s = fit->schedule;
  s.step = std::max<int64_t>(1, updates(epochs("lr_schedule.step_epochs", 1, false)));
  s.factor = Get<double>(root, "lr_schedule.factor", 1.0);
  for (double e : Get<std::vector<double>>(root, "lr_schedule.steps_epochs", {})) {
    s.steps.push_back(updates(checked("lr_schedule.steps_epochs", e, false)));
  }
  s.warmup_steps = updates(epochs("lr_schedule.warmup_epochs", 0, true));
  s.warmup_begin_lr = Get<double>(root, "lr_schedule.warmup_begin_lr", 0.0);
  s.final_lr = Get<double>(root, "lr_schedule.final_lr", 0.0);
  s.pwr = Get<double>(root, "lr_schedule.pwr", 2.0);
  s.stop_factor_lr = Get<double>(root, "lr_schedule.stop_factor_lr", 1e-8);
  s.max_update = updates(epochs("lr_schedule.max_epochs", fit->epochs, false));
}

}  // namespace cohort
