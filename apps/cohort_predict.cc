// cohort-predict: runs a trained network over a data set and writes one CSV row per sample.
//   cohort-predict --config FILE.yaml --symbol PREFIX-symbol.json --params PREFIX-NNNN.params
//                  [--set key=value]... [--split train|val] [--top-k N] --out preds.csv
// The data (--split; by default the validation split of the config, else its training split, in
// order), devices and batch size come from the configuration. A header row, then per sample:
// its index in the data (record, row or item) and source (the file and place it was read from),
// its label where the data has one, the predicted class (argmax over the class axis; one per
// position, space-separated, for an output of more than two axes), and the output values: all of
// them (p0, p1, ...; the default for one prediction a row), or with --top-k N the N most likely
// classes and their values (the default for several positions a row, a language model's, is
// none: 0). Any network runs, with or without a label input (an identity network writes what the
// iterator serves); every parameter it has must be in --params. Bucketed text (data.buckets)
// gives each row the positions of its bucket. Where the data has a class map (--classes FILE,
// or the PREFIX.classes cohort-im2rec wrote beside image records' PREFIX.rec), one prediction a
// row also gets label_class and predicted_class: the classes' folder names. Exit code 2 with
// one line on bad input.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>

#include "apps/tool_main.h"
#include "apps/train_config.h"
#include "base/atomic_file.h"
#include "base/logging.h"
#include "io/im2rec.h"
#include "ndarray/params_io.h"
#include "operator/loss_output.h"
#include "trainer/checkpoint.h"

namespace cohort {
namespace {

// The axis of the network's output that holds the classes: 1 for a SoftmaxOutput with
// multi_output (MXNet's (N, C, d...) layout), else the last one (a softmax at each position of a
// sequence, as preserve_shape, or a plain (N, C)).
int ClassAxis(const Symbol& symbol, const Shape& out) {
  const std::shared_ptr<SymbolNode> head = symbol.TopoOrder().back();
  if (out.ndim() > 2 && head->op == "SoftmaxOutput" &&
      op::SoftmaxOutputParam::Parse(head->attrs).multi_output) {
    return 1;
  }
  return out.ndim() - 1;
}

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string NumberText(double v) {
  char text[32];
  if (v == static_cast<double>(static_cast<int64_t>(v)) && std::abs(v) < 1e15) {
    std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(text, sizeof(text), "%.7g", v);
  }
  return text;
}

struct PredictOptions {
  std::string config, symbol, params, out, split, classes;
  std::vector<std::string> sets;
  int top_k = -1;  // -1: every value for one prediction a row, none for several positions
};

// The class names: --classes', else the map cohort-im2rec wrote beside the image records read
// (PREFIX.classes for PREFIX.rec), else none.
std::vector<std::string> ClassNames(const RunConfig& config, const std::string& split, bool val,
                                    const std::string& given) {
  if (!given.empty()) return ReadClassMap(given);
  const YAML::Node data = config.root["data"];
  if (!data["kind"] || data["kind"].as<std::string>() != "imagerecord") return {};
  const YAML::Node rec = data[split == "train" || !val ? "train_rec" : "val_rec"];
  if (!rec || !rec.IsScalar()) return {};
  const std::string map = std::filesystem::path(rec.Scalar()).replace_extension(".classes");
  return std::filesystem::exists(map) ? ReadClassMap(map) : std::vector<std::string>{};
}

// The split --split names (by default the validation split where there is one).
DataIter& ChooseSplit(const DataIters& data, const std::string& split) {
  if (!split.empty() && split != "train" && split != "val") {
    throw ConfigError("--split: '" + split + "' is not train or val", __FILE__, __LINE__);
  }
  if (split == "val" && !data.val) {
    throw ConfigError("--split val: the configuration's data has no validation split", __FILE__,
                      __LINE__);
  }
  return split == "train" || !data.val ? *data.train : *data.val;
}

// Every parameter and auxiliary state the network needs must come from the file: running on
// arrays nobody set would print confident garbage.
void CheckParamsCoverTheNetwork(const Symbol& symbol, const DataIter& iter,
                                const std::map<std::string, NDArray>& args,
                                const std::map<std::string, NDArray>& aux,
                                const std::string& params_path) {
  std::set<std::string> inputs;
  for (const auto* descs : {&iter.provide_data(), &iter.provide_label()}) {
    for (const DataDesc& d : *descs) inputs.insert(d.name);
  }
  std::string missing;
  for (const std::string& a : symbol.ListArguments()) {
    if (!inputs.count(a) && !args.count(a)) missing += (missing.empty() ? "" : ", ") + a;
  }
  for (const std::string& a : symbol.ListAuxiliaryStates()) {
    if (!aux.count(a)) missing += (missing.empty() ? "" : ", ") + a;
  }
  if (!missing.empty()) {
    throw ConfigError((params_path.empty() ? std::string("no --params given")
                                           : "'" + params_path + "' lacks") +
                          ": the network needs " + missing,
                      __FILE__, __LINE__);
  }
}

// Where a batch's predictions keep each position's classes (bucketed text gives each batch
// the positions of its bucket), and which columns a row gets.
struct PredictionLayout {
  int64_t rows, cols, classes, positions, class_stride, position_stride;
  int top_k;  // -1: every value; 0: none; else the k most likely classes a position
  const std::vector<std::string>* names;  // class names (one prediction a row), or null

  PredictionLayout(const Symbol& symbol, const Shape& preds, int top_k_option,
                   const std::vector<std::string>& class_names) {
    rows = preds[0];
    cols = rows > 0 ? preds.Size() / rows : 0;
    const int axis = ClassAxis(symbol, preds);
    classes = axis > 0 ? preds[axis] : cols;
    positions = classes > 0 ? cols / classes : 0;
    // Class c of position i: (N, C, positions) under multi_output, else (N, positions, C).
    class_stride = axis == 1 && preds.ndim() > 2 ? positions : 1;
    position_stride = class_stride == 1 ? classes : 1;
    top_k = top_k_option >= 0 ? top_k_option : positions == 1 ? -1 : 0;
    names = positions == 1 && !class_names.empty() ? &class_names : nullptr;
  }

  // The name of class `c` ("" past the map's end: a class it does not know).
  std::string NameOf(double c) const {
    const auto i = static_cast<int64_t>(c);
    return i >= 0 && i < static_cast<int64_t>(names->size()) && i == c ? CsvField((*names)[i])
                                                                       : std::string();
  }

  std::string Header(bool labelled) const {
    std::string line = "index,source";
    if (labelled) line += names ? ",label,label_class" : ",label";
    line += names ? ",predicted,predicted_class" : ",predicted";
    for (int64_t i = 0; i < positions && top_k > 0; ++i) {
      const std::string at = positions == 1 ? "" : "pos" + std::to_string(i) + "_";
      for (int k = 1; k <= top_k; ++k) {
        line += "," + at + "top" + std::to_string(k) + "," + at + "p" + std::to_string(k);
      }
    }
    for (int64_t c = 0; c < cols && top_k < 0; ++c) line += ",p" + std::to_string(c);
    return line + '\n';
  }

  // The predicted class of each position, then the top-k or every value, of one row.
  void AppendPredictions(const float* row, std::vector<int64_t>& order, std::string& line) const {
    auto value = [&](int64_t i, int64_t c) { return row[i * position_stride + c * class_stride]; };
    line += ',';
    for (int64_t i = 0; i < positions; ++i) {
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c) {
        if (value(i, c) > value(i, best)) best = c;
      }
      line += (i ? " " : "") + std::to_string(best);
      if (names) line += "," + NameOf(static_cast<double>(best));
    }
    order.resize(static_cast<size_t>(classes));
    for (int64_t i = 0; i < positions && top_k > 0; ++i) {
      for (int64_t c = 0; c < classes; ++c) order[c] = c;
      const int64_t k = std::min<int64_t>(top_k, classes);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        return value(i, a) > value(i, b) || (value(i, a) == value(i, b) && a < b);
      });
      for (int64_t j = 0; j < top_k; ++j) {
        line += j < k ? "," + std::to_string(order[j]) + "," + NumberText(value(i, order[j]))
                      : std::string(",,");
      }
    }
    char text[32];
    for (int64_t c = 0; c < cols && top_k < 0; ++c) {
      std::snprintf(text, sizeof(text), ",%.7g", row[c]);
      line += text;
    }
  }
};

// One CSV row per sample of a batch: index, source, label where there is one, predictions.
// Returns the rows written.
int64_t WriteRows(const PredictionLayout& layout, const NDArray& preds, const DataBatch& batch,
                  const DataIter& iter, int64_t written, AtomicFileWriter& file) {
  const bool labelled = !iter.provide_label().empty();
  const NDArray labels = labelled ? batch.label[0].AsType(DType::kFloat32) : NDArray();
  const int64_t label_cols = labelled && layout.rows > 0 ? labels.size() / labels.shape()[0] : 0;
  std::vector<int64_t> order;
  std::string line;
  for (int64_t r = 0; r < layout.rows; ++r) {
    const int64_t index =
        r < static_cast<int64_t>(batch.index.size()) ? batch.index[r] : written + r;
    line = std::to_string(index) + "," + CsvField(iter.DescribeLabelOf(index));
    if (labelled) {
      line += ',';
      const float* label = labels.data<float>() + r * label_cols;
      for (int64_t j = 0; j < label_cols; ++j) line += (j ? " " : "") + NumberText(label[j]);
      if (layout.names) line += "," + (label_cols == 1 ? layout.NameOf(label[0]) : std::string());
    }
    layout.AppendPredictions(preds.data<float>() + r * layout.cols, order, line);
    line += '\n';
    file.Write(line.data(), line.size());
  }
  return layout.rows;
}

int Predict(const PredictOptions& o) {
  YAML::Node root = LoadConfig(o.config, o.sets);
  root["data"]["shuffle"] = false;
  RunConfig config = ParseRunConfig(root);
  const Symbol symbol = Symbol::Load(o.symbol);
  std::map<std::string, NDArray> args, aux;
  if (!o.params.empty()) LoadArgAuxParams(o.params, &args, &aux);
  DataIters data = MakeDataIters(config, config.batch_size, 0, 1);
  DataIter& iter = ChooseSplit(data, o.split);
  const std::vector<std::string> class_names =
      ClassNames(config, o.split, data.val != nullptr, o.classes);
  CheckParamsCoverTheNetwork(symbol, iter, args, aux, o.params);
  Trainer trainer(symbol, config.devices, config.work_load);
  trainer.SetParams(args, aux, o.params);
  // Written whole or not at all: a failure halfway leaves what --out held.
  std::unique_ptr<AtomicFileWriter> file;
  try {
    file = std::make_unique<AtomicFileWriter>(o.out);
  } catch (const Error& e) {
    throw ConfigError("--out: " + e.message(), __FILE__, __LINE__);
  }
  int64_t written = 0;
  trainer.Predict(iter, [&](const NDArray& preds, const DataBatch& batch) {
    const PredictionLayout layout(symbol, preds.shape(), o.top_k, class_names);
    if (written == 0) {  // the header, from the first batch's layout
      const std::string header = layout.Header(!iter.provide_label().empty());
      file->Write(header.data(), header.size());
    }
    written += WriteRows(layout, preds, batch, iter, written, *file);
  });
  file->Commit();
  Log().info("cohort-predict: wrote {} rows to {}", written, o.out);
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Predict with a trained network"};
  cohort::PredictOptions o;
  app.add_option("--config", o.config, "YAML configuration (data, devices, batch size)")
      ->required();
  app.add_option("--symbol", o.symbol, "symbol JSON")->required();
  app.add_option("--params", o.params,
                 ".params file (arg:/aux: names); may be left out for a network without "
                 "parameters");
  app.add_option("--set", o.sets, "override a configuration key: key.sub=value");
  app.add_option("--split", o.split,
                 "train or val (default: val where the configuration has it, else train)");
  app.add_option("--top-k", o.top_k,
                 "write the N most likely classes and their values instead of every value (0: "
                 "none; default: every value for one prediction a row, none for several)")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--out", o.out, "CSV file to write")->required();
  app.add_option("--classes", o.classes,
                 "class map (cohort-im2rec's PREFIX.classes) naming the classes in the CSV");
  return cohort::ParseAndRun(app, argc, argv, "cohort-predict", [&] { return cohort::Predict(o); });
}
