// The data section of a run configuration (io/data_config.h, Note [Data kinds]): the keys every
// kind reads, the registry of kinds, and the checks they share.
#include "io/data_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "base/logging.h"
#include "io/data_kinds.h"
#include "io/prefetching_iter.h"
#include "io/resize_iter.h"

namespace cohort {
namespace {

const DataKind& KindNamed(const std::string& name) {
  const std::vector<DataKind>& kinds = DataKinds();
  std::string names;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i].name == name) return kinds[i];
    names += (i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + kinds[i].name;
  }
  FailData("key 'data.kind': '" + name + "' is not " + names);
}

// A key of another kind is ignored, with a warning: a config written for one kind may be run
// with another by `--set data.kind=...`, but a key given for nothing should not pass unseen.
void WarnOfKeysOfOtherKinds(const Options& data, const DataKind& kind) {
  std::set<std::string> read;
  for (const std::string& key : DataCommon::Table().Keys()) read.insert(key);
  for (const OptionInfo& key : kind.keys) read.insert(key.key);
  std::string ignored;
  for (const std::string& key : data.Keys()) {
    if (!read.count(key)) ignored += (ignored.empty() ? "" : ", ") + data.Where(key);
  }
  if (!ignored.empty()) Log().warn("config: {} data does not read {}: ignored", kind.name, ignored);
}

DataCommon CommonOf(const Options& data) {
  DataCommon common;
  DataCommon::Table().ReadKnown(data, &common);
  ParseLastBatchHandle(common.last_batch_handle);  // names a wrong value
  // Note [Sharding]: workers slice each global batch, or (sharding: parts) read MXNet's parts.
  if (common.sharding != "global_batch" && common.sharding != "parts") {
    FailData("key '" + data.Where("sharding") + "': '" + common.sharding +
             "' is not global_batch or parts");
  }
  if (common.sharding == "parts" && (common.kind == "text" || common.kind == "imagerecord")) {
    FailData("key '" + data.Where("sharding") + "': " + common.kind +
             " data always slices the global batch (sharding: global_batch)");
  }
  return common;
}

DataIters MakeDataItersOrThrow(const Options& data, const DataContext& context) {
  DataSetup setup;
  setup.context = context;
  setup.common = CommonOf(data);
  const auto sharding = setup.common.sharding == "parts" ? BatchOptions::Sharding::kParts
                                                         : BatchOptions::Sharding::kGlobalBatch;
  setup.train = {.batch_size = context.batch_per_worker,
                 .shuffle = setup.common.shuffle,
                 .seed = context.seed,
                 .last_batch = ParseLastBatchHandle(setup.common.last_batch_handle),
                 .num_parts = context.num_workers,
                 .part_index = context.rank,
                 .sharding = sharding};
  setup.val = {.batch_size = context.batch_per_worker,
               .shuffle = false,
               .seed = context.seed,
               .num_parts = context.num_workers,
               .part_index = context.rank,
               .sharding = sharding};
  DataIters out = KindNamed(setup.common.kind).make(data, setup);
  // A fixed number of batches per epoch (data.batches_per_epoch), e.g. for benchmarks.
  if (const int64_t n = setup.common.batches_per_epoch; n > 0) {
    out.train = std::make_unique<ResizeIter>(std::move(out.train), n);
    out.train_samples = n * context.batch_per_worker;
  }
  return out;
}

}  // namespace

const OptionTable<DataCommon>& DataCommon::Table() {
  using D = DataCommon;
  static const OptionTable<D> table = [] {
    OptionTable<D> t("data");
    t.Field("kind", &D::kind, "mnist, csv, text, imagerecord or synthetic")
        .Field("shuffle", &D::shuffle, "a new order of the training samples every epoch")
        .Field("prefetch", &D::prefetch, "read the next batches on a thread of their own")
        .Field("last_batch_handle", &D::last_batch_handle,
               "a last training batch short of samples: pad, discard or roll_over (MXNet's)")
        .Field("batches_per_epoch", &D::batches_per_epoch,
               "a fixed number of training batches an epoch (0: the data's)", 0, kMaxDataCount)
        .Field("sharding", &D::sharding,
               "global_batch: workers slice each global batch; parts: MXNet's num_parts");
    return t;
  }();
  return table;
}

std::unique_ptr<DataIter> DataSetup::Wrap(std::unique_ptr<DataIter> it, int depth) const {
  if (!common.prefetch) return it;
  return std::make_unique<PrefetchingIter>(std::move(it), depth);
}

const std::vector<DataKind>& DataKinds() {
  static const std::vector<DataKind> kinds = {MnistDataKind(), CsvDataKind(), TextDataKind(),
                                              ImageRecordDataKind(), SyntheticDataKind()};
  return kinds;
}

void FailData(const std::string& message) {
  throw ConfigError("config: " + message, __FILE__, __LINE__);
}

void RequireDataWith(const Options& data, const std::string& key, const std::string& partner) {
  if (!data.Get<std::string>(key, "").empty() && data.Get<std::string>(partner, "").empty()) {
    FailData("key '" + data.Where(key) + "' is given without '" + data.Where(partner) + "'");
  }
}

void RequireDataFile(const Options& data, const std::string& key) {
  const std::string path = data.Get<std::string>(key, "");
  if (path.empty()) FailData("key '" + data.Where(key) + "' is required");
  if (!std::filesystem::exists(path)) {
    FailData("key '" + data.Where(key) + "': file '" + path + "' does not exist");
  }
}

void CheckDataShape(const Options& data, const std::string& key, const std::vector<int64_t>& dims) {
  if (dims.empty()) {  // [] would be one scalar feature a sample
    FailData("key '" + data.Where(key) + "' must list at least one size");
  }
  double elements = 1;
  for (int64_t d : dims) {
    if (d <= 0) FailData("key '" + data.Where(key) + "' must list positive sizes");
    elements *= static_cast<double>(d);
  }
  if (elements >= kMaxDataCount) {
    FailData("key '" + data.Where(key) + "' describes 2^31 elements or more");
  }
}

void CheckDataScale(const Options& data, double scale) {
  if (scale == 0 || !std::isfinite(scale)) {  // 0 would feed zeros, silently
    FailData("key '" + data.Where("scale") + "': " + std::to_string(scale) +
             " must be a finite nonzero multiplier");
  }
}

Shape ShapeOf(const std::vector<int64_t>& dims) { return Shape(std::span<const int64_t>(dims)); }

std::vector<OptionInfo> DataOptionKeys() {
  std::vector<OptionInfo> keys = DataCommon::Table().Infos({});
  // A key several kinds read is listed once, with each kind's doc, and its default where the
  // kinds agree on it (else each kind's in its doc).
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, OptionInfo>>> by_key;
  for (const DataKind& kind : DataKinds()) {
    for (const OptionInfo& key : kind.keys) {
      if (!by_key.count(key.key)) order.push_back(key.key);
      by_key[key.key].push_back({kind.name, key});
    }
  }
  for (const std::string& name : order) {
    const auto& readers = by_key[name];
    OptionInfo merged = readers[0].second;
    merged.doc.clear();
    bool alike = true;
    for (const auto& [kind, key] : readers) {
      COHORT_CHECK_EQ(key.type, merged.type) << "data." << name << ": kinds differ in its type";
      alike = alike && key.value == merged.value;
    }
    for (const auto& [kind, key] : readers) {
      merged.doc += (merged.doc.empty() ? "" : "; ") + kind + ": " + key.doc +
                    (alike ? "" : " (default " + key.value + ")");
    }
    if (!alike) merged.value = "";
    keys.push_back(merged);
  }
  return keys;
}

std::string DataKindOf(const Options& data) {
  DataCommon common;
  DataCommon::Table().ReadKnown(data, &common);
  return common.kind;
}

// The config was checked before, files included: what fails now is what the files hold (a
// truncated gzip, a CSV field that is not a number, a label count that differs), so it is a
// DataError (exit 2), as bad input is.
DataIters MakeDataIters(const Options& data, const DataContext& context) {
  try {
    return MakeDataItersOrThrow(data, context);
  } catch (const ConfigError&) {
    throw;
  } catch (const DataError&) {
    throw;
  } catch (const Error& e) {
    throw DataError(e.message(), e.file(), e.line());
  }
}

void CheckDataOptions(const Options& data, const DataContext& context) {
  const DataCommon common = CommonOf(data);
  const DataKind& kind = KindNamed(common.kind);
  WarnOfKeysOfOtherKinds(data, kind);
  kind.check(data, context);
}

}  // namespace cohort
