// cohort-predict: runs a trained network over a data set and writes one CSV row per sample.
//   cohort-predict --config FILE.yaml --symbol PREFIX-symbol.json --params PREFIX-NNNN.params
//                  [--set key=value]... --out preds.csv
// The data (the validation split of the config, else its training split, in order), devices
// and batch size come from the configuration. Each row: the predicted class (argmax over the
// class axis; one per position, in order, for an output of more than two axes), then the output
// values. Any network runs, with or without a label input (an identity network writes
// what the iterator serves); every parameter it has must be in --params. Bucketed text
// (data.buckets) gives each row the positions of its bucket. Exit code 2 with one line on bad
// input.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <set>

#include "apps/tool_main.h"
#include "apps/train_config.h"
#include "base/atomic_file.h"
#include "base/logging.h"
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

int Predict(const std::string& config_path, const std::vector<std::string>& sets,
            const std::string& symbol_path, const std::string& params_path,
            const std::string& out) {
  YAML::Node root = LoadConfig(config_path, sets);
  root["data"]["shuffle"] = false;
  RunConfig config = ParseRunConfig(root);
  const Symbol symbol = Symbol::Load(symbol_path);
  std::map<std::string, NDArray> args, aux;
  if (!params_path.empty()) LoadArgAuxParams(params_path, &args, &aux);
  DataIters data = MakeDataIters(config, config.batch_size, 0, 1);
  DataIter& iter = data.val ? *data.val : *data.train;
  // Every parameter and auxiliary state the network needs must come from the file: running on
  // arrays nobody set would print confident garbage.
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
  Trainer trainer(symbol, config.devices, config.work_load);
  trainer.SetParams(args, aux, params_path);
  // Written whole or not at all: a failure halfway leaves what --out held.
  std::unique_ptr<AtomicFileWriter> file;
  try {
    file = std::make_unique<AtomicFileWriter>(out);
  } catch (const Error& e) {
    throw ConfigError("--out: " + e.message(), __FILE__, __LINE__);
  }
  int64_t written = 0;
  std::string line;
  char text[32];
  // Batch by batch: bucketed text gives rows of as many positions as their bucket.
  trainer.Predict(iter, [&](const NDArray& preds) {
    const int64_t rows = preds.shape()[0], cols = rows > 0 ? preds.size() / rows : 0;
    const int axis = ClassAxis(symbol, preds.shape());
    const int64_t classes = axis > 0 ? preds.shape()[axis] : cols;
    const int64_t positions = classes > 0 ? cols / classes : 0;
    // Class c of position i: (N, C, positions) under multi_output, else (N, positions, C).
    const int64_t class_stride = axis == 1 && preds.shape().ndim() > 2 ? positions : 1;
    const int64_t position_stride = class_stride == 1 ? classes : 1;
    const float* values = preds.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = values + r * cols;
      line.clear();
      for (int64_t i = 0; i < positions; ++i) {
        int64_t best = 0;
        for (int64_t c = 1; c < classes; ++c) {
          if (row[i * position_stride + c * class_stride] >
              row[i * position_stride + best * class_stride]) {
            best = c;
          }
        }
        if (i > 0) line += ',';
        line += std::to_string(best);
      }
      for (int64_t c = 0; c < cols; ++c) {
        std::snprintf(text, sizeof(text), ",%.7g", row[c]);
        line += text;
      }
      line += '\n';
      file->Write(line.data(), line.size());
    }
    written += rows;
  });
  file->Commit();
  Log().info("cohort-predict: wrote {} rows to {}", written, out);
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Predict with a trained network"};
  std::string config, symbol, params, out;
  std::vector<std::string> sets;
  app.add_option("--config", config, "YAML configuration (data, devices, batch size)")->required();
  app.add_option("--symbol", symbol, "symbol JSON")->required();
  app.add_option("--params", params,
                 ".params file (arg:/aux: names); may be left out for a network without "
                 "parameters");
  app.add_option("--set", sets, "override a configuration key: key.sub=value");
  app.add_option("--out", out, "CSV file to write")->required();
  return cohort::ParseAndRun(app, argc, argv, "cohort-predict",
                             [&] { return cohort::Predict(config, sets, symbol, params, out); });
}
