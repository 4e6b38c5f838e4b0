// cohort-allreduce-bench: the bandwidth of a kvstore's PushPull (an allreduce over every device of
// every worker), as a table in the style of nccl-tests.
//   cohort-allreduce-bench [--kvstore local|mpi|device|nccl] [--devices cpu:0,cpu:1]
//                          [--min-bytes 4K] [--max-bytes 256M] [--factor 2] [--iters 20]
//                          [--warmup 5] [--out-of-place]
// Under mpirun with --kvstore mpi every process is one worker; rank 0 prints. For each size
// every device of worker r holds r * devices + d + 1 times a pattern of the element's position
// and pushes it; the pulled result must be the sum over all participants, element by element,
// and elements that differ are counted in #wrong (exit
// code 1 when any are; 2 for bad arguments).
// The PushPull is in place (the outputs are the values, as the trainer reduces gradients when
// the devices update, and as Horovod's allreduce_ does) unless --out-of-place gives separate
// outputs. Before each timed PushPull the values are refilled and the workers meet at a barrier,
// neither timed; time(us) is the median over iterations of the mean over workers, as
// bench/mpi_allreduce_peer reports it.
// algbw = size / time; busbw = algbw * 2 (n - 1) / n for n participants, the bandwidth a ring
// allreduce needs on each link (nccl-tests' definition), comparable across participant counts.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/tool_main.h"
#include "base/context.h"
#include "base/error.h"
#include "kvstore/kvstore.h"

namespace cohort {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMaxBytes = int64_t{1} << 40;

// "4096", "4K", "256M", "1G" (powers of 1024) in bytes, at most kMaxBytes.
int64_t ParseBytes(const std::string& text) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string suffix = text.substr(used);
  const int64_t unit = suffix.empty()  ? 1
                       : suffix == "K" ? int64_t{1} << 10
                       : suffix == "M" ? int64_t{1} << 20
                       : suffix == "G" ? int64_t{1} << 30
                                       : 0;
  int64_t bytes = 0;
  if (used == 0 || unit == 0 || value <= 0 || __builtin_mul_overflow(value, unit, &bytes) ||
      bytes > kMaxBytes) {
    throw Error("size '" + text +
                    "': expected a positive number of bytes with an optional K, M or G, at most "
                    "1024G",
                __FILE__, __LINE__);
  }
  return bytes;
}

struct BenchOptions {
  std::string kvstore = "local", devices = "cpu:0,cpu:1", min_bytes = "4K", max_bytes = "256M";
  double factor = 2;
  int iters = 20, warmup = 5;
  bool out_of_place = false;
  std::string compression = "none";  // Note [Gradient compression]: the type on the wire
};

struct Setup {
  std::vector<Context> contexts;
  int64_t min_bytes = 0, max_bytes = 0;
  std::unique_ptr<KVStore> kv;
};

// Everything that depends on the command line alone; an error here is bad input.
Setup Prepare(const BenchOptions& o) {
  Setup s;
  s.contexts = ParseContexts(o.devices);
  if (s.contexts.size() > 1024) {
    throw Error("--devices '" + o.devices + "': more than 1024 devices", __FILE__, __LINE__);
  }
  CheckKVStoreDevices(o.kvstore, s.contexts);  // the kind's rules: nccl takes GPUs, ...
  s.min_bytes = ParseBytes(o.min_bytes);
  s.max_bytes = ParseBytes(o.max_bytes);
  if (s.min_bytes > s.max_bytes || !(o.factor > 1) || !std::isfinite(o.factor) || o.iters < 1 ||
      o.warmup < 0) {
    throw Error("need --min-bytes <= --max-bytes, --factor > 1, --iters >= 1, --warmup >= 0",
                __FILE__, __LINE__);
  }
  s.kv = KVStore::Create(o.kvstore);
  const std::optional<DType> wire = GradientCompressionWire(o.compression);
  if (!wire) {
    throw Error(
        "--gradient-compression '" + o.compression + "': expected none, bfloat16 or float16",
        __FILE__, __LINE__);
  }
  if (*wire != DType::kFloat32) s.kv->SetGradientCompression(*wire);
  return s;
}

// The median over iterations of the mean over workers: `times` holds each iteration's seconds
// summed over the workers. A median, because a preempted iteration would move a mean far.
double MedianIteration(std::vector<double>& times, int workers) {
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  return median / workers;
}

// Prints the table; returns the number of wrong elements over all sizes and workers.
int64_t Run(const BenchOptions& o, Setup& s) {
  const std::vector<Context>& contexts = s.contexts;
  KVStore* kv = s.kv.get();
  const int64_t min_bytes = s.min_bytes, max_bytes = s.max_bytes;
  const int devices = static_cast<int>(contexts.size());
  const int participants = kv->num_workers() * devices;
  const bool lead = kv->rank() == 0;
  const double want = participants * (participants + 1) / 2.0;  // sum of 1..n
  // Participant p holds (p + 1) * (i % period + 1) at element i: a segment summed into the
  // wrong place is counted, and the sums stay whole numbers exact in the type on the wire
  // (below 2^24 in float32, 2^11 in float16, 2^8 in bfloat16).
  const double exact = o.compression == "bfloat16"  ? 1 << 8
                       : o.compression == "float16" ? 1 << 11
                                                    : 1 << 24;
  int64_t period = 1;
  for (int64_t prime : {1021, 251, 61, 7, 3}) {
    if (want * static_cast<double>(prime) < exact) {
      period = prime;
      break;
    }
  }
  if (lead) {
    std::printf("# kvstore %s, %d worker(s) x %d device(s) (%s), %d iterations after %d warm-up\n",
                o.kvstore.c_str(), kv->num_workers(), devices, o.devices.c_str(), o.iters,
                o.warmup);
    std::printf("#%11s %12s %6s %10s %12s %12s %7s\n", "size", "count", "type", "time(us)",
                "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  }
  int key = 0;
  int64_t total_wrong = 0;
  for (double size = static_cast<double>(min_bytes);
       size <= static_cast<double>(max_bytes) * 1.0001; size *= o.factor, ++key) {
    const int64_t count = std::max<int64_t>(1, static_cast<int64_t>(size) / 4);
    const int64_t bytes = count * 4;
    std::vector<NDArray> values, outs, patterns;
    for (int d = 0; d < devices; ++d) {
      std::vector<float> pattern(static_cast<size_t>(count));
      const float base = static_cast<float>(kv->rank() * devices + d + 1);
      for (int64_t i = 0; i < count; ++i) pattern[i] = base * static_cast<float>(i % period + 1);
      patterns.push_back(NDArray::FromVector<float>({count}, pattern));
      values.push_back(NDArray::Empty({count}, DType::kFloat32, contexts[d]));
      outs.push_back(o.out_of_place ? NDArray::Zeros({count}, DType::kFloat32, contexts[d])
                                    : values.back());
    }
    kv->Init({key}, {NDArray::Zeros({count})});
    const std::vector<int> keys = {key};
    const std::vector<std::vector<NDArray>> value_lists = {values}, out_lists = {outs};
    auto push_pull = [&] {  // returns the seconds of the PushPull alone
      for (int d = 0; d < devices; ++d) patterns[d].CopyTo(values[d]);
      kv->Barrier();
      const auto start = Clock::now();
      kv->PushPull(keys, value_lists, out_lists);
      return std::chrono::duration<double>(Clock::now() - start).count();
    };
    for (int i = 0; i < o.warmup; ++i) push_pull();
    std::vector<double> times(static_cast<size_t>(o.iters));
    for (double& t : times) t = push_pull();
    kv->SumAcrossWorkers(times);
    const double seconds = MedianIteration(times, kv->num_workers());
    int64_t wrong = 0;
    for (const NDArray& out : outs) {
      const std::vector<float> got = out.ToVector<float>();
      for (int64_t i = 0; i < count; ++i)
        wrong += got[i] != static_cast<float>(want * static_cast<double>(i % period + 1));
    }
    std::vector<double> sum = {static_cast<double>(wrong)};
    kv->SumAcrossWorkers(sum);
    total_wrong += static_cast<int64_t>(sum[0]);
    const double algbw = static_cast<double>(bytes) / seconds / 1e9;
    const double busbw = algbw * 2.0 * (participants - 1) / participants;
    if (lead) {
      std::printf("%12lld %12lld %6s %10.1f %12.3f %12.3f %7lld\n", static_cast<long long>(bytes),
                  static_cast<long long>(count),
                  o.compression == "none"      ? "float"
                  : o.compression == "float16" ? "fp16"
                                               : "bf16",
                  seconds * 1e6, algbw, busbw, static_cast<long long>(sum[0]));
    }
  }
  if (lead) std::printf("# wrong elements in all: %lld\n", static_cast<long long>(total_wrong));
  return total_wrong;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Allreduce bandwidth of a kvstore (nccl-tests style)"};
  cohort::BenchOptions o;
  app.add_option("--kvstore", o.kvstore, "local, mpi (dist_sync), device or nccl");
  app.add_option("--devices", o.devices, "devices of each worker, e.g. cpu:0,cpu:1 or gpu:0-3");
  app.add_option("--min-bytes", o.min_bytes, "smallest size (bytes; K, M, G suffixes)");
  app.add_option("--max-bytes", o.max_bytes, "largest size");
  app.add_option("--factor", o.factor, "size multiplier between rows");
  app.add_option("--iters", o.iters, "timed iterations per size");
  app.add_option("--warmup", o.warmup, "untimed iterations per size");
  app.add_flag("--out-of-place", o.out_of_place, "pull into separate outputs (not the values)");
  app.add_option("--gradient-compression", o.compression,
                 "none, bfloat16 or float16: the type sums cross between workers in (the "
                 "bandwidths count float32 bytes)");
  if (const std::optional<int> stop = cohort::ParseCommandLine(app, argc, argv)) return *stop;
  cohort::Setup setup;
  try {
    setup = cohort::Prepare(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cohort-allreduce-bench: %s\n", e.what());
    return 2;
  }
  try {
    return cohort::Run(o, setup) == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cohort-allreduce-bench: %s\n", e.what());
    return 1;
  }
}
