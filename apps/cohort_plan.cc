// cohort-plan: how will this job scale? Predicts the step time, the exposed communication and
// the scaling efficiency of data-parallel training on 1 ... N devices (Note [Scaling model]).
//   cohort-plan --model NAME|SYMBOL.json --shape data=B,C,H,W --devices N
//               [--devices-per-host K] [--intra-host-gbps X] [--inter-host-gbps Y]
//               [--intra-host-latency-us A] [--inter-host-latency-us B]
//               [--device-speed SAMPLES_PER_S | --device-tflops F [--efficiency E]]
//               [--profile PROFILE.tsv] [--calibrate ALLREDUCE_BENCH.txt]
//               [--bucket-mb M] [--flat | --hierarchical] [--algorithm ring|tree|auto]
//               [--no-overlap] [--preset this-host|gpu-cluster] [--json]
// The batch in --shape is per device (weak scaling, as Horovod reports it). --profile takes
// per-op times from `cohort-train --profile` output; --calibrate fits the intra-host link's
// latency and bandwidth to `cohort-allreduce-bench` output. One table row per device count (or
// one JSON object per line with --json). Exit code 2 with one line on bad input.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "apps/model_shapes.h"
#include "apps/scaling_plan.h"
#include "base/env.h"
#include "base/error.h"

namespace cohort {
namespace {

struct Options {
  std::string model, preset, profile, calibrate, algorithm = "auto";
  std::vector<std::string> shapes;
  int devices = 0, devices_per_host = 0;
  double intra_gbps = 0, inter_gbps = 0, intra_latency_us = -1, inter_latency_us = -1;
  double device_speed = 0, device_tflops = 0, efficiency = 0.5, bucket_mb = 0;
  bool flat = false, hierarchical = false, no_overlap = false, json = false;
};

// Note [Plan presets]
// this-host: 2 ranks on this machine's 2 cores over Open MPI's shared memory, the link fitted by
// --calibrate from `mpirun -np 2 cohort-allreduce-bench --kvstore mpi --devices cpu:0` (64 KB to
// 64 MB): alpha 4.3 us, beta 6.76 GB/s; the mpi kvstore's default of no overlap on CPU devices.
// gpu-cluster: nominal link rates, not measured here: 8 GPUs a host on NVLink (150 GB/s,
// 5 us), hosts on 100 Gb/s InfiniBand (12 GB/s, 10 us), hierarchical, with overlap.
void ApplyPreset(const std::string& name, plan::Topology* t, plan::PlanOptions* o) {
  if (name == "this-host") {
    t->devices_per_host = 2;
    t->intra = {.latency_s = 4.3e-6, .bytes_per_s = 6.76e9};
    t->inter = t->intra;
    o->overlap = false;
  } else if (name == "gpu-cluster") {
    t->devices_per_host = 8;
    t->intra = {.latency_s = 5e-6, .bytes_per_s = 150e9};
    t->inter = {.latency_s = 10e-6, .bytes_per_s = 12e9};
    t->hierarchical = true;
  } else {
    throw ConfigError("--preset '" + name + "': expected this-host or gpu-cluster", __FILE__,
                      __LINE__);
  }
}

int Run(const Options& o) {
  plan::Topology topology;
  plan::PlanOptions options;
  options.bucket_bytes = static_cast<double>(Env().kvstore_bucket_mb) * (1 << 20);
  topology.intra = {.latency_s = 5e-6, .bytes_per_s = 10e9};
  topology.inter = {.latency_s = 50e-6, .bytes_per_s = 1.25e9};
  if (!o.preset.empty()) ApplyPreset(o.preset, &topology, &options);
  if (o.devices < 1) throw ConfigError("--devices must be at least 1", __FILE__, __LINE__);
  if (o.devices_per_host > 0) topology.devices_per_host = o.devices_per_host;
  if (o.preset.empty() && o.devices_per_host <= 0) topology.devices_per_host = o.devices;
  if (o.intra_gbps > 0) topology.intra.bytes_per_s = o.intra_gbps * 1e9;
  if (o.inter_gbps > 0) topology.inter.bytes_per_s = o.inter_gbps * 1e9;
  if (o.intra_latency_us >= 0) topology.intra.latency_s = o.intra_latency_us * 1e-6;
  if (o.inter_latency_us >= 0) topology.inter.latency_s = o.inter_latency_us * 1e-6;
  if (!o.calibrate.empty()) {
    int participants = 0;
    const auto timings = plan::ReadAllreduceBench(o.calibrate, &participants);
    topology.intra = plan::FitLink(timings, participants);
  }
  if (o.flat && o.hierarchical) {
    throw ConfigError("--flat and --hierarchical exclude each other", __FILE__, __LINE__);
  }
  if (o.flat) topology.hierarchical = false;
  if (o.hierarchical) topology.hierarchical = true;
  if (o.bucket_mb > 0) options.bucket_bytes = o.bucket_mb * (1 << 20);
  if (o.no_overlap) options.overlap = false;
  options.algorithm = o.algorithm == "ring"   ? plan::Algorithm::kRing
                      : o.algorithm == "tree" ? plan::Algorithm::kTree
                                              : plan::Algorithm::kAuto;
  if (o.device_speed > 0 && o.device_tflops > 0) {
    throw ConfigError("--device-speed and --device-tflops exclude each other", __FILE__, __LINE__);
  }
  const Symbol net = LoadModel(o.model);
  const std::map<std::string, Shape> inputs = ParseShapeOptions(o.shapes);
  if (inputs.empty()) throw ConfigError("give the input's --shape", __FILE__, __LINE__);
  const double flops = (o.device_tflops > 0 ? o.device_tflops : 1.0) * 1e12 * o.efficiency;
  plan::ModelCost model = plan::AnalyzeModel(net, inputs, flops);
  if (o.device_speed > 0) {
    plan::ScaleCompute(&model, static_cast<double>(model.batch) / o.device_speed);
  }
  if (!o.profile.empty()) {
    const int matched = plan::ApplyProfile(&model, o.profile);
    if (!o.json) std::printf("# profile: %d of %zu ops timed\n", matched, model.layers.size());
  }
  double param_bytes = 0;
  for (int64_t b : model.key_bytes) param_bytes += static_cast<double>(b);
  if (!o.json) {
    std::printf(
        "# %s: %zu parameter arrays, %.1f MB of gradients; batch %lld per device; "
        "%d devices per host\n",
        o.model.c_str(), model.key_bytes.size(), param_bytes / 1e6,
        static_cast<long long>(model.batch), topology.devices_per_host);
    std::printf("# intra-host %.1f us, %.2f GB/s; inter-host %.1f us, %.2f GB/s; %s; %s\n",
                topology.intra.latency_s * 1e6, topology.intra.bytes_per_s / 1e9,
                topology.inter.latency_s * 1e6, topology.inter.bytes_per_s / 1e9,
                topology.hierarchical ? "hierarchical" : "flat",
                options.overlap ? "overlapped with backward" : "after backward");
    std::printf("%8s %6s %10s %16s %11s %14s\n", "devices", "hosts", "step_ms", "exposed_comm_ms",
                "efficiency", "samples_per_s");
  }
  for (int n = 1; n <= o.devices; ++n) {
    if (o.devices > 16 && n != o.devices && (n & (n - 1)) != 0) continue;  // powers of 2 and N
    const plan::StepPrediction p = plan::PredictStep(model, n, topology, options);
    const double samples = static_cast<double>(model.batch) * n / p.step_s;
    if (o.json) {
      std::printf(
          "{\"devices\":%d,\"hosts\":%d,\"step_ms\":%.3f,\"exposed_comm_ms\":%.3f,"
          "\"efficiency\":%.4f,\"samples_per_s\":%.1f}\n",
          n, p.hosts, p.step_s * 1e3, p.exposed_comm_s * 1e3, p.efficiency, samples);
    } else {
      std::printf("%8d %6d %10.3f %16.3f %10.0f%% %14.1f\n", n, p.hosts, p.step_s * 1e3,
                  p.exposed_comm_s * 1e3, p.efficiency * 100, samples);
    }
  }
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Predict how data-parallel training scales (Note [Scaling model])"};
  cohort::Options o;
  app.add_option("--model", o.model,
                 "symbol JSON file, or a zoo model: mlp, lenet, resnetN, "
                 "mobilenet, gpt")
      ->required();
  app.add_option("--shape", o.shapes, "input shape with the batch per device, NAME=DIMS");
  app.add_option("--devices", o.devices, "the largest device count")->required();
  app.add_option("--devices-per-host", o.devices_per_host, "devices in one host");
  app.add_option("--intra-host-gbps", o.intra_gbps, "link bandwidth inside a host, GB/s");
  app.add_option("--inter-host-gbps", o.inter_gbps, "link bandwidth between hosts, GB/s");
  app.add_option("--intra-host-latency-us", o.intra_latency_us, "link latency inside a host");
  app.add_option("--inter-host-latency-us", o.inter_latency_us, "link latency between hosts");
  app.add_option("--device-speed", o.device_speed, "measured samples/s of one device");
  app.add_option("--device-tflops", o.device_tflops, "a device's float32 TFLOP/s");
  app.add_option("--efficiency", o.efficiency, "the share of --device-tflops kernels reach");
  app.add_option("--profile", o.profile, "per-op times: the output of cohort-train --profile");
  app.add_option("--calibrate", o.calibrate, "intra-host link from cohort-allreduce-bench output");
  app.add_option("--bucket-mb", o.bucket_mb, "gradient bucket size (COHORT_KVSTORE_BUCKET_MB)");
  app.add_flag("--flat", o.flat, "one ring over every device");
  app.add_flag("--hierarchical", o.hierarchical, "reduce inside hosts, then across hosts");
  app.add_option("--algorithm", o.algorithm, "ring, tree or auto")
      ->check(CLI::IsMember({"ring", "tree", "auto"}));
  app.add_flag("--no-overlap", o.no_overlap, "reduce after backward instead of during it");
  app.add_option("--preset", o.preset, "this-host or gpu-cluster (Note [Plan presets])");
  app.add_flag("--json", o.json, "one JSON object per device count");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return cohort::Run(o);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "cohort-plan: %s\n", e.what());
    return 2;
  }
}
