// The cost model of cohort-plan (Note [Scaling model]).
#include "apps/scaling_plan.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "apps/model_shapes.h"
#include "base/error.h"
#include "kvstore/overlapped_push_pull.h"

namespace cohort::plan {
namespace {

double Ring(double bytes, int p, const Link& link) {
  if (p <= 1) return 0;
  return 2.0 * (p - 1) * link.latency_s + 2.0 * (p - 1) / p * bytes / link.bytes_per_s;
}

double Tree(double bytes, int p, const Link& link) {
  if (p <= 1) return 0;
  return 2.0 * std::ceil(std::log2(static_cast<double>(p))) *
         (link.latency_s + bytes / link.bytes_per_s);
}

double Flat(double bytes, int p, const Link& link, Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing: return Ring(bytes, p, link);
    case Algorithm::kTree: return Tree(bytes, p, link);
    case Algorithm::kAuto: break;
  }
  return std::min(Ring(bytes, p, link), Tree(bytes, p, link));
}

// Reduce to (or broadcast from) one device of k over the link: a pipelined chain.
double InsideHost(double bytes, int k, const Link& link) {
  if (k <= 1) return 0;
  return (k - 1) * link.latency_s + static_cast<double>(k - 1) / k * bytes / link.bytes_per_s;
}

}  // namespace

double AllReduceSeconds(double bytes, int devices, const Topology& topology, Algorithm algorithm) {
  const int per_host = std::max(1, topology.devices_per_host);
  if (devices <= per_host) return Flat(bytes, devices, topology.intra, algorithm);
  const int hosts = (devices + per_host - 1) / per_host;
  if (!topology.hierarchical) return Flat(bytes, devices, topology.inter, algorithm);
  return 2 * InsideHost(bytes, per_host, topology.intra) +
         Flat(bytes, hosts, topology.inter, algorithm);
}

ModelCost AnalyzeModel(const Symbol& net, const std::map<std::string, Shape>& inputs,
                       double flops_per_s, double elementwise_flops) {
  COHORT_CHECK(flops_per_s > 0) << "the device speed must be positive";
  const ModelShapes shapes = InferModelShapes(net, inputs);
  COHORT_CHECK(shapes.shapes.complete) << "some shapes of the network are unknown; give every "
                                          "input's shape with --shape NAME=DIMS";
  ModelCost model;
  COHORT_CHECK(!inputs.empty() && inputs.begin()->second.ndim() > 0) << "no input shape given";
  model.batch = inputs.begin()->second[0];
  std::unordered_map<std::string, int> key_of;
  const std::vector<std::string> args = net.ListArguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (shapes.IsInput(args[i])) continue;
    key_of[args[i]] = static_cast<int>(model.key_names.size());
    model.key_names.push_back(args[i]);
    model.key_bytes.push_back(shapes.shapes.arguments[i].Size() * 4);
  }
  for (const auto& node : net.TopoOrder()) {
    if (node->is_variable()) continue;
    LayerCost layer;
    layer.name = node->name;
    layer.op = node->op;
    const Shape& out = shapes.output.at(node->name);
    const double out_elements = static_cast<double>(out.Size());
    double forward = elementwise_flops * out_elements, backward = forward;
    const bool dense = node->op == "FullyConnected" || node->op == "Convolution";
    if (dense && node->inputs.size() > 1) {
      const Shape& w = shapes.variable.at(node->inputs[1].node->name);
      // Multiply-adds per output element: the weight's elements per output channel.
      forward = 2.0 * out_elements * static_cast<double>(w.Size() / std::max<int64_t>(1, w[0]));
      backward = 2 * forward;  // the data gradient and the weight gradient
    }
    layer.forward_s = forward / flops_per_s;
    layer.backward_s = backward / flops_per_s;
    std::set<int> keys;
    for (const NodeEntry& e : node->inputs) {
      auto it = key_of.find(e.node->name);
      if (e.node->is_variable() && it != key_of.end()) keys.insert(it->second);
    }
    layer.keys.assign(keys.begin(), keys.end());
    model.layers.push_back(std::move(layer));
  }
  return model;
}

void ScaleCompute(ModelCost* model, double step_s) {
  double total = 0;
  for (const LayerCost& l : model->layers) total += l.forward_s + l.backward_s;
  COHORT_CHECK(total > 0 && step_s > 0) << "nothing to scale";
  for (LayerCost& l : model->layers) {
    l.forward_s *= step_s / total;
    l.backward_s *= step_s / total;
  }
}

int ApplyProfile(ModelCost* model, const std::string& profile_path) {
  std::ifstream in(profile_path);
  COHORT_CHECK(in) << "cannot read the profile '" << profile_path << "'";
  std::unordered_map<std::string, std::pair<double, double>> ops;
  std::unordered_map<std::string, double> phases;
  std::string line;
  bool in_ops = false;
  while (std::getline(in, line)) {
    if (line.starts_with("op\t")) {
      in_ops = true;
      continue;
    }
    std::istringstream fields(line);
    std::string name, second;
    double forward_ms = 0, backward_ms = 0;
    if (!in_ops) {  // the phase rows: "NAME\tMS\tSHARE"
      if (fields >> name >> forward_ms) phases[name] = forward_ms * 1e-3;
      continue;
    }
    if (fields >> name >> second >> forward_ms >> backward_ms) {
      ops[name] = {forward_ms * 1e-3, backward_ms * 1e-3};
    }
  }
  COHORT_CHECK(!ops.empty()) << "'" << profile_path << "' has no op rows (expected "
                             << "the output of cohort-train --profile)";
  int matched = 0;
  for (LayerCost& l : model->layers) {
    auto it = ops.find(l.name);
    if (it == ops.end()) continue;
    l.forward_s = it->second.first;
    l.backward_s = it->second.second;
    ++matched;
  }
  // The phases are the wall time of a step (the slowest device, and what lies between ops):
  // the layers keep their shares of them.
  double forward = 0, backward = 0;
  for (const LayerCost& l : model->layers) forward += l.forward_s, backward += l.backward_s;
  for (LayerCost& l : model->layers) {
    if (phases.count("forward") && forward > 0) l.forward_s *= phases["forward"] / forward;
    if (phases.count("backward") && backward > 0) l.backward_s *= phases["backward"] / backward;
  }
  if (phases.count("update")) model->update_s = phases["update"];
  return matched;
}

StepPrediction PredictStep(const ModelCost& model, int devices, const Topology& topology,
                           const PlanOptions& options) {
  StepPrediction p;
  p.devices = devices;
  p.hosts = (devices + std::max(1, topology.devices_per_host) - 1) /
            std::max(1, topology.devices_per_host);
  double forward = 0, backward = 0;
  for (const LayerCost& l : model.layers) forward += l.forward_s, backward += l.backward_s;
  // When backward has made each key's gradient: after the backward of the first (in forward
  // order) layer that reads it, backward running the layers in reverse.
  const size_t keys = model.key_bytes.size();
  std::vector<double> ready(keys, forward + backward);
  double t = forward;
  for (auto it = model.layers.rbegin(); it != model.layers.rend(); ++it) {
    t += it->backward_s;
    for (int k : it->keys) ready[static_cast<size_t>(k)] = t;
  }
  // Buckets over the keys by falling priority (= index), as GradientBucketer plans them.
  std::vector<size_t> bytes;
  for (size_t k = keys; k-- > 0;) bytes.push_back(static_cast<size_t>(model.key_bytes[k]));
  const auto buckets = PlanBuckets(bytes, static_cast<size_t>(options.bucket_bytes));
  double comm_end = forward + backward;
  if (devices > 1) {
    double free_at = options.overlap ? 0 : forward + backward;
    for (const auto& [begin, end] : buckets) {
      double bucket_ready = 0, bucket_bytes = 0;
      for (size_t i = begin; i < end; ++i) {
        const size_t key = keys - 1 - i;
        bucket_ready = std::max(bucket_ready, ready[key]);
        bucket_bytes += static_cast<double>(bytes[i]);
      }
      const double start = std::max(free_at, bucket_ready);
      free_at = start + AllReduceSeconds(bucket_bytes * options.wire_fraction, devices, topology,
                                         options.algorithm);
    }
    comm_end = std::max(comm_end, free_at);
  }
  p.compute_s = forward + backward + model.update_s;
  p.step_s = comm_end + model.update_s;
  p.exposed_comm_s = p.step_s - p.compute_s;
  p.efficiency = p.compute_s / p.step_s;  // the one-device step is the compute alone
  return p;
}

Link FitLink(const std::vector<std::pair<double, double>>& bytes_seconds, int participants) {
  COHORT_CHECK(bytes_seconds.size() >= 2 && participants >= 2)
      << "a link fit needs timings of at least two sizes over at least two "
         "participants";
  // Weighted by 1 / time^2, so that the fit minimises relative errors: the small sizes, whose
  // times are thousands of times shorter, count as much as the large ones.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : bytes_seconds) {
    COHORT_CHECK(y > 0) << "an all-reduce time of " << y << " s";
    const double w = 1 / (y * y);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / sw;
  COHORT_CHECK(slope > 0) << "all-reduce times do not grow with size; cannot fit "
                             "a bandwidth";
  const double p = participants;
  return {.latency_s = std::max(0.0, intercept) / (2 * (p - 1)),
          .bytes_per_s = 2 * (p - 1) / (p * slope)};
}

std::vector<std::pair<double, double>> ReadAllreduceBench(const std::string& path,
                                                          int* participants) {
  std::ifstream in(path);
  COHORT_CHECK(in) << "cannot read '" << path << "'";
  std::vector<std::pair<double, double>> rows;
  std::string line;
  *participants = 0;
  while (std::getline(in, line)) {
    int workers = 0, devices = 0;
    char kind[32];
    if (std::sscanf(line.c_str(), "# kvstore %31[^,], %d worker(s) x %d device(s)", kind, &workers,
                    &devices) == 3) {
      *participants = workers * devices;
      continue;
    }
    if (line.starts_with("#")) continue;
    double bytes = 0, count = 0, micros = 0;
    char type[16];
    if (std::sscanf(line.c_str(), "%lf %lf %15s %lf", &bytes, &count, type, &micros) == 4) {
      rows.push_back({bytes, micros * 1e-6});
    }
  }
  COHORT_CHECK(*participants >= 2 && rows.size() >= 2)
      << "'" << path << "' is not cohort-allreduce-bench output of two or more "
      << "participants and sizes";
  return rows;
}

}  // namespace cohort::plan
