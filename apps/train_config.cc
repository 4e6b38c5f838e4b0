// Run configuration: loading, overrides, checking and interpretation.
#include "apps/train_config.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "io/csv_iter.h"
#include "io/image_record_iter.h"
#include "io/mnist_iter.h"
#include "io/ndarray_iter.h"
#include "io/prefetching_iter.h"
#include "io/resize_iter.h"
#include "io/text_iter.h"
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
model: {name: string, symbol: string, num_classes: int, n_layer: int, n_head: int,
        d_model: int, seq_len: int, vocab: int, dropout: float, tie_weights: bool,
        multiplier: float, resolution: int, params: string, reinit: strings,
        fixed_params: strings}
data:
  kind: string
  train_image: string
  train_label: string
  val_image: string
  val_label: string
  train_data_csv: string
  train_label_csv: string
  val_data_csv: string
  val_label_csv: string
  train_files: strings
  val_files: strings
  val_fraction: float
  val_batches: int
  stride: int
  buckets: ints
  data_shape: ints
  label_shape: ints
  shape: ints
  num_classes: int
  num_samples: int
  val_samples: int
  shuffle: bool
  prefetch: bool
  flat: bool
  scale: float
  last_batch_handle: string
  batches_per_epoch: int
  train_rec: string
  train_idx: string
  val_rec: string
  val_idx: string
  resize: int
  rand_crop: bool
  rand_mirror: bool
  mean_r: float
  mean_g: float
  mean_b: float
  std_r: float
  std_g: float
  std_b: float
  label_width: int
  preprocess_threads: int
  prefetch_buffer: int
  round_batch: bool
  skip_bad: bool
batch_size: int
devices: string
work_load: floats
kvstore: string
update_on_kvstore: bool
optimizer: {name: string, lr: float, momentum: float, wd: float, clip_gradient: float,
            rescale_grad: float, beta1: float, beta2: float, epsilon: float, gamma1: float}
lr_schedule: {name: string, step_epochs: float, factor: float, steps_epochs: floats,
              warmup_epochs: float, warmup_begin_lr: float, final_lr: float, pwr: float,
              stop_factor_lr: float, max_epochs: float}
initializer: {name: string, magnitude: float, rnd_type: string, factor_type: string,
              scale: float, sigma: float, slope: float, value: float}
metrics: strings
epochs: int
seed: int
checkpoint: {prefix: string, period: int}
resume_epoch: int
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
  if (type == "float") return n.IsScalar() && Converts<double>(n);
  if (type == "bool") return n.IsScalar() && Converts<bool>(n);
  if (type == "string") return n.IsScalar();
  const std::string element = type == "ints" ? "int" : type == "floats" ? "float" : "string";
  if (!n.IsSequence()) return false;
  for (const auto& e : n) {
    if (!Fits(e, element)) return false;
  }
  return true;
}

const char* Describe(const std::string& type) {
  if (type == "int") return "an integer";
  if (type == "float") return "a number";
  if (type == "bool") return "true or false";
  if (type == "string") return "a string";
  if (type == "ints") return "a list of integers";
  if (type == "floats") return "a list of numbers";
  return "a list of strings";
}

void Check(const YAML::Node& node, const YAML::Node& schema, const std::string& path) {
  if (node.IsNull()) return;
  if (!node.IsMap()) Fail("'" + path + "' must be a map of keys");
  for (const auto& item : node) {
    const std::string key = item.first.as<std::string>();
    const std::string where = path.empty() ? key : path + "." + key;
    const YAML::Node expected = schema[key];
    if (!expected) Fail("unknown key '" + where + "'");
    if (expected.IsMap()) {
      Check(item.second, expected, where);
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

void RequireFile(const YAML::Node& root, const std::string& key) {
  const std::string path = Get<std::string>(root, key, "");
  if (path.empty()) Fail("key '" + key + "' is required");
  if (!std::filesystem::exists(path)) Fail("key '" + key + "': file '" + path + "' does not exist");
}

models::GptOptions GptOptionsOf(const YAML::Node& root) {
  models::GptOptions o;
  o.n_layer = Get<int64_t>(root, "model.n_layer", o.n_layer);
  o.n_head = Get<int64_t>(root, "model.n_head", o.n_head);
  o.d_model = Get<int64_t>(root, "model.d_model", o.d_model);
  o.seq_len = Get<int64_t>(root, "model.seq_len", o.seq_len);
  o.vocab = Get<int64_t>(root, "model.vocab", o.vocab);
  o.dropout = Get<double>(root, "model.dropout", o.dropout);
  o.tie_weights = Get<bool>(root, "model.tie_weights", o.tie_weights);
  if (!Get<std::vector<int64_t>>(root, "data.buckets", {}).empty()) o.ignore_label = -1.0f;
  return o;
}

Shape ToShape(const std::vector<int64_t>& dims) { return Shape(std::span<const int64_t>(dims)); }

// A fixed number of batches per epoch (data.batches_per_epoch), e.g. for benchmarks.
void ApplyBatchesPerEpoch(const YAML::Node& root, int64_t batch, DataIters* out) {
  const int64_t n = Get<int64_t>(root, "data.batches_per_epoch", 0);
  if (n <= 0) return;
  out->train = std::make_unique<ResizeIter>(std::move(out->train), n);
  out->train_samples = n * batch;
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
    node[keys.back()] = value;
  }
  Check(root, YAML::Load(kSchema), "");
  return root;
}

RunConfig ParseRunConfig(const YAML::Node& root) {
  RunConfig c;
  c.root = root;
  const int64_t classes = Get<int64_t>(root, "model.num_classes", 10);
  const std::string symbol_path = Get<std::string>(root, "model.symbol", "");
  const std::string model_name = Get<std::string>(root, "model.name", "mlp");
  try {
    if (!symbol_path.empty()) {
      c.symbol = Symbol::Load(symbol_path);
    } else if (model_name == "gpt") {
      c.symbol = models::Gpt(GptOptionsOf(root));
    } else if (model_name == "mobilenet") {
      c.symbol = models::MobileNet({.multiplier = Get<double>(root, "model.multiplier", 1.0),
                                    .resolution = Get<int64_t>(root, "model.resolution", 224),
                                    .num_classes = classes});
    } else {
      c.symbol = models::ByName(model_name, classes);
    }
  } catch (const Error& e) {
    Fail("model: " + e.message());
  }
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
  c.kvstore = Get<std::string>(root, "kvstore", "local");
  const bool gpu_kvstore = c.kvstore == "device" || c.kvstore == "nccl";
  for (const Context& d : c.devices) {
    if (gpu_kvstore && !d.is_gpu()) {
      Fail("key 'kvstore': " + c.kvstore + " reduces on GPUs but 'devices' lists " + d.ToString() +
           "; use local or mpi for CPU devices");
    }
    if (d.is_gpu() && d.id >= device::Count()) {
      Fail("key 'devices': " + d.ToString() + " does not exist: this process sees " +
           std::to_string(device::Count()) + " GPU(s)" +
           (device::BuiltWithCuda() ? "" : " (this build of Cohort has no CUDA)"));
    }
  }
  c.batch_size = Get<int64_t>(root, "batch_size", 128);
  if (c.batch_size <= 0) Fail("key 'batch_size' must be positive");
  c.threads = static_cast<int>(Get<int64_t>(root, "threads", 0));
  c.log_level = Get<std::string>(root, "log_level", "info");

  FitConfig& f = c.fit;
  f.epochs = static_cast<int>(Get<int64_t>(root, "epochs", 10));
  f.begin_epoch = static_cast<int>(Get<int64_t>(root, "resume_epoch", 0));
  f.update_on_kvstore = Get<bool>(root, "update_on_kvstore", true);
  f.seed = static_cast<uint64_t>(Get<int64_t>(root, "seed", 0));
  f.log_every = static_cast<int>(Get<int64_t>(root, "log_every", 100));
  f.metrics = Get<std::vector<std::string>>(root, "metrics", {"acc"});
  if (!Get<std::vector<int64_t>>(root, "data.buckets", {}).empty()) f.ignore_label = -1;
  f.checkpoint_prefix = Get<std::string>(root, "checkpoint.prefix", "");
  f.checkpoint_period = static_cast<int>(Get<int64_t>(root, "checkpoint.period", 1));
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
  f.fixed_params = Get<std::vector<std::string>>(root, "model.fixed_params", {});
  f.optimizer = Get<std::string>(root, "optimizer.name", "sgd");
  OptimizerOptions& o = f.optimizer_options;
  o.lr = Get<double>(root, "optimizer.lr", 0.01);
  o.momentum = Get<double>(root, "optimizer.momentum", 0.0);
  o.wd = Get<double>(root, "optimizer.wd", 0.0);
  o.clip_gradient = Get<double>(root, "optimizer.clip_gradient", -1.0);
  o.rescale_grad = Get<double>(root, "optimizer.rescale_grad", 1.0);
  o.beta1 = Get<double>(root, "optimizer.beta1", 0.9);
  o.beta2 = Get<double>(root, "optimizer.beta2", 0.999);
  o.epsilon = Get<double>(root, "optimizer.epsilon", 1e-8);
  o.gamma1 = Get<double>(root, "optimizer.gamma1", 0.9);
  f.lr_schedule = Get<std::string>(root, "lr_schedule.name", "constant");
  InitializerOptions& i = f.initializer;
  i.kind = Get<std::string>(root, "initializer.name", "xavier");
  i.magnitude = Get<double>(root, "initializer.magnitude", 3.0);
  i.rnd_type = Get<std::string>(root, "initializer.rnd_type", "uniform");
  i.factor_type = Get<std::string>(root, "initializer.factor_type", "avg");
  i.scale = Get<double>(root, "initializer.scale", 0.07);
  i.sigma = Get<double>(root, "initializer.sigma", 0.01);
  i.slope = Get<double>(root, "initializer.slope", 0.25);
  i.value = Get<double>(root, "initializer.value", 0.0);
  // Everything that can fail later fails now, naming its key.
  try {
    Optimizer::Create(f.optimizer, o);
    LRScheduler::Create(f.lr_schedule, {.step = 1, .steps = {1}, .max_update = 1});
    Initializer check(i);
    CreateMetric(f.metrics);
    if (c.kvstore != "local" && c.kvstore != "mpi" && c.kvstore != "dist_sync") {
      KVStore::Create(c.kvstore);  // throws with the reason
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    Fail(e.message());
  }
  if (f.epochs <= f.begin_epoch) Fail("key 'epochs' must exceed 'resume_epoch'");
  if (f.begin_epoch > 0 && f.checkpoint_prefix.empty()) {
    Fail("key 'resume_epoch' needs 'checkpoint.prefix'");
  }
  const std::string kind = Get<std::string>(root, "data.kind", "mnist");
  if (kind == "mnist") {
    for (const char* key : {"data.train_image", "data.train_label"}) RequireFile(root, key);
    if (!Get<std::string>(root, "data.val_image", "").empty()) {
      for (const char* key : {"data.val_image", "data.val_label"}) RequireFile(root, key);
    }
  } else if (kind == "csv") {
    RequireFile(root, "data.train_data_csv");
    if (Get<std::vector<int64_t>>(root, "data.data_shape", {}).empty()) {
      Fail("key 'data.data_shape' is required for csv data");
    }
  } else if (kind == "text") {
    for (const char* key : {"data.train_files", "data.val_files"}) {
      for (const std::string& path : Get<std::vector<std::string>>(root, key, {})) {
        if (!std::filesystem::exists(path)) {
          Fail("key '" + std::string(key) + "': file '" + path + "' does not exist");
        }
      }
    }
    if (Get<std::vector<std::string>>(root, "data.train_files", {}).empty()) {
      Fail("key 'data.train_files' is required for text data");
    }
    const double val_fraction = Get<double>(root, "data.val_fraction", 0.0);
    if (val_fraction < 0 || val_fraction >= 1) {
      Fail("key 'data.val_fraction' must be in [0, 1)");
    }
    if (Get<int64_t>(root, "data.stride", 0) < 0) Fail("key 'data.stride' must be positive");
    const std::vector<int64_t> buckets = Get<std::vector<int64_t>>(root, "data.buckets", {});
    for (size_t b = 0; b < buckets.size(); ++b) {
      if (buckets[b] <= 0 || (b > 0 && buckets[b] <= buckets[b - 1])) {
        Fail("key 'data.buckets' must list positive lengths in ascending order");
      }
    }
    if (!buckets.empty() && buckets.back() > Get<int64_t>(root, "model.seq_len", 128)) {
      Fail("key 'data.buckets': the largest bucket " + std::to_string(buckets.back()) +
           " exceeds model.seq_len " + std::to_string(Get<int64_t>(root, "model.seq_len", 128)) +
           " (the positions the model embeds)");
    }
    if (Get<int64_t>(root, "data.val_batches", 0) < 0) {
      Fail("key 'data.val_batches' must not be negative");
    }
  } else if (kind == "imagerecord") {
    RequireFile(root, "data.train_rec");
    for (const char* key : {"data.train_idx", "data.val_rec", "data.val_idx"}) {
      if (!Get<std::string>(root, key, "").empty()) RequireFile(root, key);
    }
    if (Get<std::vector<int64_t>>(root, "data.data_shape", {}).size() != 3) {
      Fail("key 'data.data_shape' must be (channels, height, width) for imagerecord data");
    }
    if (Get<int64_t>(root, "data.prefetch_buffer", 4) < 1) {
      Fail("key 'data.prefetch_buffer' must be at least 1");
    }
  } else if (kind != "synthetic") {
    Fail("key 'data.kind': '" + kind + "' is not mnist, csv, text, imagerecord or synthetic");
  }
  return c;
}

namespace {

DataIters MakeDataItersOrThrow(const YAML::Node& root, int64_t batch, int rank, int num_workers,
                               uint64_t seed) {
  DataIters out;
  const std::string kind = Get<std::string>(root, "data.kind", "mnist");
  const bool shuffle = Get<bool>(root, "data.shuffle", true);
  const bool prefetch = Get<bool>(root, "data.prefetch", true);
  const LastBatchHandle last =
      ParseLastBatchHandle(Get<std::string>(root, "data.last_batch_handle", "pad"));
  const BatchOptions train_options{.batch_size = batch,
                                   .shuffle = shuffle,
                                   .seed = seed,
                                   .last_batch = last,
                                   .num_parts = num_workers,
                                   .part_index = rank};
  const BatchOptions val_options{.batch_size = batch,
                                 .shuffle = false,
                                 .seed = seed,
                                 .num_parts = num_workers,
                                 .part_index = rank};
  auto wrap = [&](std::unique_ptr<DataIter> it) -> std::unique_ptr<DataIter> {
    return prefetch ? std::make_unique<PrefetchingIter>(std::move(it), 4) : std::move(it);
  };
  if (kind == "mnist") {
    auto make = [&](const std::string& split, const BatchOptions& options, int64_t* count) {
      MNISTIterOptions o;
      o.image = Get<std::string>(root, "data." + split + "_image", "");
      o.label = Get<std::string>(root, "data." + split + "_label", "");
      o.flat = Get<bool>(root, "data.flat", false);
      o.scale = static_cast<float>(Get<double>(root, "data.scale", 1.0 / 256.0));
      o.batch = options;
      auto it = std::make_unique<MNISTIter>(o);
      if (count) *count = it->num_samples();
      return wrap(std::move(it));
    };
    out.train = make("train", train_options, &out.train_samples);
    if (!Get<std::string>(root, "data.val_image", "").empty())
      out.val = make("val", val_options, nullptr);
  } else if (kind == "csv") {
    auto make = [&](const std::string& split, const BatchOptions& options, int64_t* count) {
      CSVIterOptions o;
      o.data_csv = Get<std::string>(root, "data." + split + "_data_csv", "");
      o.label_csv = Get<std::string>(root, "data." + split + "_label_csv", "");
      o.data_shape = ToShape(Get<std::vector<int64_t>>(root, "data.data_shape", {}));
      o.label_shape = ToShape(Get<std::vector<int64_t>>(root, "data.label_shape", {1}));
      o.batch = options;
      auto it = std::make_unique<CSVIter>(o);
      if (count) *count = it->num_samples();
      return wrap(std::move(it));
    };
    out.train = make("train", train_options, &out.train_samples);
    if (!Get<std::string>(root, "data.val_data_csv", "").empty())
      out.val = make("val", val_options, nullptr);
  } else if (kind == "text") {  // Note [Text windows]
    TextIterOptions o;
    o.seq_len = Get<int64_t>(root, "model.seq_len", 128);
    o.stride = Get<int64_t>(root, "data.stride", 0);
    o.buckets = Get<std::vector<int64_t>>(root, "data.buckets", {});  // Note [Text buckets]
    o.batch_size = batch;
    o.seed = seed;
    o.num_parts = num_workers;
    o.part_index = rank;
    const std::vector<std::string> val_files =
        Get<std::vector<std::string>>(root, "data.val_files", {});
    const double val_fraction = Get<double>(root, "data.val_fraction", 0.0);
    TextIterOptions train = o;
    train.files = Get<std::vector<std::string>>(root, "data.train_files", {});
    train.shuffle = shuffle;
    if (val_files.empty()) train.end_fraction = 1 - val_fraction;
    // A text too short for the batch and window is a setting to change: exit 2, as config errors.
    auto text_iter = [](const TextIterOptions& options) {
      try {
        return std::make_unique<TextIter>(options);
      } catch (const ConfigError&) {
        throw;
      } catch (const Error& e) {
        Fail("data: " + e.message());
      }
    };
    auto train_it = text_iter(train);
    out.train_samples = train_it->batches_per_epoch() * batch;
    out.train = wrap(std::move(train_it));
    if (!val_files.empty() || val_fraction > 0) {
      TextIterOptions val = o;
      val.files = val_files.empty() ? train.files : val_files;
      val.shuffle = false;
      if (val_files.empty()) val.begin_fraction = 1 - val_fraction;
      val.max_batches = Get<int64_t>(root, "data.val_batches", 0);
      out.val = wrap(text_iter(val));
    }
  } else if (kind == "imagerecord") {  // Note [Image records]
    ImageRecordIterOptions o;
    const std::vector<int64_t> shape = Get<std::vector<int64_t>>(root, "data.data_shape", {});
    o.data_shape = {shape[0], shape[1], shape[2]};
    o.batch_size = batch;
    o.resize = Get<int64_t>(root, "data.resize", -1);
    o.scale = static_cast<float>(Get<double>(root, "data.scale", 1.0));
    const char* rgb = "rgb";
    for (int c = 0; c < 3; ++c) {
      o.mean[c] = static_cast<float>(Get<double>(root, std::string("data.mean_") + rgb[c], 0.0));
      o.std[c] = static_cast<float>(Get<double>(root, std::string("data.std_") + rgb[c], 1.0));
    }
    o.label_width = Get<int64_t>(root, "data.label_width", 1);
    o.preprocess_threads = static_cast<int>(Get<int64_t>(root, "data.preprocess_threads", 4));
    o.skip_bad = Get<bool>(root, "data.skip_bad", false);
    o.seed = seed;
    o.num_parts = num_workers;
    o.part_index = rank;
    // round_batch (MXNet's name) true pads the last batch, false drops it.
    if (root["data"]["round_batch"]) {
      o.last_batch = Get<bool>(root, "data.round_batch", true) ? LastBatchHandle::kPad
                                                                : LastBatchHandle::kDiscard;
    } else {
      o.last_batch = last;
    }
    const int64_t depth = Get<int64_t>(root, "data.prefetch_buffer", 4);
    // Option values the iterator refuses are settings to change: exit 2, as config errors.
    auto make = [&](const ImageRecordIterOptions& options,
                    int64_t* count) -> std::unique_ptr<DataIter> {
      std::unique_ptr<ImageRecordIter> it;
      try {
        it = std::make_unique<ImageRecordIter>(options);
      } catch (const DataError&) {
        throw;
      } catch (const Error& e) {
        Fail("data: " + e.message());
      }
      if (count) *count = it->batches_per_epoch() * batch;
      if (!prefetch) return it;
      return std::make_unique<PrefetchingIter>(std::move(it), static_cast<int>(depth));
    };
    ImageRecordIterOptions train = o;
    train.path_imgrec = Get<std::string>(root, "data.train_rec", "");
    train.path_imgidx = Get<std::string>(root, "data.train_idx", "");
    train.rand_crop = Get<bool>(root, "data.rand_crop", false);
    train.rand_mirror = Get<bool>(root, "data.rand_mirror", false);
    train.shuffle = shuffle;
    out.train = make(train, &out.train_samples);
    if (!Get<std::string>(root, "data.val_rec", "").empty()) {
      ImageRecordIterOptions val = o;
      val.path_imgrec = Get<std::string>(root, "data.val_rec", "");
      val.path_imgidx = Get<std::string>(root, "data.val_idx", "");
      out.val = make(val, nullptr);
    }
  } else {  // synthetic: class c has its mean at +2 on features c, c+C, ...; unit noise
    const std::vector<int64_t> shape = Get<std::vector<int64_t>>(root, "data.shape", {1, 28, 28});
    const int64_t classes = Get<int64_t>(root, "data.num_classes", 10);
    auto make = [&](int64_t n, uint64_t data_seed, const BatchOptions& options) {
      std::vector<int64_t> dims = {n};
      dims.insert(dims.end(), shape.begin(), shape.end());
      const Shape s = ToShape(dims);
      const int64_t per = s.Size() / n;
      std::vector<float> x(s.Size()), y(n);
      std::mt19937_64 rng(data_seed);
      std::normal_distribution<float> noise(0, 1);
      for (int64_t i = 0; i < n; ++i) {
        y[i] = static_cast<float>(i % classes);
        for (int64_t j = 0; j < per; ++j)
          x[i * per + j] = noise(rng) + (j % classes == i % classes ? 2.0f : 0.0f);
      }
      return wrap(std::make_unique<NDArrayIter>(
          NDArrayIter::NamedArrays{{"data", NDArray::FromVector<float>(s, x)}},
          NDArrayIter::NamedArrays{{"softmax_label", NDArray::FromVector<float>({n}, y)}},
          options));
    };
    const int64_t n = Get<int64_t>(root, "data.num_samples", 4096);
    out.train = make(n, seed + 1, train_options);
    out.train_samples = (n + num_workers - 1) / num_workers;
    const int64_t v = Get<int64_t>(root, "data.val_samples", 1024);
    if (v > 0) out.val = make(v, seed + 2, val_options);
  }
  ApplyBatchesPerEpoch(root, batch, &out);
  return out;
}

}  // namespace

// The config was checked before, files included: what fails now is what the files hold (a
// truncated gzip, a CSV field that is not a number, a label count that differs), so it is a
// DataError (exit 2), as bad input is.
DataIters MakeDataIters(const YAML::Node& root, int64_t batch, int rank, int num_workers,
                        uint64_t seed) {
  try {
    return MakeDataItersOrThrow(root, batch, rank, num_workers, seed);
  } catch (const ConfigError&) {
    throw;
  } catch (const DataError&) {
    throw;
  } catch (const Error& e) {
    throw DataError(e.message(), e.file(), e.line());
  }
}

void ResolveScheduleInEpochs(const YAML::Node& root, int64_t batches_per_epoch, FitConfig* fit) {
  auto updates = [&](double epochs) {
    return static_cast<int64_t>(std::llround(epochs * static_cast<double>(batches_per_epoch)));
  };
  LRScheduler::Options& s = fit->schedule;
  s.step = std::max<int64_t>(1, updates(Get<double>(root, "lr_schedule.step_epochs", 1)));
  s.factor = Get<double>(root, "lr_schedule.factor", 1.0);
  for (double e : Get<std::vector<double>>(root, "lr_schedule.steps_epochs", {}))
    s.steps.push_back(updates(e));
  s.warmup_steps = updates(Get<double>(root, "lr_schedule.warmup_epochs", 0));
  s.warmup_begin_lr = Get<double>(root, "lr_schedule.warmup_begin_lr", 0.0);
  s.final_lr = Get<double>(root, "lr_schedule.final_lr", 0.0);
  s.pwr = Get<double>(root, "lr_schedule.pwr", 2.0);
  s.stop_factor_lr = Get<double>(root, "lr_schedule.stop_factor_lr", 1e-8);
  s.max_update = updates(Get<double>(root, "lr_schedule.max_epochs", fit->epochs));
}

}  // namespace cohort
