// Run configuration: loading, overrides, checking and interpretation.
#include "apps/train_config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "base/env.h"
#include "base/logging.h"
#include "ndarray/device_api.h"
#include "symbol/amp_convert.h"
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

YAML::Node Schema();  // every part's declared keys, as types (below)

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
  std::vector<std::string> names;
  for (const auto& item : level) names.push_back(item.first.as<std::string>());
  const std::string prefix = where.substr(0, where.size() - key.size());
  if (NearestName(key, names).empty()) {
    std::vector<std::string> paths;
    SchemaPaths(schema, "", &paths);
    for (const std::string& p : paths) {
      if (p.size() > key.size() && p.ends_with("." + key)) {
        Fail("unknown key '" + where + "' (did you mean '" + p + "'?)");
      }
    }
  }
  FailUnknownOption(where, key, names, prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1));
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
  return DataKindOf(DataSection(root)) == "text" &&
         !Get<std::vector<int64_t>>(root, "data.buckets", {}).empty();
}

// Model sizes far past any real network's (GPT-3: 96 layers, d_model 12288), so that the
// products the builders form (4 x d_model, d_model x vocab) cannot overflow: d_model 2^62 gave
// a negative num_hidden, n_layer 10^8 built a graph for minutes.
constexpr double kMaxLayers = 4096;
constexpr double kMaxWidth = 1 << 20;
constexpr double kMaxClasses = 1 << 24;

// A section's keys as typed Options, each of the type `type_of` gives it (the checker has refused
// what does not fit); keys it gives no type ("") are left out: another part reads them.
Options TypedSection(const YAML::Node& node, const std::string& section,
                     const std::function<std::string(const std::string&)>& type_of) {
  Options out(section);
  if (!node || !node.IsMap()) return out;
  for (const auto& item : node) {
    const std::string key = item.first.as<std::string>();
    const std::string type = type_of(key);
    const YAML::Node& v = item.second;
    if (type.empty() || v.IsNull()) continue;
    if (type == "int" || (type == "int_or_auto" && v.Scalar() != "auto")) {
      out.Set(key, v.as<int64_t>());
    } else if (type == "float") {
      out.Set(key, v.as<double>());
    } else if (type == "bool") {
      out.Set(key, v.as<bool>());
    } else if (type == "string" || type == "path" || type == "int_or_auto") {
      out.Set(key, v.as<std::string>());
    } else if (type == "ints") {
      out.Set(key, v.as<std::vector<int64_t>>());
    } else if (type == "floats") {
      out.Set(key, v.as<std::vector<double>>());
    } else {
      out.Set(key, v.as<std::vector<std::string>>());
    }
  }
  return out;
}

// The keys of `section` that `table` declares (the top level for "").
template <typename S>
Options SectionOf(const YAML::Node& root, const std::string& section, const OptionTable<S>& table) {
  return TypedSection(section.empty() ? root : root[section], section,
                      [&](const std::string& key) { return table.TypeOf(key); });
}

template <typename S>
void ReadSection(const YAML::Node& root, const std::string& section, const OptionTable<S>& table,
                 S* s) {
  table.Read(SectionOf(root, section, table), s);
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
  const YAML::Node schema = Schema();  // every part's declared keys (Note [Declared options])
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
Symbol ModelOf(const ModelConfig& m) {
  try {
    if (!m.symbol.empty()) return Symbol::Load(m.symbol);
    if (m.name == "gpt") return models::Gpt(m.gpt);
    if (m.name == "mobilenet") {
      return models::MobileNet(
          {.multiplier = m.multiplier, .resolution = m.resolution, .num_classes = m.num_classes});
    }
    return models::ByName(m.name, m.num_classes);
  } catch (const Error& e) {
    Fail("model: " + e.message());
  }
}

// devices, work_load and the kvstore that sums over them.
void ParseDevices(RunConfig* config) {
  RunConfig& c = *config;
  try {
    c.devices = ParseContexts(ResolveLocalGpu(c.devices_spec));
  } catch (const Error& e) {
    Fail("key 'devices': " + e.message());
  }
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

// The training keys: epochs, resume point, checkpoints, metrics and fine-tuning.
void ParseTraining(const YAML::Node& root, const ModelConfig& model, FitConfig* fit) {
  FitConfig& f = *fit;
  ReadSection(root, "", FitConfig::TrainingTable(), &f);
  ReadSection(root, "checkpoint", FitConfig::CheckpointTable(), &f);
  ReadSection(root, "early_stopping", EarlyStoppingConfig::Table(), &f.early_stopping);
  ReadSection(root, "model", FitConfig::FineTuningTable(), &f);
  if (BucketedText(root)) f.ignore_label = -1;
  f.count_tokens = DataKindOf(DataSection(root)) == "text";
  if (!model.params.empty()) {  // fine-tuning: the parameters to start from
    if (!std::filesystem::exists(model.params)) {
      Fail("key 'model.params': file '" + model.params + "' does not exist");
    }
    try {
      LoadArgAuxParams(model.params, &f.arg_params, &f.aux_params);
    } catch (const Error& e) {
      Fail("key 'model.params': " + e.message());
    }
  }
}

// optimizer (each optimizer's own settings default to MXNet 1.9.1's for it), lr_schedule and
// initializer.
void ParseOptimizer(const YAML::Node& root, RunConfig* config) {
  FitConfig& f = config->fit;
  f.optimizer = Get<std::string>(root, "optimizer.name", f.optimizer);
  try {
    f.optimizer_options = OptimizerOptions::DefaultsFor(f.optimizer);
  } catch (const Error& e) {
    Fail("key 'optimizer.name': " + e.message());
  }
  f.clip_global_norm = Get<double>(root, "optimizer.clip_global_norm", f.clip_global_norm);
  if (!(f.clip_global_norm >= 0) || !std::isfinite(f.clip_global_norm)) {
    Fail("key 'optimizer.clip_global_norm': " + std::to_string(f.clip_global_norm) +
         " must be a finite number >= 0 (0: off)");
  }
  const Options given = SectionOf(root, "optimizer", OptimizerOptions::Table());
  OptimizerOptions::Table().Read(given, &f.optimizer_options);
  if (given.Has("rescale_grad") && f.optimizer_options.rescale_grad != 0) {
    f.rescale_grad = f.optimizer_options.rescale_grad;  // as given (MXNet's), not divided again
  }
  ReadSection(root, "lr_schedule", LRScheduleConfig::Table(), &config->schedule);
  f.lr_schedule = config->schedule.name;
  ReadSection(root, "initializer", InitializerOptions::Table(), &f.initializer);
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
  if (f.checkpoint_every_steps % f.accumulate != 0) {  // Note [Gradient accumulation]
    Fail("key 'checkpoint.every_steps' (" + std::to_string(f.checkpoint_every_steps) +
         ") must be a multiple of 'accumulate' (" + std::to_string(f.accumulate) +
         "): a checkpoint holds no half-summed gradients");
  }
}

YAML::Node Schema() {
  YAML::Node schema(YAML::NodeType::Map);
  for (const ConfigSection& section : ConfigKeys()) {
    YAML::Node level = schema;
    if (!section.name.empty()) {
      schema[section.name] = YAML::Node(YAML::NodeType::Map);
      level.reset(schema[section.name]);
    }
    for (const OptionInfo& key : section.keys) level[key.key] = key.type;
  }
  return schema;
}

}  // namespace

Symbol ZooModel(const std::string& name, const std::vector<std::string>& keys) {
  YAML::Node root(YAML::NodeType::Map);
  YAML::Node model(YAML::NodeType::Map);
  model["name"] = name;
  for (const std::string& k : keys) {
    const auto eq = k.find('=');
    if (eq == std::string::npos || eq == 0) Fail("--set '" + k + "': expected key=value");
    std::string key = k.substr(0, eq);
    if (key.rfind("model.", 0) == 0) key = key.substr(6);
    if (key == "name" || key == "symbol" || key == "params") {
      Fail("--set '" + k + "': give the model as SYMBOL; --set takes its keys");
    }
    if (ModelConfig::Table().TypeOf(key).empty()) {  // the near match named
      FailUnknownOption("model." + key, key, ModelConfig::Table().Keys(), "model");
    }
    try {
      model[key] = YAML::Load(k.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      Fail("--set '" + k + "': " + e.what());
    }
  }
  root["model"] = model;
  ModelConfig m;
  ReadSection(root, "model", ModelConfig::Table(), &m);
  return ModelOf(m);
}

const std::vector<ZooEntry>& ZooModels() {
  static const std::vector<ZooEntry> zoo = {
      {"mlp", "flattened inputs, two hidden layers (128, 64)", {"num_classes"}},
      {"lenet", "LeNet-5 with tanh and max pooling", {"num_classes"}},
      {"resnetN",
       "CIFAR ResNet for N = 6n + 2 (resnet20, resnet56, ...); ImageNet ResNet for N = 18, 34, "
       "50, 101, 152, 200, 269",
       {"num_classes"}},
      {"vggN", "VGG for N = 11, 13, 16, 19", {"num_classes"}},
      {"inceptionv3", "Inception-v3 (299x299 inputs)", {"num_classes"}},
      {"mobilenet", "MobileNet v1", {"num_classes", "multiplier", "resolution"}},
      {"gpt",
       "a decoder-only transformer over byte tokens",
       {"n_layer", "n_head", "d_model", "seq_len", "vocab", "dropout", "tie_weights"}},
  };
  return zoo;
}

const OptionTable<ModelConfig>& ModelConfig::Table() {
  using M = ModelConfig;
  using G = models::GptOptions;
  static const OptionTable<M> table = [] {
    OptionTable<M> t("model");
    t.Field("name", &M::name,
            "a built-in network: mlp, lenet, resnet20, resnet18, mobilenet, gpt, ...")
        .Path("symbol", &M::symbol, "a symbol JSON file (instead of name)")
        .Field("num_classes", &M::num_classes, "classes of a built-in classifier", 1, kMaxClasses)
        .Field("n_layer", &M::gpt, &G::n_layer, "gpt: blocks", 1, kMaxLayers)
        .Field("n_head", &M::gpt, &G::n_head, "gpt: attention heads", 1, kMaxWidth)
        .Field("d_model", &M::gpt, &G::d_model, "gpt: width", 1, kMaxWidth)
        .Field("seq_len", &M::gpt, &G::seq_len, "gpt: context (text data's window)", 1, kMaxWidth)
        .Field("vocab", &M::gpt, &G::vocab, "gpt: tokens (256: bytes)", 1, kMaxClasses)
        .Field("dropout", &M::gpt, &G::dropout, "gpt: dropout rate")
        .Field("tie_weights", &M::gpt, &G::tie_weights, "gpt: output layer is the token embedding")
        .Field("multiplier", &M::multiplier, "mobilenet: width multiplier")
        .Field("resolution", &M::resolution, "mobilenet: input side", 1, 1 << 16)
        .Path("params", &M::params, "fine-tuning: a .params file to start from");
    return t;
  }();
  return table;
}

const OptionTable<RunConfig>& RunConfig::Table() {
  using R = RunConfig;
  static const OptionTable<R> table = [] {
    OptionTable<R> t("");
    t.Field("batch_size", &R::batch_size, "global: split over every device of every worker", 1,
            static_cast<double>(int64_t{1} << 31))
        .Field("devices", &R::devices_spec,
               "cpu:0,cpu:1 / gpu:0-3 / gpu:local (the rank's index on its host)")
        .Field("work_load", &R::work_load, "each device's share of the batch (default: equal)")
        .Field("kvstore", &R::kvstore, "local, device, nccl, mpi or dist_sync")
        .Field("threads", &R::threads, "kernel threads a worker (0: COHORT_NUM_THREADS or cores)",
               0, kMaxThreads)
        .Field("precision", &R::precision,
               "float32, or bfloat16/float16: mixed precision (FullyConnected in that type, "
               "products summed in float32; weights, optimizer and the rest float32)")
        .Field("gradient_compression", &R::gradient_compression,
               "none, bfloat16 or float16: the type gradients cross between workers in (summed "
               "in float32; half the bytes on the wire)")
        .Field("log_level", &R::log_level,
               "trace, debug, info, warn, error or off (unset: COHORT_LOG_LEVEL, else info)")
        .DefaultInDoc();
    return t;
  }();
  return table;
}

std::vector<ConfigSection> ConfigKeys() {
  auto join = [](std::vector<OptionInfo> a, const std::vector<OptionInfo>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const FitConfig fit;
  std::vector<OptionInfo> optimizer = {
      {"name", "string", fit.optimizer,
       "sgd, nag, adam, adamw, rmsprop, signum, ftml, ftrl, adagrad, adadelta, adamax, sgld, "
       "lamb; each takes MXNet 1.9.1's defaults for its own settings"},
      {"clip_global_norm", "float", "0",
       "scale each step's gradients (after rescale_grad) to an L2 norm over all parameters of at "
       "most this, as PyTorch's clip_grad_norm_ (0: off; the devices update, not the kvstore)"}};
  return {
      {"", join(RunConfig::Table().Infos({}), FitConfig::TrainingTable().Infos(fit))},
      {"model", join(ModelConfig::Table().Infos({}), FitConfig::FineTuningTable().Infos(fit))},
      {"optimizer", join(optimizer, OptimizerOptions::Table().Infos({}))},
      {"lr_schedule", LRScheduleConfig::Table().Infos({})},
      {"initializer", InitializerOptions::Table().Infos({})},
      {"checkpoint", FitConfig::CheckpointTable().Infos(fit)},
      {"early_stopping", EarlyStoppingConfig::Table().Infos({})},
      {"data", DataOptionKeys()},
  };
}

std::string ConfigHelp() {
  std::string out = "key\ttype\tdefault\tdoc\n";
  for (const ConfigSection& section : ConfigKeys()) {
    for (const OptionInfo& key : section.keys) {
      out += (section.name.empty() ? "" : section.name + ".") + key.key + "\t" + key.type + "\t" +
             (key.value.empty() ? "-" : key.value) + "\t" + key.doc + "\n";
    }
  }
  return out;
}

RunConfig ParseRunConfig(const YAML::Node& root) {
  RunConfig c;
  c.root = root;
  c.log_level = Env().log_level;  // COHORT_LOG_LEVEL
  ReadSection(root, "", RunConfig::Table(), &c);
  ReadSection(root, "model", ModelConfig::Table(), &c.model);
  if (BucketedText(root)) c.model.gpt.ignore_label = -1.0f;
  c.symbol = ModelOf(c.model);
  if (c.precision != "float32") {  // Note [AMP pass]
    if (c.precision != "bfloat16" && c.precision != "float16") {
      Fail("key 'precision': '" + c.precision + "' is not float32, bfloat16 or float16");
    }
    AmpOptions amp;
    amp.target = ParseDType(c.precision);
    c.symbol = ConvertToMixedPrecision(c.symbol, amp);
  }
  ParseDevices(&c);
  SetLogLevel(c.log_level);  // checked now, before any work (a ConfigError naming log_level)

  ParseTraining(root, c.model, &c.fit);
  c.fit.must_agree.push_back({"precision", c.precision});  // Note [Agreement]
  if (!GradientCompressionWire(c.gradient_compression)) {
    Fail("key 'gradient_compression': '" + c.gradient_compression +
         "' is not none, bfloat16 or float16");
  }
  c.fit.must_agree.push_back({"gradient compression", c.gradient_compression});
  if (c.fit.loss_scaling == "auto") {  // Note [Loss scaling]: float16 needs it, bfloat16 not
    c.fit.loss_scaling = c.precision == "float16" ? "dynamic" : "off";
  }
  ParseOptimizer(root, &c);
  CheckTraining(c.fit);
  CheckDataOptions(DataSection(root), {.seq_len = c.model.gpt.seq_len});
  return c;
}

Options DataSection(const YAML::Node& root) {
  std::map<std::string, std::string> types;
  for (const OptionInfo& key : DataOptionKeys()) types[key.key] = key.type;
  return TypedSection(root["data"], "data",
                      [&](const std::string& key) { return types.at(key); });  // keys checked
}

DataIters MakeDataIters(const RunConfig& config, int64_t batch_per_worker, int rank,
                        int num_workers) {
  // A model over text bytes refuses a byte its vocabulary lacks when the text is read.
  const bool gpt = config.model.name == "gpt";
  return MakeDataIters(DataSection(config.root), {.batch_per_worker = batch_per_worker,
                                                  .rank = rank,
                                                  .num_workers = num_workers,
                                                  .seed = config.fit.seed,
                                                  .seq_len = config.model.gpt.seq_len,
                                                  .vocab = gpt ? config.model.gpt.vocab : 0});
}

void ResolveScheduleInEpochs(int64_t batches_per_epoch, RunConfig* config) {
  config->fit.schedule = config->schedule.InUpdates(batches_per_epoch, config->fit.epochs);
}

}  // namespace cohort
