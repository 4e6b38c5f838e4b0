// cohort-model: inspect a network.
//   cohort-model summary SYMBOL.json --shape data=N,C,H,W [--shape name=...]...
// prints one row per op node (name, op, output shape, parameters) and the totals; a model zoo
// name (mlp, lenet) works in place of a file, with its model keys (--set num_classes=100, as
// cohort-train's model section takes them). Exit code 2 with one line on a bad file or shapes.
//   cohort-model list
// lists the zoo's models with the model keys each reads.
//   cohort-model ops [NAME]
// lists every operator with its inputs and parameters (type, default), or one operator in full
// with the descriptions: the registry's declarations (Note [Operator specs]).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "apps/model_shapes.h"
#include "apps/tool_main.h"
#include "apps/train_config.h"

namespace cohort {
namespace {

// The zoo and each model's keys, with their defaults and docs (the model section's table).
int List() {
  std::map<std::string, OptionInfo> infos;
  for (const OptionInfo& info : ModelConfig::Table().Infos({})) infos[info.key] = info;
  for (const ZooEntry& model : ZooModels()) {
    std::printf("%s: %s\n", model.name.c_str(), model.about.c_str());
    for (const std::string& key : model.keys) {
      const OptionInfo& info = infos.at(key);
      std::printf("  %-12s %-6s %-8s %s\n", key.c_str(), info.type.c_str(), info.value.c_str(),
                  info.doc.c_str());
    }
  }
  std::printf("(summary NAME --set KEY=VALUE sets a key; cohort-train reads them as model.KEY)\n");
  return 0;
}

int Summary(const std::string& source, const std::vector<std::string>& shape_specs,
            const std::vector<std::string>& model_keys) {
  if (!model_keys.empty() && std::filesystem::is_regular_file(source)) {
    throw ConfigError("--set: model keys are for zoo models (cohort-model list); '" + source +
                          "' is a symbol file",
                      __FILE__, __LINE__);
  }
  const Symbol net = model_keys.empty() ? LoadModel(source) : ZooModel(source, model_keys);
  const ModelShapes m = InferModelShapes(net, ParseShapeOptions(shape_specs));
  const auto aux = net.ListAuxiliaryStates();
  const std::set<std::string> aux_set(aux.begin(), aux.end());
  // Counts from unknown shapes would be 0: a wrong total, so none is printed (exit 2).
  std::string unknown_params, inputs;
  for (const std::string& name : net.ListInputs()) {  // in the network's order
    const Shape& shape = m.variable.at(name);
    if (m.IsInput(name)) continue;
    const bool parameter = name.ends_with("_weight") || name.ends_with("_bias") ||
                           name.ends_with("_gamma") || name.ends_with("_beta") ||
                           aux_set.count(name) > 0;
    if (!parameter) {
      inputs += (inputs.empty() ? "" : ", ") + name;
    } else if (!op::ShapeKnown(shape) && unknown_params.empty()) {
      unknown_params = name;
    }
  }
  if (!unknown_params.empty()) {
    throw ConfigError("the shape of '" + unknown_params +
                          "' is unknown, so the parameters cannot be counted: give the input "
                          "shapes with --shape NAME=DIMS" +
                          (inputs.empty() ? "" : " (inputs without one: " + inputs + ")"),
                      __FILE__, __LINE__);
  }
  std::printf("%-28s %-24s %-22s %12s\n", "node", "op", "output shape", "parameters");
  int64_t total = 0, total_aux = 0;
  // A variable read by several nodes (tied weights: a language model's head reading the token
  // embedding) counts once, at its first reader; later readers name it as shared.
  std::set<std::string> counted;
  for (const auto& node : net.TopoOrder()) {
    if (node->is_variable()) continue;
    int64_t params = 0;
    std::string shared;
    for (const NodeEntry& e : node->inputs) {
      if (!e.node->is_variable() || m.IsInput(e.node->name)) continue;
      if (!counted.insert(e.node->name).second) {
        shared += (shared.empty() ? "  (shares " : ", ") + e.node->name;
        continue;
      }
      const Shape& s = m.variable.at(e.node->name);
      const int64_t n = op::ShapeKnown(s) ? s.Size() : 0;
      (aux_set.count(e.node->name) ? total_aux : params) += n;
    }
    if (!shared.empty()) shared += ")";
    total += params;
    const auto it = m.output.find(node->name);
    const std::string shape =
        it != m.output.end() && op::ShapeKnown(it->second) ? it->second.ToString() : "?";
    std::printf("%-28s %-24s %-22s %12lld%s\n", node->name.c_str(), node->op.c_str(),
                shape.c_str(), static_cast<long long>(params), shared.c_str());
  }
  std::printf("Total parameters: %lld\n", static_cast<long long>(total));
  if (total_aux) std::printf("Auxiliary states: %lld\n", static_cast<long long>(total_aux));
  if (!m.shapes.complete) {
    std::fprintf(stderr, "cohort-model: some shapes are unknown (\"?\"): give more --shape\n");
  }
  return 0;
}

// "name: type = default" (or "name: type, required").
std::string ParamLine(const op::ParamSpec& p) {
  return p.name + ": " + p.type + (p.default_text ? " = " + *p.default_text : ", required");
}

// The aliases of each canonical op name.
std::map<std::string, std::vector<std::string>> AliasesByOp() {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [alias, name] : op::OpRegistry::Get().aliases()) out[name].push_back(alias);
  return out;
}

int Ops(const std::string& name) {
  const op::OpRegistry& registry = op::OpRegistry::Get();
  const auto aliases = AliasesByOp();
  auto joined = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
  };
  if (name.empty()) {
    for (const std::string& op_name : registry.Names()) {
      const op::OpSpec& spec = registry.Spec(op_name);
      std::vector<std::string> params;
      for (const auto& p : spec.params) params.push_back(ParamLine(p));
      std::printf("%s(%s%s%s)", op_name.c_str(), joined(spec.inputs).c_str(),
                  spec.var_inputs.empty() ? "" : "...",
                  params.empty() ? "" : ("; " + joined(params)).c_str());
      if (auto it = aliases.find(op_name); it != aliases.end()) {
        std::printf("  aliases: %s", joined(it->second).c_str());
      }
      std::printf("\n");
    }
    return 0;
  }
  if (!registry.Has(registry.Canonical(name))) {
    throw ConfigError("unknown operator '" + name + "': `cohort-model ops` lists them", __FILE__,
                      __LINE__);
  }
  const std::string& canonical = registry.Canonical(name);
  const op::OpSpec& spec = registry.Spec(canonical);
  std::printf("%s\n\n%s\n", canonical.c_str(), spec.doc.c_str());
  if (auto it = aliases.find(canonical); it != aliases.end()) {
    std::printf("\nAliases: %s\n", joined(it->second).c_str());
  }
  std::printf("\nInputs: %s%s\n", spec.inputs.empty() ? "none" : joined(spec.inputs).c_str(),
              spec.var_inputs.empty() ? "" : (" (as many as " + spec.var_inputs + ")").c_str());
  std::printf("\nParameters:%s\n", spec.params.empty() ? " none" : "");
  for (const auto& p : spec.params) {
    std::printf("  %s\n      %s\n", ParamLine(p).c_str(), p.doc.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Inspect networks (MXNet symbol JSON or a model zoo name)"};
  app.require_subcommand(1);
  std::string source;
  std::vector<std::string> shapes;
  CLI::App* summary = app.add_subcommand("summary", "nodes, output shapes and parameter counts");
  summary
      ->add_option("SYMBOL", source,
                   "symbol JSON file, or a zoo model: mlp, lenet, resnetN, vggN, inceptionv3, "
                   "mobilenet, gpt")
      ->required();
  summary->add_option("--shape", shapes, "input shape, NAME=DIMS (e.g. data=1,1,28,28)");
  std::vector<std::string> model_keys;
  summary->add_option("--set", model_keys,
                      "a zoo model's key, KEY=VALUE (num_classes=100, d_model=256: "
                      "cohort-model list)");
  CLI::App* list = app.add_subcommand("list", "the zoo's models and the keys each reads");
  std::string op_name;
  CLI::App* ops = app.add_subcommand("ops", "the operators and their parameters, or one in full");
  ops->add_option("NAME", op_name, "an operator or alias (e.g. Convolution)");
  return cohort::ParseAndRun(app, argc, argv, "cohort-model", [&] {
    if (list->parsed()) return cohort::List();
    return ops->parsed() ? cohort::Ops(op_name) : cohort::Summary(source, shapes, model_keys);
  });
}
