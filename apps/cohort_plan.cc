// cohort-plan: how will this job scale? Predicts the step time, the exposed communication and
// the scaling efficiency of data-parallel training on 1 ... N devices (Note [Scaling model]).
//   cohort-plan --model NAME|SYMBOL.json --shape data=B,C,H,W --devices N
//               [--devices-per-host K] [--intra-host-gbps X] [--inter-host-gbps Y]
//               [--intra-host-latency-us A] [--inter-host-latency-us B]
//               [--device-speed SAMPLES_PER_S | --device-tflops F [--efficiency E]]
//               [--profile PROFILE.tsv] [--calibrate ALLREDUCE_BENCH.txt]
//               [--bucket-mb M] [--flat | --hierarchical] [--algorithm ring|tree|auto]
//               [--no-overlap] [--preset NAME] [--json] [--plot FILE.png]
// The batch in --shape is per device (weak scaling, as Horovod reports it). --profile takes
// per-op times from `cohort-train --profile` output; --calibrate fits the intra-host link's
// latency and bandwidth to `cohort-allreduce-bench` output. One table row per device count (or
// one JSON object per line with --json). Exit code 2 with one line on bad input.
#include <CLI/CLI.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <vector>

#include "apps/link_units.h"
#include "apps/model_shapes.h"
#include "apps/scaling_plan.h"
#include "apps/tool_main.h"
#include "base/env.h"
#include "base/error.h"
#include "kvstore/kvstore.h"

namespace cohort {
namespace {

struct PlanArgs {
  std::string model, preset, profile, calibrate, algorithm = "auto";
  std::vector<std::string> shapes;
  int devices = 0, devices_per_host = 0;
  // Links with their units (apps/link_units.h): "100Gbit", "12.5GB/s"; "3us". Empty: the
  // preset's or the default's.
  std::string intra_host, inter_host, intra_latency, inter_latency;
  double device_speed = 0, device_tflops = 0, efficiency = 0.5, bucket_mb = 0;
  std::string plot, compression = "none";
  bool flat = false, hierarchical = false, no_overlap = false, json = false;
};

// Draws efficiency and step time against the device count into a PNG with gnuplot (a child
// process fed the rows inline), so the planner needs no plotting library.
// The title's lines each stay inside single quotes, joined by gnuplot's string concatenation
// with a double-quoted line break.
void Plot(const std::string& path, const std::vector<std::string>& title_lines,
          const std::vector<plan::StepPrediction>& rows) {
  // The path and title go into gnuplot's script inside single quotes, which nothing escapes: a
  // quote there would end the string and run the rest as gnuplot commands.
  if (path.find_first_of("'\n\r") != std::string::npos) {
    throw ConfigError("--plot '" + path + "': a file name with a quote or a line break",
                      __FILE__, __LINE__);
  }
  std::string title;
  for (std::string line : title_lines) {
    for (char& c : line) {
      if (c == '\'' || c == '\n' || c == '\r') c = '_';
    }
    title += (title.empty() ? "'" : ".\"\\n\".'") + line + "'";
  }
  COHORT_CHECK(std::ofstream(path)) << "--plot: cannot write '" << path << "'";
  // gnuplot's messages go to stderr; its stdout is where it would write the image on failure.
  FILE* gnuplot = popen("gnuplot > /dev/null", "w");
  COHORT_CHECK(gnuplot) << "--plot: cannot start gnuplot (apt-get install gnuplot-nox)";
  std::string script = "set terminal pngcairo size 900,540\nset output '" + path + "'\n";
  script += "set title " + title + " noenhanced\nset xlabel 'devices'\nset logscale x 2\n";
  script += "set ylabel 'scaling efficiency (%)'\nset yrange [0:105]\n";
  script += "set y2label 'step time (ms)'\nset y2tics\nset ytics nomirror\nset y2range [0:*]\n";
  script += "set key bottom left\n";
  script += "set grid\nplot '-' using 1:2 with linespoints lw 2 title 'efficiency', ";
  script += "'-' using 1:2 axes x1y2 with linespoints dt 2 title 'step time'\n";
  for (int column = 0; column < 2; ++column) {
    for (const plan::StepPrediction& r : rows) {
      script += std::to_string(r.devices) + " " +
                std::to_string(column == 0 ? r.efficiency * 100 : r.step_s * 1e3) + "\n";
    }
    script += "e\n";
  }
  std::fputs(script.c_str(), gnuplot);
  const int status = pclose(gnuplot);
  COHORT_CHECK(status == 0) << "--plot '" << path << "': gnuplot failed (exit code "
                            << WEXITSTATUS(status) << "; is gnuplot-nox installed?)";
}

// Note [Plan presets]
// A preset fixes a topology and, for the zoo models it knows, one device's speed and the batch
// per device (used when --device-speed and --shape are not given). Its constants come from the
// hardware's published figures or our own measurements, never from the scaling figures a preset
// is checked against (scripts/validate-plan-published.sh).
// - this-host: 2 ranks on this machine's 2 cores over Open MPI's shared memory, the link fitted
//   by --calibrate from `mpirun -np 2 cohort-allreduce-bench --kvstore mpi --devices cpu:0`
//   (64 KB to 64 MB): alpha 4.3 us, beta 6.76 GB/s; the mpi kvstore's default of no overlap on
//   CPU devices.
// - gpu-cluster: nominal link rates, not measured: 8 GPUs a host on NVLink (150 GB/s, 5 us),
//   hosts on 100 Gb/s InfiniBand (12 GB/s, 10 us), hierarchical, with overlap.
// - horovod-pascal: Horovod's published benchmark (its README: "128 servers with 4 Pascal GPUs
//   each connected by RoCE-capable 25 Gbit/s network", TensorFlow's tf_cnn_benchmarks, batch
//   64, NCCL; tensor fusion's 64 MB buffer, a flat ring). Inter-host: 25 Gbit/s at line rate
//   (3.125 GB/s), 10 us (assumed: RoCE plus NCCL's per-step work). Inside a host: PCIe 3.0 x16
//   (12 GB/s, 5 us). One GPU's images/s at batch 64: Inception V3 134.4, ResNet-101 119.4,
//   VGG-16 130.9 (Horovod's 2017 README, "Baseline single-GPU" on the same RoCE cluster),
//   ResNet-50 219 (TensorFlow's benchmark page, P100, batch 64, synthetic data).
// - horovod-mxnet: the runs of Horovod's MXNet pull request (#542: ResNet-50, float32, 8 to
//   256 GPUs, with and without hierarchical all-reduce, efficiency against 8 GPUs). The pull
//   request names no hardware; we take AWS p3.16xlarge, which its design document names: 8 V100
//   a host on NVLink (130 GB/s, 5 us), 25 Gbit/s Ethernet between hosts over TCP (3.125 GB/s,
//   50 us, assumed). One GPU: 384 images/s, its 8-GPU row (3072) over 8; batch 128, the default
//   of the example it added (examples/mxnet_imagenet_resnet50.py). Flat unless --hierarchical.
// A zoo model as a preset's benchmark ran it: square images of `side` pixels, one device's speed.
struct BenchmarkedModel {
  int64_t side;
  double samples_per_s;
};

struct Preset {
  const char* name;
  plan::Topology topology;
  bool overlap;
  double bucket_mb;  // 0: COHORT_KVSTORE_BUCKET_MB
  int64_t batch;     // per device, for the models below
  std::map<std::string, BenchmarkedModel> models;
};

const std::vector<Preset>& Presets() {
  static const std::vector<Preset> presets = {
      {"this-host",
       {.devices_per_host = 2, .intra = {4.3e-6, 6.76e9}, .inter = {4.3e-6, 6.76e9}},
       false,
       0,
       0,
       {}},
      {"gpu-cluster",
       {.devices_per_host = 8,
        .intra = {5e-6, 150e9},
        .inter = {10e-6, 12e9},
        .hierarchical = true},
       true,
       0,
       0,
       {}},
      {"horovod-pascal",
       {.devices_per_host = 4, .intra = {5e-6, 12e9}, .inter = {10e-6, 3.125e9}},
       true,
       64,
       64,
       {{"inceptionv3", {299, 134.4}},
        {"resnet101", {224, 119.4}},
        {"vgg16", {224, 130.9}},
        {"resnet50", {224, 219}}}},
      {"horovod-mxnet",
       {.devices_per_host = 8, .intra = {5e-6, 130e9}, .inter = {50e-6, 3.125e9}},
       true,
       64,
       128,
       {{"resnet50", {224, 384}}}},
  };
  return presets;
}

const Preset& FindPreset(const std::string& name) {
  std::string names;
  for (const Preset& p : Presets()) {
    if (p.name == name) return p;
    names += std::string(names.empty() ? "" : ", ") + p.name;
  }
  throw ConfigError("--preset '" + name + "': expected one of " + names, __FILE__, __LINE__);
}

// The links, topology and bucketing: the preset's, then the options'.
void NetworkOf(const PlanArgs& o, const Preset* preset, plan::Topology* topology_out,
               plan::PlanOptions* options_out) {
  plan::Topology& topology = *topology_out;
  plan::PlanOptions& options = *options_out;
  options.bucket_bytes = static_cast<double>(Env().kvstore_bucket_mb) * (1 << 20);
  topology.intra = {.latency_s = 5e-6, .bytes_per_s = 10e9};
  topology.inter = {.latency_s = 50e-6, .bytes_per_s = 1.25e9};
  if (preset) {
    topology = preset->topology;
    options.overlap = preset->overlap;
    if (preset->bucket_mb > 0) options.bucket_bytes = preset->bucket_mb * (1 << 20);
  }
  if (o.devices < 1) throw ConfigError("--devices must be at least 1", __FILE__, __LINE__);
  const std::optional<DType> wire = GradientCompressionWire(o.compression);
  if (!wire) {
    throw ConfigError(
        "--gradient-compression '" + o.compression + "': expected none, bfloat16 or float16",
        __FILE__, __LINE__);
  }
  // Note [Gradient compression]: the wire's bytes per float32 byte.
  options.wire_fraction = static_cast<double>(DTypeSize(*wire)) / sizeof(float);
  if (o.devices_per_host > 0) topology.devices_per_host = o.devices_per_host;
  if (o.preset.empty() && o.devices_per_host <= 0) topology.devices_per_host = o.devices;
  if (!o.intra_host.empty())
    topology.intra.bytes_per_s = ParseBandwidth(o.intra_host, "--intra-host");
  if (!o.inter_host.empty())
    topology.inter.bytes_per_s = ParseBandwidth(o.inter_host, "--inter-host");
  if (!o.intra_latency.empty()) {
    topology.intra.latency_s = ParseLatency(o.intra_latency, "--intra-host-latency");
  }
  if (!o.inter_latency.empty()) {
    topology.inter.latency_s = ParseLatency(o.inter_latency, "--inter-host-latency");
  }
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
}

// The model's layers and gradients at its input shapes, its compute scaled to the device.
plan::ModelCost ModelCostOf(const PlanArgs& o, const Preset* preset) {
  if (o.device_speed > 0 && o.device_tflops > 0) {
    throw ConfigError("--device-speed and --device-tflops exclude each other", __FILE__, __LINE__);
  }
  const Symbol net = LoadModel(o.model);
  std::map<std::string, Shape> inputs = ParseShapeOptions(o.shapes);
  double device_speed = o.device_speed;
  if (preset && preset->models.count(o.model)) {
    const BenchmarkedModel& m = preset->models.at(o.model);
    if (inputs.empty()) inputs["data"] = Shape({preset->batch, 3, m.side, m.side});
    if (device_speed <= 0 && o.device_tflops <= 0) device_speed = m.samples_per_s;
  }
  if (inputs.empty()) throw ConfigError("give the input's --shape", __FILE__, __LINE__);
  const double flops = (o.device_tflops > 0 ? o.device_tflops : 1.0) * 1e12 * o.efficiency;
  plan::ModelCost model = plan::AnalyzeModel(net, inputs, flops);
  if (device_speed > 0) {
    plan::ScaleCompute(&model, static_cast<double>(model.batch) / device_speed);
  }
  if (!o.profile.empty()) {
    const int matched = plan::ApplyProfile(&model, o.profile);
    if (!o.json) std::printf("# profile: %d of %zu ops timed\n", matched, model.layers.size());
  }
  return model;
}

// What the prediction assumes of the links and the schedule, for the header and the plot.
std::string Assumptions(const plan::Topology& topology, const plan::PlanOptions& options) {
  char text[256];
  std::snprintf(text, sizeof(text),
                "intra-host %.1f us, %.2f GB/s; inter-host %.1f us, %.2f GB/s; %s; %s%s",
                topology.intra.latency_s * 1e6, topology.intra.bytes_per_s / 1e9,
                topology.inter.latency_s * 1e6, topology.inter.bytes_per_s / 1e9,
                topology.hierarchical ? "hierarchical" : "flat",
                options.overlap ? "overlapped with backward" : "after backward",
                options.wire_fraction < 1 ? "; gradients sent in 16 bits" : "");
  return text;
}

void PrintHeader(const PlanArgs& o, const plan::ModelCost& model, const plan::Topology& topology,
                 const plan::PlanOptions& options) {
  double param_bytes = 0;
  for (int64_t b : model.key_bytes) param_bytes += static_cast<double>(b);
  std::printf(
      "# %s: %zu parameter arrays, %.1f MB of gradients; batch %lld per device; "
      "%d devices per host\n",
      o.model.c_str(), model.key_bytes.size(), param_bytes / 1e6,
      static_cast<long long>(model.batch), topology.devices_per_host);
  std::printf("# %s\n", Assumptions(topology, options).c_str());
  std::printf("%8s %6s %10s %16s %11s %14s\n", "devices", "hosts", "step_ms", "exposed_comm_ms",
              "efficiency", "samples_per_s");
}

int Run(const PlanArgs& o) {
  const Preset* preset = o.preset.empty() ? nullptr : &FindPreset(o.preset);
  plan::Topology topology;
  plan::PlanOptions options;
  NetworkOf(o, preset, &topology, &options);
  const plan::ModelCost model = ModelCostOf(o, preset);
  if (!o.json) PrintHeader(o, model, topology, options);
  std::vector<plan::StepPrediction> rows;
  for (int n = 1; n <= o.devices; ++n) {
    if (o.devices > 16 && n != o.devices && (n & (n - 1)) != 0) continue;  // powers of 2 and N
    const plan::StepPrediction p = plan::PredictStep(model, n, topology, options);
    rows.push_back(p);
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
  if (!o.plot.empty()) {
    // The title names the assumptions the curve rests on, as the text header does.
    Plot(o.plot,
         {o.model + ", batch " + std::to_string(model.batch) + " per device, " +
              std::to_string(topology.devices_per_host) + " devices a host",
          Assumptions(topology, options)},
         rows);
  }
  return 0;
}

}  // namespace
}  // namespace cohort

namespace {
// CLI11's PositiveNumber lets NaN through (NaN <= 0 is false).
CLI::Validator FiniteAtLeast(double low, bool inclusive) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < low ||
            (!inclusive && v == low)) {
          char bound[32];
          std::snprintf(bound, sizeof(bound), "%g", low);
          return "expected a finite number " + std::string(inclusive ? ">= " : "> ") + bound +
                 ", got '" + text + "'";
        }
        return "";
      },
      inclusive ? "NUMBER >= 0" : "NUMBER > 0");
}
const CLI::Validator kPositive = FiniteAtLeast(0, false);
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Predict how data-parallel training scales (Note [Scaling model])"};
  cohort::PlanArgs o;
  app.add_option("--model", o.model,
                 "symbol JSON file, or a zoo model: mlp, lenet, resnetN, vggN, "
                 "inceptionv3, mobilenet, gpt")
      ->required();
  app.add_option("--shape", o.shapes, "input shape with the batch per device, NAME=DIMS");
  // Values out of range are exit 2, not dropped for a default (negative bandwidths were).
  constexpr int kMaxDevices = 1 << 20;
  app.add_option("--devices", o.devices, "the largest device count")
      ->required()
      ->check(CLI::Range(1, kMaxDevices));
  app.add_option("--devices-per-host", o.devices_per_host, "devices in one host")
      ->check(CLI::Range(1, kMaxDevices));
  app.add_option("--intra-host", o.intra_host,
                 "link bandwidth inside a host, with its unit: 450GB/s, 100Gbit");
  app.add_option("--inter-host", o.inter_host,
                 "link bandwidth between hosts, with its unit: 12.5GB/s, 100Gbit, 25Gbps");
  app.add_option("--intra-host-latency", o.intra_latency, "link latency inside a host: 3us");
  app.add_option("--inter-host-latency", o.inter_latency, "link latency between hosts: 5us");
  // The options before units: refused with the new form (a GB/s number read as Gbit/s was 8x off).
  for (const char* old : {"--intra-host-gbps", "--inter-host-gbps", "--intra-host-latency-us",
                          "--inter-host-latency-us"}) {
    const std::string name = old;
    const bool latency = name.ends_with("-us");
    const std::string now = name.substr(0, name.rfind('-'));
    app.add_option(name)->group("")->check(CLI::Validator(
        [name, now, latency](std::string& text) -> std::string {
          return name + " is now " + now + " with a unit: " + now + " " + text +
                 (latency ? "us" : "GB/s");
        },
        ""));
  }
  app.add_option("--device-speed", o.device_speed, "measured samples/s of one device")
      ->check(kPositive);
  app.add_option("--device-tflops", o.device_tflops, "a device's float32 TFLOP/s")
      ->check(kPositive);
  app.add_option("--efficiency", o.efficiency, "the share of --device-tflops kernels reach")
      ->check(CLI::Range(1e-6, 1.0));
  app.add_option("--profile", o.profile, "per-op times: the output of cohort-train --profile");
  app.add_option("--calibrate", o.calibrate, "intra-host link from cohort-allreduce-bench output");
  app.add_option("--bucket-mb", o.bucket_mb, "gradient bucket size (COHORT_KVSTORE_BUCKET_MB)")
      ->check(kPositive);
  app.add_flag("--flat", o.flat, "one ring over every device");
  app.add_flag("--hierarchical", o.hierarchical, "reduce inside hosts, then across hosts");
  app.add_option("--algorithm", o.algorithm, "ring, tree or auto")
      ->check(CLI::IsMember({"ring", "tree", "auto"}));
  app.add_flag("--no-overlap", o.no_overlap, "reduce after backward instead of during it");
  app.add_option("--gradient-compression", o.compression,
                 "none, bfloat16 or float16: gradients cross the links in half the bytes");
  app.add_option("--preset", o.preset,
                 "this-host, gpu-cluster, horovod-pascal or horovod-mxnet (Note [Plan presets])");
  app.add_flag("--json", o.json, "one JSON object per device count");
  app.add_option("--plot", o.plot, "also draw efficiency and step time into FILE.png (gnuplot)");
  return cohort::ParseAndRun(app, argc, argv, "cohort-plan", [&] { return cohort::Run(o); });
}
