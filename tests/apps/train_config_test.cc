// The configuration keys each part declares (Note [Declared options]): every key --help-config
// lists is accepted by the YAML reader at its listed default and read into the run's settings;
// defaults written once (setting every key to its listed default changes nothing).
#include "apps/train_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cohort {
namespace {

const std::string kBase = std::string(COHORT_TEST_DATA_DIR) + "/../../configs/synthetic_mlp.yaml";

std::string Dotted(const ConfigSection& section, const OptionInfo& key) {
  return (section.name.empty() ? "" : section.name + ".") + key.key;
}

// A value of the key's type where it lists no default (data keys: their kinds').
std::string SampleOf(const OptionInfo& key) {
  if (!key.value.empty()) return key.value;
  if (key.type == "int" || key.type == "int_or_auto") return "1";
  if (key.type == "float") return "0.5";
  if (key.type == "bool") return "true";
  if (key.type == "ints") return "[1, 2]";
  if (key.type == "floats") return "[0.5]";
  if (key.type == "strings" || key.type == "paths") return "[a]";
  return "a";
}

// What a parsed configuration holds, through every part's table.
std::string Settings(const RunConfig& c) {
  return RunConfig::Table().Show(c) + " | " + ModelConfig::Table().Show(c.model) + " | " +
         FitConfig::TrainingTable().Show(c.fit) + " | " + FitConfig::CheckpointTable().Show(c.fit) +
         " | " + FitConfig::FineTuningTable().Show(c.fit) + " | " + c.fit.optimizer + " " +
         OptimizerOptions::Table().Show(c.fit.optimizer_options) + " | " +
         LRScheduleConfig::Table().Show(c.schedule) + " | " +
         InitializerOptions::Table().Show(c.fit.initializer) + " | rescale " +
         (c.fit.rescale_grad ? std::to_string(*c.fit.rescale_grad) : "unset");
}

TEST(ConfigKeys, EveryListedKeyIsAcceptedAtItsDefault) {
  size_t count = 0;
  for (const ConfigSection& section : ConfigKeys()) {
    for (const OptionInfo& key : section.keys) {
      const std::string set = Dotted(section, key) + "=" + SampleOf(key);
      SCOPED_TRACE(set);
      EXPECT_FALSE(key.type.empty());
      EXPECT_FALSE(key.doc.empty());
      const YAML::Node root = LoadConfig(kBase, {set});
      // The data keys of other kinds are read by their kinds; a string listed without a default
      // (log_level: the environment's) takes only the values its part knows.
      if (section.name != "data" && !(key.value.empty() && key.type == "string")) {
        EXPECT_NO_THROW(ParseRunConfig(root));
      }
      ++count;
    }
  }
  EXPECT_GT(count, 100u);
}

// Every default is the part's own: an empty configuration and one that sets every key of the
// parts' tables to its listed default parse alike.
TEST(ConfigKeys, ListedDefaultsAreTheDefaults) {
  std::vector<std::string> defaults;
  for (const ConfigSection& section : ConfigKeys()) {
    if (section.name == "data") continue;
    for (const OptionInfo& key : section.keys) {
      if (!key.value.empty()) defaults.push_back(Dotted(section, key) + "=" + key.value);
    }
  }
  // The base file's own settings (model, data, optimizer, ...) unset first.
  std::vector<std::string> unset = {"model=",   "batch_size=", "devices=", "optimizer=",
                                    "metrics=", "epochs=",     "seed=",    "log_every="};
  RunConfig plain = ParseRunConfig(LoadConfig(kBase, unset));
  unset.insert(unset.end(), defaults.begin(), defaults.end());
  RunConfig listed = ParseRunConfig(LoadConfig(kBase, unset));
  EXPECT_EQ(Settings(plain), Settings(listed));
}

TEST(ConfigKeys, EachPartReadsItsKeys) {
  const RunConfig c = ParseRunConfig(LoadConfig(
      kBase, {"optimizer.name=adam", "optimizer.beta2=0.95", "lr_schedule.name=cosine",
              "lr_schedule.max_epochs=2", "initializer.name=msra", "initializer.slope=0.5",
              "checkpoint.every_steps=7", "checkpoint.prefix=/tmp/x", "model.allow_missing=true",
              "on_nonfinite=skip_step", "resume_epoch=auto", "threads=2"}));
  EXPECT_EQ(c.fit.optimizer, "adam");
  EXPECT_EQ(c.fit.optimizer_options.beta2, 0.95);
  EXPECT_EQ(c.fit.optimizer_options.epsilon, 1e-8);  // adam's own default
  EXPECT_EQ(c.fit.lr_schedule, "cosine");
  EXPECT_EQ(c.schedule.InUpdates(10, c.fit.epochs).max_update, 20);
  EXPECT_EQ(c.fit.initializer.kind, "msra");
  EXPECT_EQ(c.fit.initializer.slope, 0.5);
  EXPECT_EQ(c.fit.checkpoint_every_steps, 7);
  EXPECT_TRUE(c.fit.allow_missing);
  EXPECT_EQ(c.fit.on_nonfinite, OnNonFinite::kSkipStep);
  EXPECT_TRUE(c.fit.resume_latest);
  EXPECT_EQ(c.threads, 2);
  // An optimizer's own defaults are MXNet's for it: lamb's epsilon.
  EXPECT_EQ(
      ParseRunConfig(LoadConfig(kBase, {"optimizer.name=lamb"})).fit.optimizer_options.epsilon,
      1e-6);
}

std::string ErrorOf(const std::vector<std::string>& sets) {
  try {
    ParseRunConfig(LoadConfig(kBase, sets));
  } catch (const ConfigError& e) {
    return e.message();
  }
  return "";
}

TEST(ConfigKeys, RefusalsNameTheKey) {
  EXPECT_EQ(ErrorOf({"optimizer.lrr=0.1"}),
            "config: unknown key 'optimizer.lrr' (did you mean 'optimizer.lr'?)");
  EXPECT_EQ(ErrorOf({"epochs=0"}), "config: key 'epochs': 0 is outside [1, 1000000000]");
  EXPECT_EQ(ErrorOf({"seed=-1"}), "config: key 'seed': -1 is outside [0, 18446744073709551616]");
  EXPECT_EQ(ErrorOf({"model.name=gpt", "model.n_layer=5000"}),
            "config: key 'model.n_layer': 5000 is outside [1, 4096]");
  EXPECT_EQ(ErrorOf({"lr_schedule.name=factor", "lr_schedule.step_epochs=0"}), "");  // at run
  EXPECT_NE(ErrorOf({"optimizer.momentum=1"}).find("momentum 1 must be in [0, 1)"),
            std::string::npos);
}

TEST(ConfigKeys, HelpListsEveryKeyOnce) {
  const std::string help = ConfigHelp();
  EXPECT_EQ(help.rfind("key\ttype\tdefault\tdoc\n", 0), 0u);
  EXPECT_NE(help.find("optimizer.lr\tfloat\t0.01\t"), std::string::npos);
  EXPECT_NE(help.find("epochs\tint\t10\t"), std::string::npos);
  EXPECT_NE(help.find("model.n_layer\tint\t4\t"), std::string::npos);
  EXPECT_NE(help.find("resume_epoch\tint_or_auto\t0\t"), std::string::npos);
  EXPECT_NE(help.find("data.kind\tstring\tmnist\t"), std::string::npos);
  size_t lines = 0, at = 0;
  while ((at = help.find('\n', at)) != std::string::npos) ++lines, ++at;
  size_t keys = 0;
  for (const ConfigSection& s : ConfigKeys()) keys += s.keys.size();
  EXPECT_EQ(lines, keys + 1);
}

}  // namespace
}  // namespace cohort
