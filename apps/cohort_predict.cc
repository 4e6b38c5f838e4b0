// cohort-predict: runs a trained network over a data set and writes one CSV row per sample.
//   cohort-predict --config FILE.yaml --symbol PREFIX-symbol.json --params PREFIX-NNNN.params
//                  [--set key=value]... --out preds.csv
// The data (the validation split of the config, else its training split, in order), devices
// and batch size come from the configuration. Each row: the predicted class (argmax), then the
// output values. Exit code 2 with one line on bad input.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>

#include "apps/train_config.h"
#include "base/logging.h"
#include "ndarray/params_io.h"
#include "trainer/checkpoint.h"

namespace cohort {
namespace {

int Predict(const std::string& config_path, const std::vector<std::string>& sets,
            const std::string& symbol_path, const std::string& params_path,
            const std::string& out) {
  YAML::Node root = LoadConfig(config_path, sets);
  root["data"]["shuffle"] = false;
  RunConfig config = ParseRunConfig(root);
  const Symbol symbol = Symbol::Load(symbol_path);
  std::map<std::string, NDArray> args, aux;
  LoadArgAuxParams(params_path, &args, &aux);
  DataIters data = MakeDataIters(root, config.batch_size, 0, 1, config.fit.seed);
  DataIter& iter = data.val ? *data.val : *data.train;
  Trainer trainer(symbol, config.devices, config.work_load);
  trainer.SetParams(args, aux);
  const NDArray preds = trainer.Predict(iter);
  std::ofstream file(out);
  if (!file) throw ConfigError("cannot write --out '" + out + "'", __FILE__, __LINE__);
  const int64_t rows = preds.shape()[0], cols = preds.size() / rows;
  const std::vector<float> values = preds.ToVector<float>();
  char text[32];
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = values.data() + r * cols;
    file << std::max_element(row, row + cols) - row;
    for (int64_t c = 0; c < cols; ++c) {
      std::snprintf(text, sizeof(text), ",%.7g", row[c]);
      file << text;
    }
    file << "\n";
  }
  Log().info("cohort-predict: wrote {} rows to {}", rows, out);
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
  app.add_option("--params", params, ".params file (arg:/aux: names)")->required();
  app.add_option("--set", sets, "override a configuration key: key.sub=value");
  app.add_option("--out", out, "CSV file to write")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return cohort::Predict(config, sets, symbol, params, out);
  } catch (const cohort::ConfigError& e) {
    std::fprintf(stderr, "cohort-predict: %s\n", e.message().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cohort-predict: %s\n", e.what());
    return 2;
  }
}
