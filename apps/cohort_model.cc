// cohort-model: inspect a network.
//   cohort-model summary SYMBOL.json --shape data=N,C,H,W [--shape name=...]...
// prints one row per op node (name, op, output shape, parameters) and the totals; a model zoo
// name (mlp, lenet) works in place of a file. Exit code 2 with one line on a bad file or shapes.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "symbol/models/models.h"
#include "symbol/symbol.h"

namespace cohort {
namespace {

std::map<std::string, Shape> ParseShapes(const std::vector<std::string>& specs) {
  std::map<std::string, Shape> shapes;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    COHORT_CHECK(eq != std::string::npos && eq > 0)
        << "--shape '" << spec << "': expected NAME=DIMS, e.g. data=1,1,28,28";
    shapes[spec.substr(0, eq)] = Shape::Parse(spec.substr(eq + 1));
  }
  return shapes;
}

int Summary(const std::string& source, const std::vector<std::string>& shape_specs) {
  const bool is_file = std::filesystem::exists(source) || source.ends_with(".json");
  const Symbol net = is_file ? Symbol::Load(source) : models::ByName(source);
  const std::map<std::string, Shape> given = ParseShapes(shape_specs);
  const Symbol::Shapes shapes = net.InferShape(given);
  // Shapes of every internal output, from the internals symbol.
  const Symbol internals = net.GetInternals();
  const Symbol::Shapes inner = internals.InferShape(given);
  const std::vector<std::string> inner_names = internals.ListOutputs();
  std::unordered_map<std::string, Shape> output_shape;
  for (size_t i = 0; i < inner_names.size(); ++i) output_shape[inner_names[i]] = inner.outputs[i];
  std::unordered_map<std::string, Shape> var_shape;
  const auto args = net.ListArguments(), aux = net.ListAuxiliaryStates();
  for (size_t i = 0; i < args.size(); ++i) var_shape[args[i]] = shapes.arguments[i];
  for (size_t i = 0; i < aux.size(); ++i) var_shape[aux[i]] = shapes.auxiliary[i];
  const std::set<std::string> aux_set(aux.begin(), aux.end());
  auto is_input = [&](const std::string& v) {
    return given.count(v) > 0 || (v.size() >= 5 && v.compare(v.size() - 5, 5, "label") == 0);
  };
  std::printf("%-28s %-24s %-22s %12s\n", "node", "op", "output shape", "parameters");
  int64_t total = 0, total_aux = 0;
  for (const auto& node : net.TopoOrder()) {
    if (node->is_variable()) continue;
    int64_t params = 0;
    for (const NodeEntry& e : node->inputs) {
      if (!e.node->is_variable() || is_input(e.node->name)) continue;
      const Shape& s = var_shape[e.node->name];
      const int64_t n = op::ShapeKnown(s) ? s.Size() : 0;
      (aux_set.count(e.node->name) ? total_aux : params) += n;
    }
    total += params;
    const std::string out_name = node->name + "_" + node->impl->ListOutputs()[0];
    const auto it = output_shape.find(out_name);
    const std::string shape =
        it != output_shape.end() && op::ShapeKnown(it->second) ? it->second.ToString() : "?";
    std::printf("%-28s %-24s %-22s %12lld\n", node->name.c_str(), node->op.c_str(), shape.c_str(),
                static_cast<long long>(params));
  }
  std::printf("Total parameters: %lld\n", static_cast<long long>(total));
  if (total_aux) std::printf("Auxiliary states: %lld\n", static_cast<long long>(total_aux));
  if (!shapes.complete) {
    std::fprintf(stderr, "cohort-model: some shapes are unknown (\"?\"): give more --shape\n");
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
  summary->add_option("SYMBOL", source, "symbol JSON file, or a zoo model: mlp, lenet, resnetN, mobilenet, gpt")->required();
  summary->add_option("--shape", shapes, "input shape, NAME=DIMS (e.g. data=1,1,28,28)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return cohort::Summary(source, shapes);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "cohort-model: %s\n", e.what());
    return 2;
  }
}
