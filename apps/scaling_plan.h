// The cost model behind cohort-plan: how long a data-parallel training step takes on N devices,
// from a model's per-layer compute and parameter sizes, a topology's links, and the gradient
// bucket schedule of Note [Overlapped push].
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "symbol/symbol.h"

namespace cohort::plan {

// Note [Scaling model]
// A step is forward, then backward, with the gradients' all-reduce in buckets as in training:
// parameters take their key's priority (their index), buckets are PlanBuckets ranges over the
// keys by falling priority, and with overlap a communication thread reduces bucket j from
// max(ready_j, end of bucket j-1), where ready_j is when backward has made the last gradient of
// the bucket (the backward of the first layer that reads a parameter). Without overlap every
// bucket is reduced one after another once backward ends. step = forward + max(backward end,
// last reduction end) + update; exposed communication = step - forward - backward - update;
// efficiency = step(1 device) / step(N) (weak scaling: the batch per device stays).
// All-reduce of b bytes over p devices, a link being latency alpha and bandwidth beta:
//   ring  2 (p-1) alpha + 2 (p-1)/p b / beta        (Patarasuk & Yuan; NCCL's ring)
//   tree  2 ceil(log2 p) (alpha + b / beta)         (recursive doubling, small messages)
//   hierarchical: a reduce-scatter inside each host of k devices ((k-1) alpha + (k-1)/k b / beta
//   inside), a ring between the h hosts over the inter-host link (b/k from each of the k ranks at
//   once, sharing the host's link: the time of b from one leader), an all-gather inside the host
//   (as the reduce-scatter): Note [Hierarchical all-reduce].
// A flat ring that spans hosts runs at its slowest link, the inter-host one.

struct Link {
  double latency_s = 0;      // alpha
  double bytes_per_s = 1e9;  // beta
};

struct Topology {
  int devices_per_host = 1;
  Link intra, inter;
  bool hierarchical = false;
};

enum class Algorithm { kRing, kTree, kAuto };  // auto: the faster for each bucket

double AllReduceSeconds(double bytes, int devices, const Topology& topology, Algorithm algorithm);

// One op of the network in forward order, its times on one device, and the parameter keys it
// reads.
struct LayerCost {
  std::string name, op;
  double forward_s = 0, backward_s = 0;
  std::vector<int> keys;
};

struct ModelCost {
  std::vector<LayerCost> layers;       // forward order
  std::vector<std::string> key_names;  // the parameters, key = index
  std::vector<int64_t> key_bytes;
  double update_s = 0;  // the optimizer's step (from a profile), 0 when unknown
  int64_t batch = 0;    // samples per device
};

// The layers' work from the symbol and the input shapes: FullyConnected and Convolution cost
// 2 x multiply-adds (backward twice forward), other ops `elementwise_flops` per output element
// (backward as forward). Times are FLOPs / flops_per_s.
ModelCost AnalyzeModel(const Symbol& net, const std::map<std::string, Shape>& inputs,
                       double flops_per_s, double elementwise_flops = 8);
// Scales every layer so that forward + backward take `step_s` (a measured device speed).
void ScaleCompute(ModelCost* model, double step_s);
// Takes per-op times measured by `cohort-train --profile` (its op rows: name, type, forward_ms,
// backward_ms): the named ops get those times, other ops keep theirs; then forward and backward
// are scaled to the profile's phase rows (a step's wall time, which includes what lies between
// ops), and its "update" phase becomes the optimizer's time. Returns how many ops matched;
// throws naming the file when it has no op rows.
int ApplyProfile(ModelCost* model, const std::string& profile_path);

struct PlanOptions {
  double bucket_bytes = 4 << 20;
  bool overlap = true;
  Algorithm algorithm = Algorithm::kAuto;
  // Bytes on the wire per float32 gradient byte: 0.5 with gradient_compression bfloat16 or
  // float16 (Note [Gradient compression]); buckets are still planned over float32 bytes.
  double wire_fraction = 1.0;
};

struct StepPrediction {
  int devices = 1, hosts = 1;
  double step_s = 0, compute_s = 0, exposed_comm_s = 0, efficiency = 1;
};

StepPrediction PredictStep(const ModelCost& model, int devices, const Topology& topology,
                           const PlanOptions& options);

// A link's alpha and beta from all-reduce timings of `participants` devices over it (rows of
// bytes and seconds, e.g. cohort-allreduce-bench's): a line time = a + b bytes fitted to
// minimise relative errors,
// read through the ring's cost (a = 2 (p-1) alpha, b = 2 (p-1) / (p beta)). Throws when fewer
// than two sizes are given or the fit is not increasing.
Link FitLink(const std::vector<std::pair<double, double>>& bytes_seconds, int participants);
// The rows (bytes, seconds) and the participant count of cohort-allreduce-bench's output
// (its header line "# kvstore K, W worker(s) x D device(s) ..." and its table).
std::vector<std::pair<double, double>> ReadAllreduceBench(const std::string& path,
                                                          int* participants);

}  // namespace cohort::plan
